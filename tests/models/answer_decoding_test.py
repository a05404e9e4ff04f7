import collections

import numpy as np
import pytest

from kbert.data.question_answering_features import question_answering_features
from kbert.models import decode_answers
from kbert.text import WordPieceTokenizer

Example = collections.namedtuple("Example", "id title context question answers")

VOCABULARY = [
    "[PAD]",
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "[MASK]",
    "who",
    "did",
    "elodie",
    "meet",
    "?",
    "met",
    "zoe",
    "in",
    "sao",
    "paulo",
    ".",
]
CONTEXT = "Élodie met Zoë in São Paulo."
# One window (sequence_length 16): [CLS] who did elodie meet ? [SEP] then the context from
# position 7: elodie 7, met 8, zoe 9, in 10, sao 11, paulo 12, "." 13, [SEP] 14, padding 15.
LONG_CONTEXT = "Élodie met Zoë in São Paulo. Zoë met Élodie."
# Two windows (sequence_length 12, stride 2): [CLS] who ? [SEP] then 7 context tokens from
# position 4; window 0 holds tokens 0-6, window 1 tokens 5-10.


@pytest.fixture(scope="module")
def tokenizer():
    return WordPieceTokenizer(VOCABULARY)


@pytest.fixture(scope="module")
def single(tokenizer):
    examples = [Example("q", "", CONTEXT, "Who did Élodie meet?", ())]
    features = question_answering_features(
        examples, tokenizer, sequence_length=16, stride=2, max_question_length=5
    )
    return examples, features


@pytest.fixture(scope="module")
def double(tokenizer):
    examples = [Example("q", "", LONG_CONTEXT, "Who?", ())]
    features = question_answering_features(
        examples, tokenizer, sequence_length=12, stride=2, max_question_length=2
    )
    assert len(features["token_ids"]) == 2
    return examples, features


def _logits(features, start, end, baseline=-10.0):
    """Start and end logits at `baseline` except the given {(row, position): value}."""
    logits = []
    for values in (start, end):
        array = np.full(features["token_ids"].shape, baseline, np.float32)
        for (row, position), value in values.items():
            array[row, position] = value
        logits.append(array)
    return logits


def test_picks_the_span_and_its_original_characters(single):
    examples, features = single
    start, end = _logits(features, {(0, 11): 5.0}, {(0, 13): 5.0})
    answer = decode_answers(examples, features, start, end)["q"]
    assert (answer["text"], answer["start"], answer["end"]) == ("São Paulo.", 18, 28)
    assert answer["score"] == 10.0
    start, end = _logits(features, {(0, 7): 3.0, (0, 9): 4.0}, {(0, 9): 3.0})
    answer = decode_answers(examples, features, start, end)["q"]
    assert (answer["text"], answer["start"], answer["end"]) == ("Zoë", 11, 14)
    start, end = _logits(features, {(0, 7): 4.0}, {(0, 9): 3.0})
    assert decode_answers(examples, features, start, end)["q"]["text"] == "Élodie met Zoë"


def test_end_before_start_is_never_chosen(single):
    examples, features = single
    # The two highest logits would make "paulo" ... "elodie", a backwards span.
    start, end = _logits(features, {(0, 12): 9.0}, {(0, 7): 9.0, (0, 13): 1.0}, baseline=0.0)
    answer = decode_answers(examples, features, start, end)["q"]
    assert (answer["text"], answer["score"]) == ("Paulo.", 10.0)
    for candidate in answer["candidates"]:
        assert candidate["start"] < candidate["end"]


def test_max_answer_length_is_respected(single):
    examples, features = single
    start, end = _logits(features, {(0, 7): 5.0}, {(0, 13): 4.0, (0, 9): 1.0})
    whole = decode_answers(examples, features, start, end)["q"]
    assert whole["text"] == CONTEXT
    short = decode_answers(examples, features, start, end, max_answer_length=3)["q"]
    assert (short["text"], short["score"]) == ("Élodie met Zoë", 6.0)
    for candidate in short["candidates"]:
        assert len(candidate["text"].split()) <= 3


def test_best_span_across_windows_wins_by_score(double):
    examples, features = double
    # "Zoë" is token 2 (window 0, position 6) and token 7 (window 1, position 6).
    start, end = _logits(features, {(0, 6): 5.0, (1, 6): 4.0}, {(0, 6): 0.0, (1, 6): 5.0})
    answer = decode_answers(examples, features, start, end)["q"]
    second = LONG_CONTEXT.index("Zoë", 20)
    assert (answer["text"], answer["start"], answer["end"]) == ("Zoë", second, second + 3)
    assert answer["score"] == 9.0
    assert answer["candidates"][1]["start"] == LONG_CONTEXT.index("Zoë")
    assert answer["candidates"][1]["score"] == 5.0


