"""Reading a comparison over seeds: mean ± sd per setting, the seed-paired difference to a
baseline, the Markdown table, and the choice of a setting on validation.

`kbert.train.adaptation_comparison` runs the comparisons and re-exports these; a lab or
benchmark that has result rows (`label`, `method`, `start`, `seed`, `accuracy`,
`validation_accuracy`, `trainable_params`, `trainable_pct`, `train_s`) reads them with:

    summaries = summarize(rows, baseline="full")
    print(format_summary_table(summaries))
    chosen = choose_on_validation(summaries)   # {(start, method): the row validation chose}
"""

import numpy as np

from kbert.metrics.seed_comparison import format_difference, paired_difference


def summarize(rows, baseline=None):
    """Mean ± sd of accuracy over seeds per (start, label); list of dicts in first-seen order.

    Each summary: `start`, `label`, `method`, `seeds` (count), `learning_rate`,
    `trainable_params`, `trainable_pct`, `acc_mean`, `acc_sd` (sample sd over seeds; None for
    one run), `val_mean` (mean validation accuracy; None when the rows have none), `train_s`
    (mean seconds per run), `epochs` (the epochs every run trained; None if they differ or
    were not recorded), `runs_at_majority` (runs whose test predictions landed at the majority
    class; None for rows saved before runs recorded it), `runs` (each run's `seed` and test
    `accuracy`, so any two rows can be paired later), and with `baseline` (a label; a dict
    label → its baseline's label,
    or a callable giving each summary's baseline label or None, for rows compared with
    different baselines) `difference`: the seed-paired test accuracy difference to the
    baseline's row of the same start, and `baseline`, that row's label (None with no difference)
    (`kbert.metrics.seed_comparison.paired_difference`: mean, sd, n and "better", "worse" or
    "no difference"), None for the baseline itself, for a row without seeds in common with it
    (an ensemble) and for a start without the baseline.
    """
    groups = {}
    for row in rows:
        groups.setdefault((row["start"], row["label"]), []).append(row)
    summaries = []
    for (start, label), group in groups.items():
        accuracies = np.array([row["accuracy"] for row in group])
        validation = [row.get("validation_accuracy") for row in group]
        summaries.append(
            {
                "start": start,
                "label": label,
                "method": group[0]["method"],
                "seeds": len(group),
                "learning_rate": group[0].get("learning_rate"),
                "trainable_params": group[-1]["trainable_params"],
                "trainable_pct": group[-1]["trainable_pct"],
                "acc_mean": float(accuracies.mean()),
                "acc_sd": float(accuracies.std(ddof=1)) if len(group) > 1 else None,
                "val_mean": None if None in validation else float(np.mean(validation)),
                "train_s": float(np.mean([row["train_s"] for row in group])),
                "epochs": _common(group, "epochs"),
                "runs_at_majority": _count(group, "at_majority"),
                "runs": [{"seed": row["seed"], "accuracy": row["accuracy"]} for row in group],
            }
        )
    if baseline is not None:
        for summary in summaries:
            label = _baseline_of(summary, baseline)
            summary["difference"] = _difference_to(groups, summary, label)
            summary["baseline"] = None if summary["difference"] is None else label
    return summaries


def _common(group, key):
    """The value every row of `group` has under `key`, or None (absent, or not all equal)."""
    values = {row.get(key) for row in group}
    return values.pop() if len(values) == 1 else None


def _count(group, key):
    """How many rows of `group` have `key` true; None when a row lacks it (an older row)."""
    if any(key not in row for row in group):
        return None
    return sum(bool(row[key]) for row in group)


def _baseline_of(summary, baseline):
    """The label `summary` is compared with: `baseline` itself, its entry, or its answer."""
    if isinstance(baseline, dict):
        return baseline.get(summary["label"])
    if callable(baseline):
        return baseline(summary)
    return baseline


def _difference_to(groups, summary, baseline):
    """The seed-paired difference of `summary`'s runs to the `baseline` label's (or None)."""
    base = groups.get((summary["start"], baseline))
    if base is None or summary["label"] == baseline:
        return None
    by_seed = {row["seed"]: row["accuracy"] for row in base if row["seed"] is not None}
    pairs = [
        (row["accuracy"], by_seed[row["seed"]])
        for row in groups[(summary["start"], summary["label"])]
        if row["seed"] in by_seed
    ]
    if not pairs:
        return None
    values, reference = zip(*pairs, strict=True)
    return paired_difference(values, reference)


def format_summary_table(summaries):
    """A Markdown table of `summarize`'s rows (with a validation column when they have one)."""
    validation = any(row.get("val_mean") is not None for row in summaries)
    paired = any("difference" in row for row in summaries)
    lines = [
        "| start | method | trainable params | "
        + ("validation accuracy (mean) | " if validation else "")
        + "test accuracy (mean ± sd, n) | "
        + ("Δ to the baseline, paired (points) | " if paired else "")
        + "train s |",
        "|---|---|---:|"
        + ("---:|" if validation else "")
        + "---:|"
        + ("---:|" if paired else "")
        + "---:|",
    ]
    for row in summaries:
        spread = "" if row["acc_sd"] is None else f" ± {100 * row['acc_sd']:.2f}"
        cell = ""
        if validation:
            value = row.get("val_mean")
            cell = ("–" if value is None else f"{100 * value:.2f}") + " | "
        difference = f"{format_difference(row.get('difference'))} | " if paired else ""
        lines.append(
            f"| {row['start']} | {row['label']} | {row['trainable_params']:,} "
            f"({row['trainable_pct']:.2f}%) | {cell}{100 * row['acc_mean']:.2f}{spread} "
            f"(n={row['seeds']}) | {difference}{row['train_s']:.1f} |"
        )
    return "\n".join(lines)


def choose_on_validation(summaries, family=None):
    """The setting with the best mean validation accuracy per (start, family of settings).

    How a hyperparameter is chosen without looking at test: every setting of a method (its
    peak rate, factor, λ …) is one row of `summarize`; within a family the row with the highest
    `val_mean` wins (the first listed on a tie), and its test accuracy is what gets reported.

    Args:
        summaries: list of `summarize` rows, each with a `val_mean`.
        family: callable or None. `family(row)` names a row's family; default its `method`.

    Returns:
        dict `{(start, family): summary row}` in first-seen order.

    Raises:
        ValueError: a row without validation accuracy (the data had no "validation" split).
    """
    family = family or (lambda row: row["method"])
    chosen = {}
    for row in summaries:
        if row.get("val_mean") is None:
            raise ValueError(
                f"row {row['start']}/{row['label']} has no validation accuracy: pass data "
                "with a 'validation' split to compare_methods"
            )
        key = (row["start"], family(row))
        if key not in chosen or row["val_mean"] > chosen[key]["val_mean"]:
            chosen[key] = row
    return chosen
