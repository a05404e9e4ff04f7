"""The records of `benchmarks/pair_stability.py`: their section of docs/results.md and README
headline."""

from benchmarks.reports._common import markdown_table
from kbert.metrics.seed_comparison import format_difference

STEMS = ("pair_stability",)
LABELS = {
    "default": "lab12's default",
    "small_rate": "smaller rate, warmup",
    "more_epochs": "more epochs",
    "both": "smaller rate, warmup, more epochs",
}


def render(results):
    """Table of `benchmarks/pair_stability.py`: each setting over seeds, beside the majority."""
    majority = results["majority_accuracy"]
    rows = []
    for name, row in results["rows"].items():
        settings = row["settings"]
        chosen = " (chosen on validation)" if name == results["chosen_on_validation"] else ""
        rows.append(
            [
                LABELS.get(name, name) + chosen,
                f"{settings['learning_rate']:g}",
                f"{settings['warmup_fraction']:g}",
                f"{settings['epochs']}",
                _mean_sd(row["val_mean"], row["val_sd"]),
                _mean_sd(row["test_mean"], row["test_sd"]) + f" (n={row['seeds']})",
                format_difference(row["difference"]),
                f"{row['runs_at_majority']} of {row['seeds']} (majority {majority:.3f})",
            ]
        )
    return "\n".join(
        [
            f"{results['model']} read by its {results['pooling']} pooling on "
            f"{results['task'].upper()}: {results['train']:,} training pairs, "
            f"{results['validation']:,} held out for validation (each run keeps its best "
            f"validation epoch), {results['test']:,} test pairs (GLUE dev); batch "
            f"{results['batch_size']}, {results['sequence_length']} tokens, "
            f"{results['seeds']} seed(s). The difference is seed-paired, to lab12's default, in "
            "test points (mean ± sd of the per-seed differences). A run is at the majority "
            "class when its test predictions are all one class or its accuracy is within a "
            "point of the majority's (`kbert.metrics.majority_class`).",
            "",
            markdown_table(
                [
                    "setting",
                    "peak rate",
                    "warmup",
                    "epochs",
                    "validation (mean ± sd)",
                    "test (mean ± sd)",
                    "test vs default",
                    "runs at the majority class",
                ],
                rows,
            ),
        ]
    )


def headline(results):
    chosen = results["chosen_on_validation"]
    row = results["rows"][chosen]
    default = results["rows"]["default"]
    return (
        f"{results['task'].upper()} on {results['model']}: chosen on validation "
        f"{LABELS.get(chosen, chosen)}, test {row['test_mean']:.3f} vs default "
        f"{default['test_mean']:.3f}; runs at the majority class "
        + ", ".join(
            f"{LABELS.get(name, name)} {each['runs_at_majority']} of {each['seeds']}"
            for name, each in results["rows"].items()
        )
    )


def _mean_sd(mean, sd):
    return f"{mean:.3f}" + ("" if sd is None else f" ± {sd:.3f}")
