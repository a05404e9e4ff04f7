import numpy as np
import pytest

from kbert.data.span_features import decode_spans, span_features
from kbert.data.token_classification_features import IGNORE_INDEX, token_classification_features
from tests.toy_ner import TYPES, WORDS, toy_tokenizer


@pytest.fixture(scope="module")
def tokenizer():
    return toy_tokenizer()


def test_spans_of_up_to_max_words_point_at_first_and_last_subwords(tokenizer):
    # [CLS] peter black ##burn rejects lamb [SEP]; the second sentence is shorter (padding).
    features = token_classification_features(
        [["Peter", "Blackburn", "rejects", "lamb"], ["EU"]], tokenizer, sequence_length=8
    )
    spans = span_features(
        features,
        max_span_length=2,
        entities=[{(0, 2, "PER"), (1, 2, "MISC"), (3, 4, "ORG")}, set()],
        type_names=TYPES,
    )
    assert spans["span_starts"].tolist() == [[1, 1, 2, 2, 4, 4, 5], [1, 0, 0, 0, 0, 0, 0]]
    assert spans["span_ends"].tolist() == [[1, 3, 3, 4, 4, 5, 5], [1, 0, 0, 0, 0, 0, 0]]
    assert spans["span_word_starts"].tolist() == [[0, 0, 1, 1, 2, 2, 3], [0] + [-1] * 6]
    assert spans["span_word_ends"].tolist() == [[1, 2, 2, 3, 3, 4, 4], [1] + [-1] * 6]
    assert spans["span_mask"].tolist() == [[1] * 7, [1] + [0] * 6]
    # Nested PER (0, 2) and MISC (1, 2) both labelled; NULL is 0, padding IGNORE_INDEX.
    assert spans["span_labels"].tolist() == [[0, 1, 3, 0, 0, 0, 2], [0] + [IGNORE_INDEX] * 6]
    for key in (
        "span_starts",
        "span_ends",
        "span_mask",
        "span_word_starts",
        "span_word_ends",
        "span_labels",
    ):
        assert spans[key].dtype == np.int32, key
    # The token features pass through unchanged.
    for key, value in features.items():
        np.testing.assert_array_equal(spans[key], value)


def test_without_entities_there_are_no_labels(tokenizer):
    features = token_classification_features(
        [["EU", "rejects", "lamb"]], tokenizer, sequence_length=8
    )
    spans = span_features(features, max_span_length=8)
    assert "span_labels" not in spans
    assert spans["span_mask"].sum() == 3 + 2 + 1


def _long_features(tokenizer, count=3, words=30, seed=0, **kwargs):
    rng = np.random.default_rng(seed)
    sentences = [list(rng.choice(WORDS, size=words - 8 * index)) for index in range(count)]
    return sentences, token_classification_features(
        sentences, tokenizer, sequence_length=10, **kwargs
    )


@pytest.mark.parametrize("max_span_length", [1, 3, 6])
def test_long_sentences_score_every_span_once_preferring_the_row_owning_its_first_word(
    tokenizer, max_span_length
):
    sentences, features = _long_features(tokenizer, stride=4)
    spans = span_features(features, max_span_length=max_span_length)
    rows = range(len(features["sentence_index"]))
    window = {
        row: set(features["word_index"][row][features["word_index"][row] >= 0].tolist())
        for row in rows
    }
    owner = {}
    for row in rows:
        words = features["word_index"][row]
        for word in words[features["first_subword"][row] == 1].tolist():
            owner[(int(features["sentence_index"][row]), word)] = row
    seen = {}
    for row in rows:
        sentence = int(features["sentence_index"][row])
        words = features["word_index"][row]
        count = spans["span_mask"][row].sum()
        got = list(
            zip(
                spans["span_word_starts"][row, :count].tolist(),
                spans["span_word_ends"][row, :count].tolist(),
                strict=True,
            )
        )
        for (start, end), token_start, token_end in zip(
            got, spans["span_starts"][row, :count], spans["span_ends"][row, :count], strict=True
        ):
            assert {start, end - 1} <= window[row]  # held whole by its row
            home = owner[(sentence, start)]
            assert row == home or end - 1 not in window[home]  # the owner's when it fits there
            assert token_start == np.nonzero(words == start)[0][0]  # first subword of start
            assert token_end == np.nonzero(words == end - 1)[0][-1]  # last subword of end
            assert (sentence, start, end) not in seen  # scored once
            seen[(sentence, start, end)] = row
    # Every span of up to max_span_length words that some window holds whole is a candidate.
    for sentence, words in enumerate(sentences):
        for start in range(len(words)):
            for end in range(start + 1, min(start + max_span_length, len(words)) + 1):
                fits = any(
                    {start, end - 1} <= window[row]
                    for row in rows
                    if features["sentence_index"][row] == sentence
                )
                assert ((sentence, start, end) in seen) == fits
    # Single-word spans: every word of every sentence exactly once.
    singles = {(s, a) for s, a, b in seen if b == a + 1}
    assert singles == {(s, w) for s, words in enumerate(sentences) for w in range(len(words))}


