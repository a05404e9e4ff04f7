"""The records of `labs/lab24_slicing.py`: their section and README headline."""

from benchmarks.reports._common import chosen_rates, markdown_table
from kbert.metrics.seed_comparison import format_difference

STEMS = ("lab24_slicing",)

# What the lab's source claims: stated under the record's title, above what it found.
CLAIM = "slice-based learning (Chen et al. 2019), the tutorial §4.3.B: slice-aware heads raise accuracy on the slices they serve without lowering it overall, and more than reweighting those slices"

MODELS = {
    "baseline": "plain fine-tuning",
    "slice_aware": "slice heads",
    "upweighted": "control: slices upweighted",
}


def _accuracy(row):
    spread = "" if row["sd"] is None else f" ± {row['sd']:.3f}"
    return f"{row['mean']:.3f}{spread} (n={len(row['runs'])})"


def _slice_rows(results):
    rows = []
    for name, sizes in results["slices"].items():
        validation = results["validation"]["slices"][name]
        test = results["baseline_test_slices"].get(name)
        rows.append(
            [
                name + (" (chosen)" if name in results["chosen"] else ""),
                f"{sizes['train']:,} / {sizes['validation']:,} / {sizes['test']:,}",
                "–" if validation["accuracy"] is None else f"{validation['accuracy']:.3f}",
                "–" if validation["gap"] is None else f"{100 * validation['gap']:+.1f}",
                "–" if test is None else f"{test:.3f}",
                sizes["example"] or "–",
            ]
        )
    return rows


def render(results):
    """Every slice's size and baseline accuracy, then the chosen slices' comparison on test."""
    rows = []
    for model, label in MODELS.items():
        for measure, row in results["summary"][model].items():
            size = (
                results["test_examples"]
                if measure == "overall"
                else results["test_slice_examples"][measure]
            )
            rows.append(
                [
                    label,
                    measure,
                    f"{size:,}",
                    _accuracy(row),
                    format_difference(row.get("vs_baseline")),
                    format_difference(row.get("vs_upweighted")),
                ]
            )
    settings = results.get("settings", {})
    described = ", ".join(f"{key} {value}" for key, value in settings.items())
    share = results["slice_share"]
    membership = ", ".join(f"{k} {v:.3f}" for k, v in results["membership_accuracy"].items())
    return "\n".join(
        [
            f"{results['model']} on TREC-6 ({described}). The slices, their sizes (train / "
            "validation / test), the baseline's validation accuracy and gap to overall in "
            "points (mean over seeds; the choice reads these), its test accuracy, and one "
            "training question each:",
            "",
            markdown_table(
                ["slice", "questions", "validation", "gap", "test", "example"],
                _slice_rows(results),
            ),
            "",
            f"Chosen on validation: {', '.join(results['chosen'])}. Test accuracy, mean ± sd "
            "over seeds; differences in points, paired by seed ('no difference' when the mean "
            f"is inside the sd). The membership heads agree with their rules on test: "
            f"{membership}. The control trains on the same questions as the others, the chosen "
            f"slices' share of the loss's weight raised from {share['train']:.3f} to "
            f"{share['upweighted']:.3f}.",
            "",
            markdown_table(
                ["model", "measure", "test questions", "accuracy", "vs baseline", "vs control"],
                rows,
            ),
        ]
        + _rates_lines(results)
    )


def _rates_lines(results):
    """Each model's peak rate chosen on overall validation accuracy at the first seed, with
    the rates tried ([] for records made before the choice)."""
    choices = results.get("rate_choices")
    if not choices:
        return []
    rates = chosen_rates(
        choices,
        MODELS,
        lambda row: f"{row['validation_accuracy']:.3f} / {row['test_accuracy']:.3f}",
    )
    return [
        "",
        "Each model's peak rate, chosen on overall validation accuracy at the first seed (per "
        "rate tried: validation / test accuracy; test never chooses): " + rates + ".",
    ]


def headline(results):
    summary = results["summary"]["slice_aware"]
    parts = [
        f"{measure}: {format_difference(row['vs_baseline'], digits=1)} vs baseline, "
        f"{format_difference(row['vs_upweighted'], digits=1)} vs upweighting"
        for measure, row in summary.items()
    ]
    return f"slice heads for {', '.join(results['chosen'])}: " + "; ".join(parts)
