"""Extractive question-answering scores: the official SQuAD v1.1 evaluation, in plain Python.

`normalize_answer`, `exact_match_score`, `f1_score` and `metric_max_over_ground_truths` follow
`evaluate-v1.1.py` from the SQuAD site line for line, so the numbers can be compared with
published SQuAD v1.1 results:

- an answer is normalized by lower-casing it, removing the characters of `string.punctuation`,
  removing the words "a", "an" and "the", and collapsing whitespace, in that order;
- exact match is 1 when the normalized prediction equals the normalized gold answer;
- F1 is over the normalized whitespace tokens, counted with repetition (bag of words), and is 0
  when no token is shared, including when either answer normalizes to nothing;
- each question scores the best over its gold answers, and a question without a prediction
  scores 0.

Two differences from the script, neither of which changes a number: the per-answer scores are
floats (the script returns a bool and sometimes the int 0), and an unanswered question is counted
in `num_unanswered` instead of being printed. SQuAD v2.0's script differs (an empty answer scores
1 against an empty gold answer); it is not implemented here.
"""

import re
import string
from collections import Counter
from collections.abc import Mapping

_PUNCTUATION = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def _check_text(text, what):
    if not isinstance(text, str):
        raise ValueError(f"{what} must be a str; received {type(text).__name__} {text!r}")


def normalize_answer(s):
    """Lower-cases an answer and removes punctuation, articles and extra whitespace.

    Args:
        s: str, an answer text.

    Returns:
        str, `white_space_fix(remove_articles(remove_punc(lower(s))))` as in the official script.

    Example:
    >>> normalize_answer("  The Eiffel-Tower, in  Paris!")
    'eiffeltower in paris'
    """
    _check_text(s, "s")
    text = s.lower()
    text = "".join(character for character in text if character not in _PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def exact_match_score(prediction, ground_truth):
    """Returns 1.0 when the two answers are equal after `normalize_answer`, else 0.0.

    Args:
        prediction: str, the predicted answer text.
        ground_truth: str, one gold answer text.

    Returns:
        float, 1.0 or 0.0.

    Example:
    >>> exact_match_score("The Cat!", "cat"), exact_match_score("a cat", "cats")
    (1.0, 0.0)
    """
    _check_text(prediction, "prediction")
    _check_text(ground_truth, "ground_truth")
    return float(normalize_answer(prediction) == normalize_answer(ground_truth))


def f1_score(prediction, ground_truth):
    """Token-level F1 between two answers after `normalize_answer`.

    Args:
        prediction: str, the predicted answer text.
        ground_truth: str, one gold answer text.

    Returns:
        float in [0, 1]: 2PR / (P + R) over the normalized tokens shared with repetition (a
        `Counter` intersection); 0.0 when no token is shared.

    Example:
    >>> # Normalized: "cat sat" vs "cat sat on"; P = 2/2, R = 2/3, F1 = 0.8.
    >>> round(f1_score("a cat sat", "the cat sat on"), 4)
    0.8
    """
    _check_text(prediction, "prediction")
    _check_text(ground_truth, "ground_truth")
    prediction_tokens = normalize_answer(prediction).split()
    ground_truth_tokens = normalize_answer(ground_truth).split()
    common = Counter(prediction_tokens) & Counter(ground_truth_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return 0.0
    precision = num_same / len(prediction_tokens)
    recall = num_same / len(ground_truth_tokens)
    return (2 * precision * recall) / (precision + recall)


def _check_ground_truths(ground_truths, what):
    if isinstance(ground_truths, (str, bytes)) or not isinstance(ground_truths, (list, tuple)):
        raise ValueError(
            f"{what} must be a list of gold answer texts; received "
            f"{type(ground_truths).__name__} {ground_truths!r}"
        )
    if not ground_truths:
        raise ValueError(f"{what} must hold at least one gold answer; received []")


def metric_max_over_ground_truths(metric_fn, prediction, ground_truths):
    """The best score of a prediction over several gold answers.

    Args:
        metric_fn: callable `(prediction, ground_truth) -> float`, e.g. `f1_score`.
        prediction: str, the predicted answer text.
        ground_truths: non-empty list of str, the gold answer texts of one question.

    Returns:
        float, the maximum of `metric_fn(prediction, ground_truth)` over `ground_truths`.

    Example:
    >>> metric_max_over_ground_truths(exact_match_score, "Denver Broncos",
    ...                               ["Broncos", "the Denver Broncos"])
    1.0
    """
    _check_ground_truths(ground_truths, "ground_truths")
    return max(metric_fn(prediction, ground_truth) for ground_truth in ground_truths)


def squad_scores(predictions, references):
    """SQuAD v1.1 exact match and F1 of a set of predictions, in percent.

    Every question of `references` counts: one missing from `predictions` scores 0 (the official
    script prints "Unanswered question ... will receive score 0."; here it is counted in
    "num_unanswered").

    Args:
        predictions: dict {question id: predicted answer text (str)}.
        references: dict {question id: list of gold answer texts (str), at least one}. From a
            SQuAD JSON file: `{qa["id"]: [a["text"] for a in qa["answers"]]}` over every
            `qa` of every paragraph of every article.

    Returns:
        dict with "exact_match" and "f1" (float, percent in [0, 100], averaged over every
        question of `references`), "num_questions" (int, `len(references)`) and
        "num_unanswered" (int, questions without a prediction).

    Example:
    >>> scores = squad_scores({"q1": "the Broncos", "q2": "in 1999"},
    ...                       {"q1": ["Denver Broncos", "Broncos"], "q2": ["1998"], "q3": ["x"]})
    >>> round(scores["exact_match"], 2), round(scores["f1"], 2), scores["num_unanswered"]
    (33.33, 33.33, 1)
    """
    if not isinstance(predictions, Mapping):
        raise ValueError(
            "predictions must be a dict {question id: answer text}; received "
            f"{type(predictions).__name__}"
        )
    if not isinstance(references, Mapping):
        raise ValueError(
            "references must be a dict {question id: list of gold answer texts}; received "
            f"{type(references).__name__}"
        )
    if not references:
        raise ValueError("references must hold at least one question; received an empty dict")
    unknown = [question_id for question_id in predictions if question_id not in references]
    if unknown:
        shown = ", ".join(repr(question_id) for question_id in unknown[:5])
        more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
        raise ValueError(
            "every prediction id must be a question of references; received "
            f"{len(unknown)} unknown id(s): {shown}{more}"
        )
    exact_match = f1 = 0.0
    num_unanswered = 0
    for question_id, ground_truths in references.items():
        _check_ground_truths(ground_truths, f"references[{question_id!r}]")
        if question_id not in predictions:
            num_unanswered += 1
            continue
        prediction = predictions[question_id]
        _check_text(prediction, f"predictions[{question_id!r}]")
        exact_match += metric_max_over_ground_truths(exact_match_score, prediction, ground_truths)
        f1 += metric_max_over_ground_truths(f1_score, prediction, ground_truths)
    total = len(references)
    return {
        "exact_match": 100.0 * exact_match / total,
        "f1": 100.0 * f1 / total,
        "num_questions": total,
        "num_unanswered": num_unanswered,
    }
