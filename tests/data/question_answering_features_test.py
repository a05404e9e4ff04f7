import collections
import importlib

import numpy as np
import pytest

from kbert.data import batched_tokenization
from kbert.data.question_answering_features import question_answering_features
from kbert.text import WordPieceTokenizer

# `kbert.data.question_answering_features` is also the function's name in the package.
featurizer_module = importlib.import_module("kbert.data.question_answering_features")
Example = collections.namedtuple("Example", "id title context question answers")

VOCABULARY = [
    "[PAD]",
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "[MASK]",
    "who",
    "wrote",
    "it",
    "?",
    "jose",
    ",",
    "quick",
    "##ly",
    ".",
    "a",
    "b",
    "c",
    "d",
    "e",
    "f",
    "g",
    "h",
]
WORDS = ["a", "b", "c", "d", "e", "f", "g", "h"]


@pytest.fixture(scope="module")
def tokenizer():
    return WordPieceTokenizer(VOCABULARY)


def _long_examples(count=3, words=50, seed=0):
    """Examples over one long context of single-token words, with answers of 1 to 4 words."""
    rng = np.random.default_rng(seed)
    context_words = list(rng.choice(WORDS, size=words))
    context = " ".join(context_words)
    word_starts = np.cumsum([0] + [len(w) + 1 for w in context_words])[:-1]
    examples = []
    for index in range(count):
        first = int(rng.integers(0, words - 4))
        last = first + int(rng.integers(0, 4))
        start = int(word_starts[first])
        text = context[start : int(word_starts[last]) + len(context_words[last])]
        examples.append(Example(f"q{index}", "", context, "Who wrote it?", ((text, start),)))
    return examples


def _bert_max_context(spans, position):
    """Original BERT's `_check_is_max_context`, spans as (start, length)."""
    best_score, best_index = None, None
    for index, (start, length) in enumerate(spans):
        end = start + length - 1
        if position < start or position > end:
            continue
        score = min(position - start, end - position) + 0.01 * length
        if best_score is None or score > best_score:
            best_score, best_index = score, index
    return best_index


def test_hand_built_row_has_exact_ids_segments_and_offsets(tokenizer):
    example = Example("q", "", "José wrote it, quickly.", "Who wrote it?", (("quickly", 15),))
    features = question_answering_features(
        [example], tokenizer, sequence_length=16, stride=2, max_question_length=4, training=True
    )
    assert features["token_ids"].tolist() == [[2, 5, 6, 7, 8, 3, 9, 6, 7, 10, 11, 12, 13, 3, 0, 0]]
    assert features["segment_ids"].tolist() == [[0] * 6 + [1] * 8 + [0] * 2]
    assert features["padding_mask"].tolist() == [[1] * 14 + [0] * 2]
    none = [-1] * 6
    assert features["context_start_offsets"].tolist() == [
        none + [0, 5, 11, 13, 15, 20, 22] + [-1] * 3
    ]
    assert features["context_end_offsets"].tolist() == [
        none + [4, 10, 13, 14, 20, 22, 23] + [-1] * 3
    ]
    assert features["max_context"].tolist() == [[False] * 6 + [True] * 7 + [False] * 3]
    assert features["example_index"].tolist() == [0]
    assert features["start_positions"].tolist() == [10]
    assert features["end_positions"].tolist() == [11]
    for key, value in features.items():
        assert value.dtype == (bool if key == "max_context" else np.int32), key


def test_question_is_truncated_and_evaluation_has_no_labels(tokenizer):
    example = Example("q", "", "José wrote it.", "Who wrote it?", ())
    features = question_answering_features(
        [example], tokenizer, sequence_length=12, stride=1, max_question_length=2
    )
    assert features["token_ids"].tolist() == [[2, 5, 6, 3, 9, 6, 7, 13, 3, 0, 0, 0]]
    assert "start_positions" not in features and "end_positions" not in features


def test_windows_cover_the_context_overlap_by_stride_and_share_max_context(tokenizer):
    examples = _long_examples(count=1, words=50)
    stride, capacity = 3, 16 - 4 - 3
    features = question_answering_features(
        examples, tokenizer, sequence_length=16, stride=stride, max_question_length=4
    )
    context_starts = tokenizer.tokenize_with_alignment(examples[0].context)["start_offsets"]
    token_of_offset = {int(s): i for i, s in enumerate(context_starts.numpy())}
    windows = []
    for row in range(len(features["token_ids"])):
        in_context = features["context_start_offsets"][row] >= 0
        tokens = [token_of_offset[s] for s in features["context_start_offsets"][row][in_context]]
        assert tokens == list(range(tokens[0], tokens[-1] + 1))  # contiguous
        assert (features["segment_ids"][row] == 1).sum() == len(tokens) + 1  # + final [SEP]
        windows.append(tokens)
    assert len(windows) > 3
    assert windows[0][0] == 0 and windows[-1][-1] == 49
    assert all(len(tokens) == capacity for tokens in windows[:-1])
    for previous, current in zip(windows[:-1], windows[1:], strict=True):
        assert len(set(previous) & set(current)) == stride
    spans = [(tokens[0], len(tokens)) for tokens in windows]
    counts = np.zeros(50, int)
    for row, tokens in enumerate(windows):
        flags = features["max_context"][row][features["context_start_offsets"][row] >= 0]
        for token, flag in zip(tokens, flags, strict=True):
            counts[token] += flag
            assert flag == (_bert_max_context(spans, token) == row)
    np.testing.assert_array_equal(counts, 1)


