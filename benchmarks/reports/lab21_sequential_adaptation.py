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


def _accuracy(row):
    spread = "" if row["sd"] is None else f" ± {row['sd']:.3f}"
    return f"{row['mean']:.3f}{spread} (n={len(row['runs'])})"


def render(results):
    """Test accuracy per target, labelled size and start, with the seed-paired differences."""
    rows = []
    for target, study in results["targets"].items():
        for size, starts in study["sizes"].items():
            for start, label in STARTS.items():
                row = starts[start]
                rows.append(
                    [
                        target,
                        size,
                        label.replace("intermediate task", study["intermediate"]),
                        _accuracy(row),
                        format_difference(row.get("vs_alone")),
                        format_difference(row.get("vs_shuffled")),
                        f"{study['majority_accuracy']:.3f}",
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
            "difference' when the mean is inside the sd):",
            "",
            markdown_table(
                [
                    "target",
                    "labelled",
                    "start",
                    "test accuracy",
                    "vs target alone",
                    "vs shuffled control",
                    "majority",
                ],
                rows,
            ),
        ]
    )


def headline(results):
    parts = []
    for target, study in results["targets"].items():
        for size, starts in study["sizes"].items():
            parts.append(
                f"{target.upper()} at {size}: {study['intermediate'].upper()} first "
                f"{format_difference(starts['sequential']['vs_alone'], digits=1)} points"
                + (f" (majority {study['majority_accuracy']:.3f})" if target == "rte" else "")
            )
    return "; ".join(parts)
