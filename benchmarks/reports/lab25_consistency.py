"""The records of `labs/lab25_consistency.py`: their section and README headline."""

from benchmarks.reports._common import markdown_table
from kbert.metrics.seed_comparison import format_difference

STEMS = ("lab25_consistency",)

# What the lab's source claims: stated under the record's title, above what it found.
CLAIM = "UDA (Xie et al. 2019), the tutorial §4.3.B: a consistency loss on unlabelled inputs and their perturbations helps, most where labels are fewest"


def _arm(arm):
    return "supervised only" if arm == "supervised" else f"+ consistency ({arm})"


def _accuracy(row):
    spread = "" if row["sd"] is None else f" ± {row['sd']:.3f}"
    return f"{row['mean']:.3f}{spread} (n={len(row['runs'])})"


def render(results):
    """Test accuracy per label count and arm, with the seed-paired difference to supervised."""
    rows = [
        [size, _arm(arm), _accuracy(row), format_difference(row.get("vs_supervised"))]
        for size, arms in results["sizes"].items()
        for arm, row in arms.items()
    ]
    settings = results.get("settings", {})
    described = ", ".join(f"{key} {value}" for key, value in settings.items())
    unlabelled = ", ".join(
        f"{count:,} beside {size} labels" for size, count in results["unlabelled_examples"].items()
    )
    return "\n".join(
        [
            f"{results['model']} on TREC-6 ({described}). Unlabelled questions (the rest of the "
            f"training file, labels dropped): {unlabelled}; the epoch kept on "
            f"{results['validation_examples']:,} held-out questions; "
            f"{results['test_examples']:,} test questions, majority class "
            f"{results['majority_accuracy']:.3f}. Test accuracy, mean ± sd over seeds; "
            "differences in points, paired by seed ('no difference' when the mean is inside "
            "the sd):",
            "",
            markdown_table(["labels", "arm", "test accuracy", "vs supervised only"], rows),
        ]
    )


def headline(results):
    parts = []
    for size, arms in results["sizes"].items():
        for arm, row in arms.items():
            if arm != "supervised":
                parts.append(
                    f"TREC-6 at {size} labels: consistency ({arm}) "
                    f"{format_difference(row['vs_supervised'], digits=1)} points"
                )
    return "; ".join(parts)
