"""Which slices a model fails on: the largest accuracy gaps among slices big enough to trust."""

from kbert.checks import check_int


def worst_slices(report, min_examples=20, count=2):
    """The `count` slices with the most negative gap to overall accuracy.

    Choose on a validation split, never on test: the chosen slices are then trained for and
    reported on test, where the choice could not have seen the answers.

    Args:
        report: dict from `kbert.metrics.slice_accuracy.slice_accuracy` (its `slices`).
        min_examples: int >= 1, default 20. Slices with fewer examples are not ranked (their
            accuracy is too noisy to say the model fails there).
        count: int >= 1, default 2. How many slices to return.

    Returns:
        list of slice names, worst first; only slices whose gap is below 0, so it can be
        shorter than `count` (empty when the model does no worse anywhere).

    Example:
    >>> report = {"overall": 0.8, "slices": {
    ...     "a": {"examples": 30, "accuracy": 0.5, "gap": -0.3},
    ...     "b": {"examples": 5, "accuracy": 0.0, "gap": -0.8},
    ...     "c": {"examples": 40, "accuracy": 0.9, "gap": 0.1}}}
    >>> worst_slices(report, min_examples=20, count=2)
    ['a']
    """
    min_examples = check_int("min_examples", min_examples, minimum=1)
    count = check_int("count", count, minimum=1)
    if not isinstance(report, dict) or "slices" not in report:
        raise ValueError("report must be slice_accuracy's dict, with a 'slices' entry")
    ranked = sorted(
        (row["gap"], name)
        for name, row in report["slices"].items()
        if row["examples"] >= min_examples and row["gap"] is not None and row["gap"] < 0
    )
    return [name for _, name in ranked[:count]]