def test_short_gold_entities_are_labelled_exactly_once_across_windows(tokenizer):
    sentences, features = _long_features(tokenizer, stride=4)
    rng = np.random.default_rng(1)
    entities = []
    for words in sentences:
        starts = rng.choice(len(words) - 2, size=6, replace=False)
        entities.append(
            {(int(s), int(s) + int(rng.integers(1, 3)), TYPES[int(s) % 3]) for s in starts}
        )
    spans = span_features(features, max_span_length=3, entities=entities, type_names=TYPES)
    found = [set() for _ in sentences]
    labelled = np.nonzero(spans["span_labels"] > 0)
    for row, column in zip(*labelled, strict=True):
        found[features["sentence_index"][row]].add(
            (
                int(spans["span_word_starts"][row, column]),
                int(spans["span_word_ends"][row, column]),
                TYPES[spans["span_labels"][row, column] - 1],
            )
        )
    assert found == entities
    assert len(labelled[0]) == sum(len(e) for e in entities)


def test_an_entity_shorter_than_the_overlap_is_labelled(tokenizer):
    letters = ["EU"] * 20  # single-subword words; capacity 10, overlap 6 words
    features = token_classification_features([letters], tokenizer, sequence_length=12, stride=6)
    assert features["word_index"][1, 1] == 4  # window 1 starts at word 4: words 4-9 overlap
    spans = span_features(
        features, max_span_length=8, entities=[{(6, 11, "PER")}], type_names=TYPES
    )
    assert (spans["span_labels"] == 1).sum() == 1


def _decoding_features():
    """Two sentences; sentence 0 spans over two rows, row 2 is sentence 1 with a padding span."""
    return {
        "sentence_index": np.array([0, 0, 1]),
        "span_mask": np.array([[1, 1, 1], [1, 1, 0], [1, 1, 0]]),
        "span_word_starts": np.array([[0, 1, 1], [3, 1, -1], [0, 2, -1]]),
        "span_word_ends": np.array([[2, 3, 2], [4, 4, -1], [2, 3, -1]]),
    }


def _probabilities(rows):
    """(rows, spans, 1 + 3): each span's (best type id, its probability)."""
    out = np.zeros((len(rows), max(len(r) for r in rows), 4))
    for i, row in enumerate(rows):
        for j, (best, p) in enumerate(row):
            out[i, j] = (1 - p) / 3
            out[i, j, best] = p
    return out


def test_flat_decoding_keeps_the_most_probable_of_overlapping_spans():
    probabilities = _probabilities(
        [
            [(1, 0.9), (2, 0.8), (3, 0.6)],  # PER (0, 2), ORG (1, 3), MISC (1, 2)
            [(2, 0.7), (1, 0.95), (0, 0.0)],  # ORG (3, 4), PER (1, 4), padding
            [(0, 0.9), (3, 0.5), (1, 0.99)],  # NULL (0, 2), MISC (2, 3), padding span scored high
        ]
    )
    flat = decode_spans(_decoding_features(), probabilities, 2, TYPES)
    assert flat == [{(1, 4, "PER")}, {(2, 3, "MISC")}]
    nested = decode_spans(_decoding_features(), probabilities, 2, TYPES, nested=True)
    assert nested == [
        {(0, 2, "PER"), (1, 3, "ORG"), (1, 2, "MISC"), (3, 4, "ORG"), (1, 4, "PER")},
        {(2, 3, "MISC")},
    ]


def test_flat_decoding_keeps_non_overlapping_spans_in_probability_order():
    probabilities = _probabilities(
        [
            [(1, 0.9), (2, 0.8), (3, 0.6)],  # PER (0, 2) kept, ORG (1, 3) and MISC (1, 2) overlap
            [(2, 0.7), (0, 0.9), (0, 0.0)],  # ORG (3, 4) kept
            [(0, 0.9), (0, 0.5), (0, 0.0)],
        ]
    )
    flat = decode_spans(_decoding_features(), probabilities, 3, TYPES)
    assert flat == [{(0, 2, "PER"), (3, 4, "ORG")}, set(), set()]


def test_decoding_reads_trimmed_probabilities():
    probabilities = _probabilities(
        [[(1, 0.9), (2, 0.8)], [(2, 0.7), (0, 0.9)], [(3, 0.9), (0, 0.9)]]
    )  # 2 of the 3 span columns
    assert decode_spans(_decoding_features(), probabilities, 2, TYPES) == [
        {(0, 2, "PER"), (3, 4, "ORG")},
        {(0, 2, "MISC")},
    ]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"max_span_length": 0}, "max_span_length must be a positive int; received 0"),
        ({"max_span_length": 2.5}, "max_span_length must be a positive int; received 2.5"),
        ({"entities": [set()]}, "type_names is required with entities"),
        (
            {"entities": [{(0, 1, "LOC")}], "type_names": TYPES},
            r"sentence 0: entity type 'LOC' is not in \['PER', 'ORG', 'MISC'\]",
        ),
        (
            {"entities": [], "type_names": TYPES},
            "one collection per sentence: features cover 1 sentences, received 0",
        ),
    ],
)
def test_bad_arguments_are_named(tokenizer, kwargs, message):
    features = token_classification_features([["EU", "lamb"]], tokenizer, sequence_length=8)
    with pytest.raises(ValueError, match=message):
        span_features(features, **kwargs)