def test_only_max_context_starts_count(double):
    examples, features = double
    # Token 5 ("paulo") is in both windows: position 9 of window 0 (max context) and position 4
    # of window 1 (not).
    assert features["max_context"][0, 9] and not features["max_context"][1, 4]
    start, end = _logits(features, {(0, 9): 1.0, (1, 4): 10.0}, {(0, 9): 1.0, (1, 4): 10.0})
    answer = decode_answers(examples, features, start, end)["q"]
    assert (answer["text"], answer["score"]) == ("Paulo", 2.0)


def test_probabilities_are_a_softmax_over_the_n_best_candidates(double):
    examples, features = double
    rng = np.random.default_rng(0)
    start, end = (rng.normal(size=features["token_ids"].shape) for _ in range(2))
    answer = decode_answers(examples, features, start, end)["q"]
    candidates = answer["candidates"]
    assert len(candidates) == 20  # of 27 + 15 valid spans in the two windows
    scores = np.array([candidate["score"] for candidate in candidates])
    assert (np.diff(scores) <= 0).all()
    probabilities = np.array([candidate["probability"] for candidate in candidates])
    assert probabilities.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(probabilities, np.exp(scores) / np.exp(scores).sum(), rtol=1e-6)
    assert answer["probability"] == candidates[0]["probability"] == probabilities.max()
    assert len({(c["start"], c["end"]) for c in candidates}) == len(candidates)  # no duplicates
    three = decode_answers(examples, features, start, end, n_best=3)["q"]["candidates"]
    assert 1 <= len(three) <= 3
    assert sum(candidate["probability"] for candidate in three) == pytest.approx(1.0)


def test_trimmed_logits_use_the_first_columns_of_the_offsets(single):
    examples, features = single
    start, end = _logits(features, {(0, 11): 5.0}, {(0, 13): 5.0})
    full = decode_answers(examples, features, start, end)["q"]
    trimmed = decode_answers(examples, features, start[:, :15], end[:, :15])["q"]
    assert full == trimmed


def test_no_valid_candidate_gives_an_empty_answer(single):
    examples, features = single
    # With n_best=1 the only start tried is [CLS], outside the context.
    start, end = _logits(features, {(0, 0): 9.0, (0, 11): 5.0}, {(0, 13): 5.0})
    empty = {
        "text": "",
        "start": -1,
        "end": -1,
        "score": float("-inf"),
        "probability": 0.0,
        "candidates": [],
    }
    assert decode_answers(examples, features, start, end, n_best=1)["q"] == empty
    # An example without feature rows gets the same.
    unseen = examples + [Example("unseen", "", "Élodie.", "Who?", ())]
    answers = decode_answers(unseen, features, start, end)
    assert answers["unseen"] == empty and answers["q"]["text"] == "São Paulo."


@pytest.mark.parametrize(
    "change, message",
    [
        (
            {"start_logits": np.zeros((2, 16))},
            r"2-D \(rows, seq\) of one shape; received \(2, 16\)",
        ),
        (
            {"start_logits": np.zeros((2, 16)), "end_logits": np.zeros((2, 16))},
            "the features have 1 rows, the logits 2",
        ),
        (
            {"start_logits": np.zeros((1, 17)), "end_logits": np.zeros((1, 17))},
            "17 columns, more than the features' sequence length 16",
        ),
        ({"n_best": 0}, "n_best must be an int >= 1; received 0"),
        ({"max_answer_length": 0}, "max_answer_length must be an int >= 1; received 0"),
    ],
)
def test_bad_arguments_are_named(single, change, message):
    examples, features = single
    arguments = {"start_logits": np.zeros((1, 16)), "end_logits": np.zeros((1, 16))}
    arguments.update(change)
    with pytest.raises(ValueError, match=message):
        decode_answers(examples, features, **arguments)


def test_features_must_hold_offsets(single):
    examples, features = single
    partial = {key: value for key, value in features.items() if key != "max_context"}
    with pytest.raises(ValueError, match=r"missing \['max_context'\]"):
        decode_answers(examples, partial, np.zeros((1, 16)), np.zeros((1, 16)))
