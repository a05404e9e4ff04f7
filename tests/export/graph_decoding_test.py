import numpy as np
import pytest
import tensorflow as tf

from kbert.export.graph_decoding import answer_outputs, first_subword_mask, tag_outputs
from kbert.layers import CRF, bio_constraints
from kbert.metrics.entity_metrics import bio_to_entities
from kbert.models.answer_decoding import decode_answers
from kbert.text import BertPreprocessor, WordPieceTokenizer

TAG_NAMES = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-MISC", "I-MISC"]
NUM_TAGS = len(TAG_NAMES)
TAG_KEYS = ("scores", "word_ids", "start_offsets", "end_offsets")
ANSWER_KEYS = (
    "start_logits",
    "end_logits",
    "segment_ids",
    "padding_mask",
    "start_offsets",
    "end_offsets",
)
VOCABULARY = [
    "[PAD]",
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "[MASK]",
    "cafe",
    "bob",
    "un",
    "##aff",
    "##able",
    "went",
    "to",
    "paris",
    ".",
    "ou",
    "est",
    "?",
]
SENTENCE = "Café Bob Unaffable went to Paris."


# ---------------------------------------------------------------- random packed rows


def _segment(rng, max_tokens):
    """Word ids and character offsets of one segment: words of 1-3 subwords, cut anywhere."""
    word_ids, starts, ends = [], [], []
    cursor, word = 0, 0
    while len(word_ids) < max_tokens and rng.random() > 0.1:
        for _ in range(rng.integers(1, 4)):
            if len(word_ids) == max_tokens:
                break  # truncation may cut a word after some of its subwords
            width = int(rng.integers(1, 4))
            word_ids.append(word)
            starts.append(cursor)
            ends.append(cursor + width)
            cursor += width
        word += 1
        cursor += 1  # a space
    return word_ids, starts, ends


def _random_rows(rng, batch, seq):
    """Packed (batch, seq) rows like the preprocessor's: [CLS] A [SEP] (B [SEP]) padding."""
    arrays = {
        key: np.full((batch, seq), -1, np.int32)
        for key in ("word_ids", "start_offsets", "end_offsets")
    }
    arrays["segment_ids"] = np.zeros((batch, seq), np.int32)
    arrays["padding_mask"] = np.zeros((batch, seq), np.int32)
    for row in range(batch):
        pair = seq >= 3 and rng.random() < 0.5
        budget = seq - (3 if pair else 2)
        first_budget = int(rng.integers(0, budget + 1)) if pair else budget
        segments = [_segment(rng, first_budget)]
        if pair:
            segments.append(_segment(rng, budget - len(segments[0][0])))
        position = 1  # after [CLS]
        for index, (word_ids, starts, ends) in enumerate(segments):
            span = slice(position, position + len(word_ids))
            arrays["word_ids"][row, span] = word_ids
            arrays["start_offsets"][row, span] = starts
            arrays["end_offsets"][row, span] = ends
            position += len(word_ids) + 1  # and its [SEP]
            if index == 1:
                arrays["segment_ids"][row, span.start : position] = 1
        arrays["padding_mask"][row, :position] = 1
    return arrays


def _word_positions(word_ids):
    """(first, last) subword positions of each word of one row, in order."""
    firsts, lasts = [], []
    for p, word in enumerate(word_ids):
        if word < 0:
            continue
        if p == 0 or word_ids[p - 1] != word:
            firsts.append(p)
        if p == len(word_ids) - 1 or word_ids[p + 1] != word:
            lasts.append(p)
    return firsts, lasts


def _reference_tags(arrays, scores, tag_ids_of_row):
    """Per row: (tags, word spans, entities as (type, start char, end char)) via bio_to_entities."""
    rows = []
    for row in range(scores.shape[0]):
        firsts, lasts = _word_positions(arrays["word_ids"][row])
        tags = [TAG_NAMES[i] for i in tag_ids_of_row(row, firsts)]
        starts = [int(arrays["start_offsets"][row, p]) for p in firsts]
        ends = [int(arrays["end_offsets"][row, p]) for p in lasts]
        entities = [
            (entity_type, starts[start], ends[end - 1])
            for start, end, entity_type in bio_to_entities(tags)
        ]
        rows.append((tags, starts, ends, entities))
    return rows


