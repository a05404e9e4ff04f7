"""Comparing two methods over seeds: mean ± sd of each, and the paired difference.

Two methods run with the same seeds see the same data order and the same initial head, so the
fair question is how far apart they land *per seed*: the paired difference Δ_s = a_s − b_s,
its mean and its sample sd. A mean difference no larger than that sd (or one measured on a
single seed) is inside the spread and is reported as "no difference": with three seeds, that
is the most the numbers can say.

    >>> paired_difference([0.93, 0.92, 0.94], [0.90, 0.91, 0.90])["verdict"]
    'better'
    >>> paired_difference([0.91, 0.93], [0.92, 0.92])["verdict"]
    'no difference'
"""

import math

import numpy as np

VERDICTS = ("better", "worse", "no difference")


def mean_sd(values):
    """`(mean, sample sd)` of a list of numbers; the sd is None for a single value.

    Raises:
        ValueError: `values` is empty or holds something that is not a finite number.
    """
    values = _numbers(values, "values")
    sd = float(np.std(values, ddof=1)) if len(values) > 1 else None
    return float(np.mean(values)), sd


def paired_difference(values, baseline):
    """The seed-paired difference `values − baseline` and what it says.

    Args:
        values: list of float, one per seed (a method's accuracies).
        baseline: list of float, the baseline's on the same seeds, in the same order.

    Returns:
        dict: `mean` (mean of the per-seed differences), `sd` (their sample sd; None for one
        seed), `n` (seeds), `verdict`: "better" or "worse" when |mean| is larger than `sd`,
        else "no difference" (always for one seed: there is no spread to compare with).

    Raises:
        ValueError: the lists are empty, of different lengths, or hold non-finite numbers.
    """
    values = _numbers(values, "values")
    baseline = _numbers(baseline, "baseline")
    if len(values) != len(baseline):
        raise ValueError(
            f"values and baseline must pair seed by seed; received {len(values)} and "
            f"{len(baseline)} numbers"
        )
    differences = [a - b for a, b in zip(values, baseline, strict=True)]
    mean, sd = mean_sd(differences)
    return {"mean": mean, "sd": sd, "n": len(differences), "verdict": verdict(mean, sd)}


def verdict(mean, sd):
    """ "better" / "worse" when |mean| > sd, else "no difference" (also when sd is None)."""
    if sd is None or abs(mean) <= sd:
        return "no difference"
    return "better" if mean > 0 else "worse"


def format_difference(difference, scale=100.0, digits=2):
    """`"+1.20 ± 0.40 (better)"`: a `paired_difference` in points (×100 by default)."""
    if difference is None:
        return "–"
    spread = "" if difference["sd"] is None else f" ± {scale * difference['sd']:.{digits}f}"
    return f"{scale * difference['mean']:+.{digits}f}{spread} ({difference['verdict']})"


def _numbers(values, name):
    values = list(values)
    if not values:
        raise ValueError(f"{name} must hold at least one number; received an empty list")
    bad = [value for value in values if not _finite(value)]
    if bad:
        raise ValueError(f"{name} must be finite numbers; received {bad[:3]!r} among them")
    return [float(value) for value in values]


def _finite(value):
    return isinstance(value, (int, float, np.floating, np.integer)) and math.isfinite(value)
