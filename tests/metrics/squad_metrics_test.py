"""Fast tests of the SQuAD v1.1 scores, against hand-computed values and the official functions.

`_official_*` below are the answer-level functions of the official `evaluate-v1.1.py`, copied
verbatim apart from names; the kbert functions are checked against them on random answers.
"""

import doctest
import random
import re
import string
from collections import Counter

import pytest

from kbert.metrics import (
    exact_match_score,
    f1_score,
    metric_max_over_ground_truths,
    normalize_answer,
    squad_metrics,
    squad_scores,
)


def _official_normalize_answer(s):
    def remove_articles(text):
        return re.sub(r"\b(a|an|the)\b", " ", text)

    def white_space_fix(text):
        return " ".join(text.split())

    def remove_punc(text):
        exclude = set(string.punctuation)
        return "".join(ch for ch in text if ch not in exclude)

    def lower(text):
        return text.lower()

    return white_space_fix(remove_articles(remove_punc(lower(s))))


def _official_f1_score(prediction, ground_truth):
    prediction_tokens = _official_normalize_answer(prediction).split()
    ground_truth_tokens = _official_normalize_answer(ground_truth).split()
    common = Counter(prediction_tokens) & Counter(ground_truth_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(prediction_tokens)
    recall = 1.0 * num_same / len(ground_truth_tokens)
    f1 = (2 * precision * recall) / (precision + recall)
    return f1


def _official_exact_match_score(prediction, ground_truth):
    return _official_normalize_answer(prediction) == _official_normalize_answer(ground_truth)


def test_normalize_answer_in_the_official_order():
    assert normalize_answer("The Cat!") == "cat"
    assert normalize_answer("  An\tapple,  a\nday ") == "apple day"
    # Articles only as whole words.
    assert normalize_answer("Theater and another") == "theater and another"
    # Punctuation goes before articles: "a-team" becomes "ateam", not "team".
    assert normalize_answer("A-Team") == "ateam"
    assert normalize_answer("don't (1,000)") == "dont 1000"
    assert normalize_answer("The the A an") == ""


def test_exact_match_by_hand():
    assert exact_match_score("The Cat!", "cat") == 1.0
    assert exact_match_score("the  cat sat", "cat sat.") == 1.0
    assert exact_match_score("cat", "cats") == 0.0
    assert exact_match_score("", "the") == 1.0  # both normalize to ""
    assert isinstance(exact_match_score("a", "b"), float)


def test_f1_by_hand():
    # "cat sat" vs "cat sat on": 2 shared; P = 2/2, R = 2/3; F1 = 2PR / (P + R) = 0.8.
    assert f1_score("a cat sat", "the cat sat on") == pytest.approx(
        2 * (2 / 2 * 2 / 3) / (2 / 2 + 2 / 3)
    )
    assert f1_score("a cat sat", "the cat sat on") == pytest.approx(0.8)
    # Tokens count with repetition: "cat cat dog" vs "cat dog dog" share one cat and one dog.
    assert f1_score("cat cat dog", "cat dog dog") == pytest.approx(2 / 3)
    assert f1_score("Denver", "Denver Broncos") == pytest.approx(2 * 0.5 / 1.5)
    assert f1_score("Paris", "Paris.") == 1.0
    assert f1_score("dog", "cat") == 0.0
    # As in v1.1, an answer that normalizes to nothing shares no token: F1 0 even though EM 1.
    assert f1_score("the", "a") == 0.0
    assert isinstance(f1_score("dog", "cat"), float)


def test_max_over_ground_truths():
    ground_truths = ["Denver Broncos", "The Broncos", "Broncos team"]
    assert metric_max_over_ground_truths(exact_match_score, "broncos", ground_truths) == 1.0
    assert metric_max_over_ground_truths(f1_score, "Denver", ground_truths) == pytest.approx(2 / 3)
    # "denver team" shares one of two tokens with "denver broncos" and with "broncos team".
    assert metric_max_over_ground_truths(f1_score, "the Denver team", ground_truths) == 0.5
    assert metric_max_over_ground_truths(f1_score, "x", ("y", "x")) == 1.0


def test_matches_the_official_functions_on_random_answers():
    rng = random.Random(0)
    words = [
        "the",
        "a",
        "an",
        "The",
        "cat",
        "Cat!",
        "sat",
        "on",
        "mat,",
        "1,000",
        "a-b",
        "'",
        "theory",
        "An",
        "(x)",
        ".",
        "cat.",
    ]
    for _ in range(500):
        prediction = " ".join(rng.choices(words, k=rng.randint(0, 5)))
        ground_truth = " ".join(rng.choices(words, k=rng.randint(0, 5)))
        assert normalize_answer(prediction) == _official_normalize_answer(prediction)
        assert exact_match_score(prediction, ground_truth) == float(
            _official_exact_match_score(prediction, ground_truth)
        )
        assert f1_score(prediction, ground_truth) == _official_f1_score(prediction, ground_truth)


def test_squad_scores_by_hand_with_an_unanswered_question():
    references = {
        "q1": ["Denver Broncos", "Broncos"],  # EM 1, F1 1
        "q2": ["the cat sat on"],  # "a cat sat": EM 0, F1 0.8
        "q3": ["1998"],  # "1999": EM 0, F1 0
        "q4": ["Paris"],  # unanswered: 0, 0
    }
    predictions = {"q1": "the Broncos", "q2": "a cat sat", "q3": "1999"}
    scores = squad_scores(predictions, references)
    assert scores["exact_match"] == pytest.approx(100 * 1 / 4)
    assert scores["f1"] == pytest.approx(100 * (1 + 0.8) / 4)
    assert scores["num_questions"] == 4
    assert scores["num_unanswered"] == 1
    perfect = squad_scores({"q": "Paris"}, {"q": ["paris", "Lyon"]})
    assert perfect == {"exact_match": 100.0, "f1": 100.0, "num_questions": 1, "num_unanswered": 0}
    nothing = squad_scores({}, {"q": ["x"]})
    assert (nothing["exact_match"], nothing["f1"], nothing["num_unanswered"]) == (0.0, 0.0, 1)


def test_argument_errors_say_what_was_expected_and_received():
    with pytest.raises(ValueError, match="unknown id.*'q9'"):
        squad_scores({"q1": "x", "q9": "y"}, {"q1": ["x"]})
    with pytest.raises(ValueError, match=r"references\['q2'\] must hold at least one gold answer"):
        squad_scores({"q1": "x"}, {"q1": ["x"], "q2": []})
    with pytest.raises(
        ValueError,
        match=r"references\['q1'\] must be a list of gold answer texts; "
        r"received str 'x'",
    ):
        squad_scores({"q1": "x"}, {"q1": "x"})
    with pytest.raises(ValueError, match=r"predictions\['q1'\] must be a str; received list"):
        squad_scores({"q1": ["x"]}, {"q1": ["x"]})
    with pytest.raises(ValueError, match="references must hold at least one question"):
        squad_scores({}, {})
    with pytest.raises(ValueError, match="predictions must be a dict .* received list"):
        squad_scores(["x"], {"q1": ["x"]})
    with pytest.raises(ValueError, match="references must be a dict .* received list"):
        squad_scores({}, [["x"]])
    with pytest.raises(ValueError, match="ground_truths must hold at least one gold answer"):
        metric_max_over_ground_truths(f1_score, "x", [])
    with pytest.raises(ValueError, match="ground_truth must be a str; received NoneType"):
        exact_match_score("x", None)
    with pytest.raises(ValueError, match="s must be a str; received int 3"):
        normalize_answer(3)


def test_docstring_examples_run():
    results = doctest.testmod(squad_metrics)
    assert results.attempted > 0 and results.failed == 0