def _decode(values):
    return [value.decode() for value in values]


def _check_tag_outputs(outputs, reference):
    outputs = {key: value.numpy() for key, value in outputs.items()}
    batch = len(reference)
    max_words = max([len(tags) for tags, _, _, _ in reference], default=0)
    max_entities = max([len(entities) for _, _, _, entities in reference], default=0)
    assert outputs["tags"].shape == (batch, max_words)
    assert outputs["entity_types"].shape == (batch, max_entities)
    for row, (tags, starts, ends, entities) in enumerate(reference):
        n, m = len(tags), len(entities)
        assert outputs["num_words"][row] == n
        assert _decode(outputs["tags"][row]) == tags + [""] * (max_words - n)
        assert outputs["word_starts"][row].tolist() == starts + [-1] * (max_words - n)
        assert outputs["word_ends"][row].tolist() == ends + [-1] * (max_words - n)
        assert outputs["num_entities"][row] == m
        assert _decode(outputs["entity_types"][row]) == (
            [t for t, _, _ in entities] + [""] * (max_entities - m)
        )
        assert outputs["entity_starts"][row].tolist() == (
            [s for _, s, _ in entities] + [-1] * (max_entities - m)
        )
        assert outputs["entity_ends"][row].tolist() == (
            [e for _, _, e in entities] + [-1] * (max_entities - m)
        )
    for key in (
        "word_starts",
        "word_ends",
        "num_words",
        "entity_starts",
        "entity_ends",
        "num_entities",
    ):
        assert outputs[key].dtype == np.int32, key
    for key in ("tags", "entity_types"):
        assert outputs[key].dtype == object, key


# ---------------------------------------------------------------- traced functions


def _tag_function(crf=None):
    @tf.function(
        input_signature=[
            tf.TensorSpec([None, None, NUM_TAGS], tf.float32),
            tf.TensorSpec([None, None], tf.int32),
            tf.TensorSpec([None, None], tf.int32),
            tf.TensorSpec([None, None], tf.int32),
        ]
    )
    def decode(scores, word_ids, start_offsets, end_offsets):
        return tag_outputs(scores, word_ids, start_offsets, end_offsets, TAG_NAMES, crf=crf)

    return decode


def _answer_function(max_answer_length):
    @tf.function(
        input_signature=[tf.TensorSpec([None, None], tf.float32)] * 2
        + [tf.TensorSpec([None, None], tf.int32)] * 4
    )
    def decode(start_logits, end_logits, segment_ids, padding_mask, start_offsets, end_offsets):
        return answer_outputs(
            start_logits,
            end_logits,
            segment_ids,
            padding_mask,
            start_offsets,
            end_offsets,
            max_answer_length,
        )

    return decode


@pytest.fixture(scope="module")
def random_crf():
    rng = np.random.default_rng(7)
    crf = CRF(NUM_TAGS)
    crf.build((None, None, NUM_TAGS))
    crf.transitions.assign(rng.normal(size=(NUM_TAGS, NUM_TAGS)).astype("float32"))
    crf.start_transitions.assign(rng.normal(size=(NUM_TAGS,)).astype("float32"))
    crf.end_transitions.assign(rng.normal(size=(NUM_TAGS,)).astype("float32"))
    return crf


@pytest.fixture(scope="module")
def argmax_decode():
    return _tag_function()


@pytest.fixture(scope="module")
def crf_decode(random_crf):
    return _tag_function(random_crf)


def _graph_op_types(concrete):
    """Op types of a traced graph and of every function in its library (loop bodies)."""
    graph_def = concrete.graph.as_graph_def()
    types = {node.op for node in graph_def.node}
    for function in graph_def.library.function:
        types |= {node.op for node in function.node_def}
    return types


