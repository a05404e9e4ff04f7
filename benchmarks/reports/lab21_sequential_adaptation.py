"""The records of `labs/lab21_sequential_adaptation.py`: their section and README headline."""

from benchmarks.reports._common import markdown_table
from kbert.metrics.seed_comparison import format_difference

STEMS = ("lab21_sequential_adaptation",)

# What the lab's source claims: stated under the record's title, above what it found.
CLAIM = "STILTs (Phang et al. 2018), the tutorial §4.3.B: training on a related data-rich task first helps the target, most where it has fewest labels, and more than a shuffled control"

STARTS = {
    "alone": "target alone",
    "sequential": "intermediate task, then target",
    "shuffled": "shuffled-label control, then target",
}
# Each start as the reading of a difference names its runs: "2 of 3 after mrpc".
WHERE = {"alone": "alone", "sequential": "after {intermediate}", "shuffled": "after the control"}
AGAINST = {"alone": "the target alone", "shuffled": "its shuffled control"}


def _accuracy(row):
    spread = "" if row["sd"] is None else f" ± {row['sd']:.3f}"
    return f"{row['mean']:.3f}{spread} (n={len(row['runs'])})"


def _landed(starts, compared, intermediate):
    """How many runs of each of the `compared` starts landed at the majority class ("" when none
    did): "runs at the majority class 2 of 3 after mrpc, 0 of 3 alone"."""
    if not any(starts[start]["runs_at_majority"] for start in compared):
        return ""
    return "runs at the majority class " + ", ".join(
        f"{starts[start]['runs_at_majority']} of {len(starts[start]['runs'])} "
        + WHERE[start].format(intermediate=intermediate)
        for start in compared
    )


def compared(starts, other, intermediate, digits=2):
    """The related task's start against `other` ("alone" or "shuffled"), paired by seed, in
    points, with its verdict; where either row has runs at the majority class, how many landed
    there beside it (STILTs also claims fewer degenerate runs: a gain may be exactly that)."""
    difference = format_difference(starts["sequential"][f"vs_{other}"], digits=digits)
    landed = _landed(starts, ("sequential", other), intermediate)
    return f"{difference}; {landed}" if landed else difference


def reading_lines(results):
    """What the record shows per target and size: the related task first, against the target
    alone and against its shuffled control, each difference read only where no run it compares
    landed at the majority class."""
    lines = [
        "What the differences show, the related task first against the target alone and "
        "against its shuffled control (test accuracy points, paired by seed; where a compared "
        "row has runs at the majority class, how many landed there):",
        "",
    ]
    for target, study in results["targets"].items():
        intermediate = study["intermediate"]
        for size, starts in study["sizes"].items():
            readings = "; ".join(
                f"against {AGAINST[other]} {compared(starts, other, intermediate)}"
                for other in ("alone", "shuffled")
            )
            lines.append(
                f"- {target} at {size} labelled, {intermediate} first (majority class "
                f"{study['majority_accuracy']:.3f}): {readings}."
            )
        gain = study.get("gain_fewest_minus_most")
        if gain:
            lines.append(
                f"- {target}: {intermediate}'s gain over the target alone at {gain['fewest']:,} "
                f"labelled minus its gain at {gain['most']:,}, paired by seed: "
                f"{format_difference(gain)} (the claim expects it better: most help at fewest "
                "labels)."
            )
    return lines


def render(results):
    """Test accuracy per target, labelled size and start, with the seed-paired differences,
    the majority class and the runs that landed there, and what the differences show."""
    rows = []
    chosen = any("rate_choices" in study for study in results["targets"].values())
    for target, study in results["targets"].items():
        for size, starts in study["sizes"].items():
            for start, label in STARTS.items():
                row = starts[start]
                choice = study.get("rate_choices", {}).get(size, {}).get(start)
                rate = [f"{choice['chosen']:g}" if choice else "–"] if chosen else []
                rows.append(
                    [
                        target,
                        size,
                        label.replace("intermediate task", study["intermediate"]),
                        *rate,
                        _accuracy(row),
                        format_difference(row.get("vs_alone")),
                        format_difference(row.get("vs_shuffled")),
                        f"{study['majority_accuracy']:.3f}",
                        f"{row['runs_at_majority']} of {len(row['runs'])}",
                    ]
                )
    settings = results.get("settings", {})
    described = ", ".join(f"{key} {value}" for key, value in settings.items())
    intermediates = "; ".join(
        f"{study['intermediate']} ({study['intermediate_examples']:,} examples, training "
        "accuracy after its epoch: "
        + ", ".join(f"{k} {v:.3f}" for k, v in study["intermediate_train_accuracy"].items())
        + f") before {target} ({study['test_examples']:,} test examples)"
        for target, study in results["targets"].items()
    )
    return "\n".join(
        [
            f"{results['model']} ({described}). Intermediate tasks: {intermediates}. Test "
            "accuracy, mean ± sd over seeds; differences in points, paired by seed ('no "
            "difference' when the mean is inside the sd); runs at the majority class (all one "
            "class, or accuracy within a point of it)"
            + (
                "; each start's target rate chosen on the target's held-out examples at the "
                "first seed:"
                if chosen
                else ":"
            ),
            "",
            markdown_table(
                [
                    "target",
                    "labelled",
                    "start",
                    *(["peak rate"] if chosen else []),
                    "test accuracy",
                    "vs target alone",
                    "vs shuffled control",
                    "majority",
                    "at majority",
                ],
                rows,
            ),
            "",
            *reading_lines(results),
        ]
    )


def headline(results):
    parts = []
    for target, study in results["targets"].items():
        for size, starts in study["sizes"].items():
            name = study["intermediate"].upper()
            landed = _landed(starts, ("sequential", "alone"), name)
            parts.append(
                f"{target.upper()} at {size}, {name} first vs alone (points): "
                + compared(starts, "alone", name, digits=1)
                + (
                    f" (majority {study['majority_accuracy']:.3f})"
                    if target == "rte" or landed
                    else ""
                )
            )
    return "; ".join(parts)
