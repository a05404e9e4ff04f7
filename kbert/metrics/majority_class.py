"""Runs that landed at the majority class: fine-tuning's known failure on small sets.

Mosbach et al. (2021) find BERT runs on RTE, MRPC and CoLA that end predicting one class. One
definition serves every report that counts them (lab12, `benchmarks/pair_stability.py`): a run
is *at the majority* when its test predictions are all one class, or when its accuracy is within
`NEAR_MAJORITY` (1 point) of always answering the most frequent test class. A run a little above
the majority is counted too: on RTE's 277 test pairs one point is about three pairs, well inside what
a degenerate run reaches by chance.

    >>> majority_accuracy([0, 0, 1, 0])
    0.75
    >>> at_majority([1, 1, 1, 1], [0, 0, 1, 0])  # one class only
    True
    >>> at_majority([0, 0, 1, 0], [0, 0, 1, 0])  # every answer right
    False
"""

import numpy as np

# Accuracy within this of the majority class's counts as at the majority (one point).
NEAR_MAJORITY = 0.01


def majority_accuracy(labels):
    """The accuracy of always answering the most frequent class of `labels`.

    Args:
        labels: sequence of int class ids (a test split's gold labels).

    Returns:
        float in (0, 1].

    Raises:
        ValueError: `labels` is empty or not a flat sequence of ints.
    """
    labels = _class_ids(labels, "labels")
    return float(np.bincount(labels).max() / len(labels))


def at_majority(predictions, labels, tolerance=NEAR_MAJORITY):
    """Whether a run landed at the majority class (see the module docstring).

    Args:
        predictions: sequence of int, the run's predicted class ids.
        labels: sequence of int, the gold class ids, in the same order.
        tolerance: float in [0, 1), default `NEAR_MAJORITY` (0.01). Accuracy at most this far
            above (or anywhere below) the majority class's counts as at the majority.

    Returns:
        bool: the predictions are all one class, or their accuracy ≤ majority + `tolerance`.

    Raises:
        ValueError: empty or non-int sequences, different lengths, or a bad `tolerance`.
    """
    predictions = _class_ids(predictions, "predictions")
    labels = _class_ids(labels, "labels")
    if len(predictions) != len(labels):
        raise ValueError(
            f"predictions and labels must have one entry per example; received "
            f"{len(predictions)} and {len(labels)}"
        )
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)):
        raise ValueError(f"tolerance must be a number in [0, 1); received {tolerance!r}")
    if not 0.0 <= tolerance < 1.0:
        raise ValueError(f"tolerance must be in [0, 1); received {tolerance!r}")
    if len(np.unique(predictions)) == 1:
        return True
    accuracy = float(np.mean(predictions == labels))
    # Counts of examples, compared as counts: no float rounding at the boundary.
    return accuracy * len(labels) <= (majority_accuracy(labels) + tolerance) * len(labels) + 1e-9


def _class_ids(values, name):
    array = np.asarray(values)
    if array.ndim != 1 or array.size == 0:
        raise ValueError(
            f"{name} must be a non-empty flat sequence of class ids; received shape {array.shape}"
        )
    if not np.issubdtype(array.dtype, np.integer) or array.min() < 0:
        raise ValueError(
            f"{name} must hold class ids (ints >= 0); received {array.dtype} values "
            f"such as {array[:3].tolist()!r}"
        )
    return array.astype(np.int64)