# ---------------------------------------------------------------- tag_outputs


def test_first_subword_mask_splits_pairs_whose_word_ids_restart():
    word_ids = tf.constant([[-1, 0, 0, 1, -1, 0, 0, 1, -1, -1]])
    mask = first_subword_mask(word_ids).numpy().astype(int).tolist()
    assert mask == [[0, 1, 0, 1, 0, 1, 0, 1, 0, 0]]


def test_argmax_tags_match_bio_to_entities_on_random_rows(argmax_decode):
    rng = np.random.default_rng(0)
    seen = {
        "I after O or first": 0,
        "type switch": 0,
        "entity at the end": 0,
        "multi-subword word": 0,
        "no word": 0,
        "pair": 0,
    }
    for case in range(30):
        batch, seq = int(rng.integers(1, 7)), int(rng.integers(2, 18))
        arrays = _random_rows(rng, batch, seq)
        scores = rng.normal(size=(batch, seq, NUM_TAGS)).astype(np.float32)
        if case % 3 == 0:  # probabilities instead of logits: the same argmax
            scores = tf.nn.softmax(scores).numpy()
        reference = _reference_tags(
            arrays, scores, lambda row, firsts, s=scores: s[row, firsts].argmax(-1)
        )
        outputs = argmax_decode(scores, *(arrays[k] for k in TAG_KEYS[1:]))
        _check_tag_outputs(outputs, reference)
        for row, (tags, _, _, _) in enumerate(reference):
            previous = ["O", *tags][: len(tags)]
            seen["I after O or first"] += any(
                t.startswith("I-") and p == "O" for t, p in zip(tags, previous, strict=True)
            )
            seen["type switch"] += any(
                t.startswith("I-") and p != "O" and p[2:] != t[2:]
                for t, p in zip(tags, previous, strict=True)
            )
            seen["entity at the end"] += bool(tags) and tags[-1] != "O"
            seen["no word"] += not tags
            seen["pair"] += bool(arrays["segment_ids"][row].any())
            firsts, lasts = _word_positions(arrays["word_ids"][row])
            seen["multi-subword word"] += any(a != b for a, b in zip(firsts, lasts, strict=True))
    assert all(count > 0 for count in seen.values()), seen


def test_crf_tags_equal_crf_decode_on_first_subword_emissions(crf_decode, random_crf):
    rng = np.random.default_rng(1)
    constraints = bio_constraints(TAG_NAMES)
    for _ in range(12):
        batch, seq = int(rng.integers(1, 6)), int(rng.integers(2, 16))
        arrays = _random_rows(rng, batch, seq)
        scores = rng.normal(size=(batch, seq, NUM_TAGS)).astype(np.float32) * 2
        first = first_subword_mask(arrays["word_ids"]).numpy()  # (batch, seq)
        # crf.decode over the whole row with the first-subword mask ...
        full_path, _ = random_crf.decode(scores, first, constraints=constraints)
        full_path = np.asarray(full_path)
        # ... and over the gathered first-subword emissions give the same tags.
        num_words = first.sum(1)
        width = max(int(num_words.max()), 1)
        gathered = np.zeros((batch, width, NUM_TAGS), np.float32)
        for row in range(batch):
            gathered[row, : num_words[row]] = scores[row, first[row]]
        mask = np.arange(width)[None, :] < num_words[:, None]
        gathered_path = np.asarray(random_crf.decode(gathered, mask, constraints=constraints)[0])
        for row in range(batch):
            np.testing.assert_array_equal(
                full_path[row, first[row]], gathered_path[row, : num_words[row]]
            )
        reference = _reference_tags(
            arrays, scores, lambda row, firsts, path=full_path: path[row, firsts]
        )
        outputs = crf_decode(scores, *(arrays[k] for k in TAG_KEYS[1:]))
        _check_tag_outputs(outputs, reference)
        for tags, _, _, _ in reference:  # the constrained path is valid IOB2
            for tag, previous in zip(tags, ["O", *tags][: len(tags)], strict=True):
                assert not tag.startswith("I-") or previous[2:] == tag[2:]


