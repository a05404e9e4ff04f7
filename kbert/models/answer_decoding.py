"""From start/end logits over context windows back to answer text in the original context."""

import numpy as np

from kbert.checks import check_int

_FEATURE_KEYS = ("example_index", "context_start_offsets", "context_end_offsets", "max_context")


def _window_candidates(
    start_logits, end_logits, starts, ends, max_context, n_best, max_answer_length
):
    """Valid (start token, end token, score) triples among one row's top starts and ends."""
    top_starts = np.argsort(-start_logits, kind="stable")[:n_best]  # (k,)
    top_ends = np.argsort(-end_logits, kind="stable")[:n_best]  # (k,)
    first, last = top_starts[:, None], top_ends[None, :]  # (k, 1), (1, k)
    valid = (
        (starts[first] >= 0)
        & max_context[first]
        & (ends[last] >= 0)
        & (last >= first)
        & (last - first + 1 <= max_answer_length)
    )  # (k, k)
    score = start_logits[first] + end_logits[last]  # (k, k)
    rows, columns = np.nonzero(valid)
    return [
        (int(top_starts[i]), int(top_ends[j]), float(score[i, j]))
        for i, j in zip(rows, columns, strict=True)
    ]


def decode_answers(examples, features, start_logits, end_logits, n_best=20, max_answer_length=30):
    """Picks each example's best answer span and returns it as text of the original context.

    For every feature row (context window), the candidates are the pairs of one of the
    `n_best` highest start logits and one of the `n_best` highest end logits where both tokens
    are context tokens (offsets >= 0), the start token is "max context" in this window (so a
    start seen in two overlapping windows is counted once), end >= start and the span has at
    most `max_answer_length` tokens; a candidate's score is start logit + end logit. Over all
    windows of an example, the `n_best` best-scoring candidates are kept (BERT's and Hugging
    Face's `postprocess_qa_predictions`); their probabilities are a softmax of their scores.
    The text is `context[start_char:end_char]` of the original context, so casing, accents and
    inner whitespace are kept.

    An example without any valid candidate (or without feature rows) gets the answer text "",
    start = end = -1, score -inf, probability 0.0 and no candidates.

    Args:
        examples: sequence of objects with attributes `id` and `context` (str), the ones the
            features were built from.
        features: dict from `kbert.data.question_answering_features`; reads `example_index`,
            `context_start_offsets`, `context_end_offsets` and `max_context`.
        start_logits: numpy array `(rows, seq)` aligned with the feature rows; `seq` may be less
            than the features' sequence length (batches trimmed to their longest row), and
            then only the first `seq` columns of the offsets are used.
        end_logits: numpy array, the same shape as `start_logits`.
        n_best: int, default 20. Starts and ends tried per window, and candidates kept per
            example.
        max_answer_length: int, default 30. Most tokens in an answer.

    Returns:
        dict from each example's `id` to a dict with `text` (str), `start` and `end` (int
        character offsets in the context, end exclusive), `score` (float), `probability`
        (float) and `candidates`: the kept candidates, best first, each a dict with the same
        five keys (the first one is the answer).

    Example:
    >>> import collections
    >>> Example = collections.namedtuple("Example", "id context")
    >>> features = {"example_index": np.array([0]),
    ...             "context_start_offsets": np.array([[-1, -1, 0, 4, -1]]),
    ...             "context_end_offsets": np.array([[-1, -1, 3, 8, -1]]),
    ...             "max_context": np.array([[False, False, True, True, False]])}
    >>> start = np.array([[0.0, 0.0, 1.0, 3.0, 0.0]])
    >>> end = np.array([[0.0, 0.0, 0.0, 2.0, 0.0]])
    >>> answer = decode_answers([Example("q1", "Bob Ruiz")], features, start, end)["q1"]
    >>> answer["text"], answer["start"], answer["end"], answer["score"]
    ('Ruiz', 4, 8, 5.0)
    """
    for name, value in (("n_best", n_best), ("max_answer_length", max_answer_length)):
        check_int(name, value, minimum=1)
    missing = [key for key in _FEATURE_KEYS if key not in features]
    if missing:
        raise ValueError(
            f"features need {list(_FEATURE_KEYS)}; missing {missing} among keys {sorted(features)}"
        )
    examples = list(examples)
    start_logits = np.asarray(start_logits, np.float64)
    end_logits = np.asarray(end_logits, np.float64)
    example_index = np.asarray(features["example_index"])
    offsets_shape = np.shape(features["context_start_offsets"])
    if start_logits.ndim != 2 or start_logits.shape != end_logits.shape:
        raise ValueError(
            "start_logits and end_logits must be 2-D (rows, seq) of one shape; "
            f"received {start_logits.shape} and {end_logits.shape}"
        )
    if start_logits.shape[0] != len(example_index):
        raise ValueError(
            f"the logits must have one row per feature row: the features have "
            f"{len(example_index)} rows, the logits {start_logits.shape[0]}"
        )
    width = start_logits.shape[1]
    if width > offsets_shape[1]:
        raise ValueError(
            f"the logits have {width} columns, more than the features' sequence "
            f"length {offsets_shape[1]}"
        )
    if len(example_index) and not 0 <= example_index.min() <= example_index.max() < len(examples):
        raise ValueError(
            f"example_index must point into the {len(examples)} examples; received "
            f"values from {example_index.min()} to {example_index.max()}"
        )
    starts = np.asarray(features["context_start_offsets"])[:, :width]  # (rows, width)
    ends = np.asarray(features["context_end_offsets"])[:, :width]  # (rows, width)
    max_context = np.asarray(features["max_context"], bool)[:, :width]  # (rows, width)

    candidates = [[] for _ in examples]
    for row, index in enumerate(example_index):
        for first, last, score in _window_candidates(
            start_logits[row],
            end_logits[row],
            starts[row],
            ends[row],
            max_context[row],
            n_best,
            max_answer_length,
        ):
            candidates[index].append((score, int(starts[row, first]), int(ends[row, last])))

    answers = {}
    for example, found in zip(examples, candidates, strict=True):
        # Stable sort: on equal scores the earlier window and the higher-ranked start win.
        found = sorted(found, key=lambda candidate: -candidate[0])[:n_best]
        if not found:
            answers[example.id] = {
                "text": "",
                "start": -1,
                "end": -1,
                "score": float("-inf"),
                "probability": 0.0,
                "candidates": [],
            }
            continue
        scores = np.array([score for score, _, _ in found])
        probabilities = np.exp(scores - scores.max())
        probabilities /= probabilities.sum()
        kept = [
            {
                "text": example.context[start:end],
                "start": start,
                "end": end,
                "score": score,
                "probability": float(probability),
            }
            for (score, start, end), probability in zip(found, probabilities, strict=True)
        ]
        answers[example.id] = dict(kept[0], candidates=kept)
    return answers
