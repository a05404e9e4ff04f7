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


def over_seeds(runs, metrics, spread=None, digits=None):
    """Each metric's mean over seeds, and its sd as `{metric}_sd`: one lab row from its runs.

    Args:
        runs: list of dict, one per seed, each holding every name in `metrics`.
        metrics: names to average.
        spread: names (among `metrics`) that also get `{metric}_sd`; default all of them.
        digits: int or None. Round means and sds to this many decimals; None keeps them whole.

    Returns:
        dict: `metric` → mean and `{metric}_sd` → sample sd (None for one seed).

    Raises:
        ValueError: `runs` is empty, a run lacks a metric, or a value is not a finite number.

        >>> over_seeds([{"f1": 90.0}, {"f1": 92.0}], ["f1"])
        {'f1': 91.0, 'f1_sd': 1.4142135623730951}
    """
    if not runs:
        raise ValueError("runs must hold at least one seed's results; received an empty list")
    spread = metrics if spread is None else spread
    row = {}
    for metric in metrics:
        missing = [index for index, run in enumerate(runs) if metric not in run]
        if missing:
            raise ValueError(
                f"every run must hold {metric!r}; runs {missing[:3]} lack it "
                f"(they hold {sorted(runs[missing[0]])})"
            )
        try:
            mean, sd = mean_sd([run[metric] for run in runs])
        except ValueError as error:
            raise ValueError(f"{metric!r} over seeds: {error}") from None
        row[metric] = _rounded(mean, digits)
        if metric in spread:
            row[f"{metric}_sd"] = _rounded(sd, digits)
    return row


def seed_summary(values, digits=4):
    """One setting's per-seed values as a table cell: `{"mean", "sd", "runs"}` (sd None for
    one seed), mean and sd rounded to `digits`.

    Raises:
        ValueError: `values` is empty or holds something that is not a finite number.
    """
    mean, sd = mean_sd(values)
    return {"mean": _rounded(mean, digits), "sd": _rounded(sd, digits), "runs": list(values)}


def summarize_arms(values_by_arm, baseline, digits=4):
    """Each arm's `seed_summary`, and for every other arm its `paired_difference` to
    `baseline` under `"vs_<baseline>"` (none when `baseline` is not among the arms).

    Args:
        values_by_arm: dict arm → list of float over seeds, every arm in the same seed order.
        baseline: str, the arm the others are compared with.

        >>> rows = summarize_arms({"alone": [0.8, 0.82], "sequential": [0.85, 0.88]}, "alone")
        >>> rows["sequential"]["vs_alone"]["verdict"]
        'better'
    """
    rows = {}
    for arm, values in values_by_arm.items():
        rows[arm] = seed_summary(values, digits)
        if arm != baseline and baseline in values_by_arm:
            rows[arm][f"vs_{baseline}"] = paired_difference(values, values_by_arm[baseline])
    return rows


def _rounded(value, digits):
    return value if value is None or digits is None else round(value, digits)


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