@pytest.mark.parametrize("use_crf", [False, True])
def test_tag_outputs_on_empty_batch_and_rows_without_words(use_crf, argmax_decode, crf_decode):
    decode = crf_decode if use_crf else argmax_decode
    empty = np.zeros((0, 5), np.int32)
    outputs = decode(np.zeros((0, 5, NUM_TAGS), np.float32), empty, empty, empty)
    assert outputs["tags"].shape == (0, 0)
    assert outputs["entity_starts"].shape == (0, 0)
    assert outputs["num_words"].shape == (0,)
    only_special = np.array([[-1, -1, -1], [-1, -1, -1]], np.int32)  # [CLS] [SEP] [PAD]
    outputs = decode(
        np.ones((2, 3, NUM_TAGS), np.float32), only_special, only_special, only_special
    )
    assert outputs["tags"].shape == (2, 0)
    assert outputs["num_words"].numpy().tolist() == [0, 0]
    assert outputs["num_entities"].numpy().tolist() == [0, 0]


def test_tag_outputs_trace_holds_only_core_ops(argmax_decode, crf_decode):
    core = set(dir(tf.raw_ops))
    for decode in (argmax_decode, crf_decode):
        types = _graph_op_types(decode.get_concrete_function())
        assert types <= core, types - core
        assert not types & {"PyFunc", "EagerPyFunc", "PyFuncStateless"}


def test_tag_outputs_rejects_bad_inputs(random_crf):
    word_ids = tf.constant([[-1, 0, -1]])
    scores = tf.zeros((1, 3, NUM_TAGS))
    with pytest.raises(ValueError, match="tag_names"):
        tag_outputs(scores, word_ids, word_ids, word_ids, ["O", "PER"])
    with pytest.raises(ValueError, match="scores"):
        tag_outputs(tf.zeros((1, 3, 2)), word_ids, word_ids, word_ids, TAG_NAMES)
    with pytest.raises(ValueError, match="word_ids"):
        tag_outputs(scores, word_ids[0], word_ids, word_ids, TAG_NAMES)
    with pytest.raises(ValueError, match="crf"):
        tag_outputs(
            tf.zeros((1, 3, 3)), word_ids, word_ids, word_ids, ["O", "B-X", "I-X"], crf=random_crf
        )


# ---------------------------------------------------------------- answer_outputs


def _brute_force_answer(arrays, start, end, max_answer_length):
    """Per row: (start char, end char, score) of the best (i, j), first in (i, j) order."""
    answers = []
    for row in range(start.shape[0]):
        candidate = (
            (arrays["segment_ids"][row] == 1)
            & (arrays["padding_mask"][row] == 1)
            & (arrays["start_offsets"][row] >= 0)
            & (arrays["end_offsets"][row] >= 0)
        )
        best = (-1, -1, float("-inf"))
        for i in np.flatnonzero(candidate):
            for j in np.flatnonzero(candidate):
                score = float(start[row, i]) + float(end[row, j])
                if i <= j < i + max_answer_length and score > best[2]:
                    best = (
                        int(arrays["start_offsets"][row, i]),
                        int(arrays["end_offsets"][row, j]),
                        score,
                    )
        answers.append(best)
    return answers