def test_answer_positions_map_back_to_the_answer_text(tokenizer):
    examples = _long_examples(count=12, words=40, seed=1)
    examples.append(
        Example(
            "tail",
            "",
            examples[0].context,
            "Who?",
            ((examples[0].context[-3:], len(examples[0].context) - 3),),
        )
    )
    features = question_answering_features(
        examples, tokenizer, sequence_length=16, stride=4, max_question_length=4, training=True
    )
    found = np.zeros(len(examples), int)
    for row, index in enumerate(features["example_index"]):
        start, end = features["start_positions"][row], features["end_positions"][row]
        text, start_char = examples[index].answers[0]
        offsets = features["context_start_offsets"][row], features["context_end_offsets"][row]
        inside = (
            (offsets[0] >= start_char) & (offsets[1] <= start_char + len(text)) & (offsets[0] >= 0)
        )
        answer_tokens = np.flatnonzero(inside)
        if start == 0:
            assert end == 0
            # Not the whole answer in this window.
            assert len(answer_tokens) < len(text.split())
            continue
        assert start <= end
        assert examples[index].context[offsets[0][start] : offsets[1][end]] == text
        assert answer_tokens.tolist() == list(range(start, end + 1))
        found[index] += 1
    assert (found >= 1).all()


def test_answer_split_by_a_window_boundary_gets_cls(tokenizer):
    # 6 single-token words, capacity 3 and no overlap: windows hold words 0-2 and 3-5.
    context = "a b c d e f"
    example = Example("split", "", context, "Who wrote it?", (("c d", 4),))
    features = question_answering_features(
        [example], tokenizer, sequence_length=10, stride=0, max_question_length=4, training=True
    )
    assert features["start_positions"].tolist() == [0, 0]
    assert features["end_positions"].tolist() == [0, 0]
    inside = Example("inside", "", context, "Who wrote it?", (("e f", 8),))
    features = question_answering_features(
        [inside], tokenizer, sequence_length=10, stride=0, max_question_length=4, training=True
    )
    assert features["start_positions"].tolist() == [0, 7]
    assert features["end_positions"].tolist() == [0, 8]


def test_answer_inside_a_subword_covers_the_whole_subword(tokenizer):
    example = Example("q", "", "José wrote it, quickly.", "Who?", (("ick", 17),))
    features = question_answering_features(
        [example], tokenizer, sequence_length=16, stride=0, max_question_length=4, training=True
    )
    start = features["start_positions"][0]
    assert start == features["end_positions"][0]
    assert features["token_ids"][0, start] == VOCABULARY.index("quick")


def test_batched_tokenization_gives_the_same_rows(tokenizer, monkeypatch):
    examples = _long_examples(count=5, words=20, seed=2)
    examples += [Example("other", "", "José wrote it.", "Who wrote it?", (("it", 11),))]
    expected = question_answering_features(
        examples, tokenizer, sequence_length=16, stride=2, max_question_length=4, training=True
    )
    monkeypatch.setattr(batched_tokenization, "_BATCH", 2)
    batched = question_answering_features(
        examples, tokenizer, sequence_length=16, stride=2, max_question_length=4, training=True
    )
    assert expected.keys() == batched.keys()
    for key in expected:
        np.testing.assert_array_equal(expected[key], batched[key])


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"sequence_length": 7, "max_question_length": 4}, r"sequence_length >= .* = 8; received"),
        ({"sequence_length": 12, "max_question_length": 4, "stride": 5}, r"= 5; received stride 5"),
        ({"sequence_length": 12, "max_question_length": 4, "stride": -1}, "stride"),
        ({"max_question_length": 0}, "max_question_length must be >= 1"),
        ({"stride": 1.5}, "stride must be an int"),
    ],
)
def test_bad_sizes_are_named(tokenizer, kwargs, message):
    example = Example("q", "", "José wrote it.", "Who?", ())
    with pytest.raises(ValueError, match=message):
        question_answering_features([example], tokenizer, **kwargs)


@pytest.mark.parametrize(
    "example, message",
    [
        (Example("no-answer", "", "José wrote it.", "Who?", ()), "'no-answer' has no answer"),
        (
            Example("outside", "", "José wrote it.", "Who?", (("it.", 12),)),
            "'outside': answer offsets fall outside the context",
        ),
        (
            Example("negative", "", "José wrote it.", "Who?", (("it", -1),)),
            "'negative': answer offsets fall outside the context",
        ),
        (
            Example("moved", "", "José wrote it.", "Who?", (("it", 10),)),
            "'moved': the context does not contain the answer at its offset",
        ),
        (Example("blank", "", "José wrote it.", "Who?", ((" ", 4),)), "'blank'.*covers no"),
        (
            Example("no-context", "", "  ", "Who?", (("it", 0),)),
            "'no-context' has an empty context",
        ),
        (
            Example("no-question", "", "José wrote it.", "", (("it", 11),)),
            "'no-question' has an empty question",
        ),
    ],
)
def test_bad_examples_are_named(tokenizer, example, message):
    with pytest.raises(ValueError, match=message):
        question_answering_features(
            [example], tokenizer, sequence_length=16, stride=0, max_question_length=4, training=True
        )


def test_tokenizer_needs_special_tokens():
    tokenizer = WordPieceTokenizer(VOCABULARY, cls_token=None)
    example = Example("q", "", "José wrote it.", "Who?", ())
    with pytest.raises(ValueError, match=r"no \['cls'\]"):
        question_answering_features([example], tokenizer)
