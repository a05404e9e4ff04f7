"""Accuracy on each data slice beside the accuracy overall."""

import numpy as np


def slice_accuracy(labels, predictions, slices):
    """Each slice's size, accuracy and gap to the accuracy over all examples.

    Args:
        labels: int array-like `(n,)`. The true classes.
        predictions: int array-like `(n,)`. The predicted classes.
        slices: dict, slice name → bool array-like `(n,)` (`kbert.analysis.data_slices`).

    Returns:
        dict: `overall` (accuracy over all n) and `slices`, name → `{"examples", "accuracy",
        "gap"}` with `gap` = slice accuracy − overall (negative: the model does worse there);
        `accuracy` and `gap` are None for an empty slice.

    Example:
    >>> report = slice_accuracy([0, 1, 1, 0], [0, 1, 0, 0], {"odd": [False, True, False, True]})
    >>> report["overall"], report["slices"]["odd"]["accuracy"]
    (0.75, 1.0)
    """
    labels, predictions = np.asarray(labels), np.asarray(predictions)
    if labels.ndim != 1 or labels.shape != predictions.shape or not len(labels):
        raise ValueError(
            "labels and predictions must be non-empty 1-D arrays of the same length; received "
            f"shapes {labels.shape} and {predictions.shape}"
        )
    correct = labels == predictions
    overall = float(correct.mean())
    report = {}
    for name, members in slices.items():
        members = np.asarray(members, dtype=bool)
        if members.shape != labels.shape:
            raise ValueError(
                f"slice {name!r} must be a bool array of {len(labels)} entries (one per "
                f"example); received shape {members.shape}"
            )
        count = int(members.sum())
        accuracy = float(correct[members].mean()) if count else None
        report[name] = {
            "examples": count,
            "accuracy": accuracy,
            "gap": None if accuracy is None else accuracy - overall,
        }
    return {"overall": overall, "slices": report}