@pytest.mark.parametrize("max_answer_length", [1, 3, 30])
def test_answers_match_brute_force_and_decode_answers(max_answer_length):
    decode = _answer_function(max_answer_length)
    rng = np.random.default_rng(max_answer_length)
    empty_contexts = 0
    for _ in range(20):
        batch, seq = int(rng.integers(1, 6)), int(rng.integers(3, 20))
        arrays = _random_rows(rng, batch, seq)
        start, end = (rng.normal(size=(batch, seq)).astype(np.float32) for _ in range(2))
        outputs = decode(start, end, *(arrays[key] for key in ANSWER_KEYS[2:]))
        outputs = {key: value.numpy() for key, value in outputs.items()}
        assert outputs["answer_start"].dtype == np.int32
        assert outputs["score"].dtype == np.float32
        brute = _brute_force_answer(arrays, start, end, max_answer_length)
        got = list(
            zip(
                outputs["answer_start"].tolist(),
                outputs["answer_end"].tolist(),
                outputs["score"].tolist(),
                strict=True,
            )
        )
        for (got_start, got_end, got_score), (want_start, want_end, want_score) in zip(
            got, brute, strict=True
        ):
            assert (got_start, got_end) == (want_start, want_end)
            assert got_score == pytest.approx(want_score, abs=1e-5)
            empty_contexts += want_start == -1
        # decode_answers with n_best covering every token is the same search.
        in_context = arrays["segment_ids"] == 1
        features = {
            "example_index": np.arange(batch),
            "context_start_offsets": np.where(in_context, arrays["start_offsets"], -1),
            "context_end_offsets": np.where(in_context, arrays["end_offsets"], -1),
            "max_context": np.ones((batch, seq), bool),
        }
        examples = [type("Example", (), {"id": row, "context": "x" * 100}) for row in range(batch)]
        answers = decode_answers(
            examples, features, start, end, n_best=seq, max_answer_length=max_answer_length
        )
        for row in range(batch):
            assert (answers[row]["start"], answers[row]["end"]) == got[row][:2]
    assert empty_contexts > 0


def test_answers_on_empty_batch_and_tensor_length():
    decode = _answer_function(tf.constant(4))
    empty_float, empty_int = np.zeros((0, 6), np.float32), np.zeros((0, 6), np.int32)
    outputs = decode(empty_float, empty_float, *[empty_int] * 4)
    assert [outputs[key].shape for key in ("answer_start", "answer_end", "score")] == [(0,)] * 3
    no_context = np.array([[0, 0, 0]], np.int32)  # [CLS] question [SEP]: no candidate
    offsets = np.array([[-1, 0, -1]], np.int32)
    outputs = decode(
        np.ones((1, 3), np.float32),
        np.ones((1, 3), np.float32),
        no_context,
        np.ones((1, 3), np.int32),
        offsets,
        offsets,
    )
    assert outputs["answer_start"].numpy().tolist() == [-1]
    assert outputs["answer_end"].numpy().tolist() == [-1]
    assert outputs["score"].numpy().tolist() == [float("-inf")]


def test_answer_outputs_trace_holds_only_core_ops_and_rejects_bad_inputs():
    core = set(dir(tf.raw_ops))
    types = _graph_op_types(_answer_function(30).get_concrete_function())
    assert types <= core, types - core
    logits, ids = tf.zeros((1, 3)), tf.zeros((1, 3), tf.int32)
    with pytest.raises(ValueError, match="max_answer_length"):
        answer_outputs(logits, logits, ids, ids, ids, ids, 0)
    with pytest.raises(ValueError, match="start_logits"):
        answer_outputs(ids, logits, ids, ids, ids, ids, 3)
    with pytest.raises(ValueError, match="segment_ids"):
        answer_outputs(logits, logits, ids[0], ids, ids, ids, 3)


# ---------------------------------------------------------------- end to end


@pytest.fixture(scope="module")
def tokenizer():
    return WordPieceTokenizer(VOCABULARY)


@pytest.mark.parametrize("use_crf", [False, True])
def test_entities_slice_the_original_text(tokenizer, use_crf, argmax_decode, crf_decode):
    # "Café" has 4 characters and 5 UTF-8 bytes, so byte offsets would shift every span after
    # it; "Unaffable" is three subwords, whose later ones are scored as junk on purpose.
    texts = [SENTENCE, "", "Bob Unaffable"]
    word_tags = [["O", "B-PER", "I-PER", "O", "O", "B-LOC", "O"], [], ["B-PER", "I-PER"]]
    preprocessor = BertPreprocessor(tokenizer, sequence_length=12, return_alignment=True)
    inputs = preprocessor(texts)
    word_ids = inputs["word_ids"].numpy()
    assert (word_ids[0] == 2).sum() == 3  # "Unaffable" -> un ##aff ##able
    scores = np.zeros(word_ids.shape + (NUM_TAGS,), np.float32)
    scores[..., TAG_NAMES.index("I-MISC")] = 5.0  # special tokens and later subwords
    first = first_subword_mask(word_ids).numpy()
    for row, tags in enumerate(word_tags):
        for position, word in enumerate(word_ids[row]):
            if first[row, position]:
                scores[row, position, TAG_NAMES.index(tags[word])] = 10.0
    decode = crf_decode if use_crf else argmax_decode
    outputs = decode(scores, inputs["word_ids"], inputs["start_offsets"], inputs["end_offsets"])
    assert [
        _decode(row)[: len(tags)]
        for row, tags in zip(outputs["tags"].numpy(), word_tags, strict=True)
    ] == word_tags
    found = []
    for row, text in enumerate(texts):
        n = outputs["num_entities"].numpy()[row]
        found.append(
            [
                (kind.decode(), text[start:end])
                for kind, start, end in zip(
                    outputs["entity_types"].numpy()[row, :n],
                    outputs["entity_starts"].numpy()[row, :n],
                    outputs["entity_ends"].numpy()[row, :n],
                    strict=True,
                )
            ]
        )
    assert found == [[("PER", "Bob Unaffable"), ("LOC", "Paris")], [], [("PER", "Bob Unaffable")]]
    words = [
        SENTENCE[s:e]
        for s, e in zip(
            outputs["word_starts"].numpy()[0], outputs["word_ends"].numpy()[0], strict=True
        )
    ]
    assert words == ["Café", "Bob", "Unaffable", "went", "to", "Paris", "."]

    # Truncation: "Unaffable" keeps un ##aff only, so the entity ends where "##aff" does.
    short = BertPreprocessor(tokenizer, sequence_length=5, return_alignment=True)(["Bob Unaffable"])
    outputs = decode(
        scores[2:, :5], short["word_ids"], short["start_offsets"], short["end_offsets"]
    )
    start, end = outputs["entity_starts"].numpy()[0, 0], outputs["entity_ends"].numpy()[0, 0]
    assert "Bob Unaffable"[start:end] == "Bob Unaff"


def test_answer_slices_the_context_not_the_question(tokenizer):
    preprocessor = BertPreprocessor(tokenizer, sequence_length=20, return_alignment=True)
    inputs = preprocessor((["Où est Bob?", "Où est Paris?"], [SENTENCE, SENTENCE]))
    token_ids = inputs["token_ids"].numpy()
    segment_ids = inputs["segment_ids"].numpy()
    start = np.zeros(token_ids.shape, np.float32)
    end = np.zeros(token_ids.shape, np.float32)
    # Row 0: "Bob Unaffable" (bob .. ##able); the question's "bob" scores high too but is not
    # context. Row 1: "Paris".
    start[0, token_ids[0] == VOCABULARY.index("bob")] = 8.0
    end[0, token_ids[0] == VOCABULARY.index("##able")] = 8.0
    start[1, (token_ids[1] == VOCABULARY.index("paris"))] = 8.0
    end[1, (token_ids[1] == VOCABULARY.index("paris")) & (segment_ids[1] == 0)] = 20.0
    end[1, (token_ids[1] == VOCABULARY.index("paris")) & (segment_ids[1] == 1)] = 8.0
    outputs = _answer_function(30)(start, end, *(inputs[key] for key in ANSWER_KEYS[2:]))
    spans = zip(outputs["answer_start"].numpy(), outputs["answer_end"].numpy(), strict=True)
    assert [SENTENCE[s:e] for s, e in spans] == ["Bob Unaffable", "Paris"]
    assert outputs["score"].numpy().tolist() == [16.0, 16.0]
