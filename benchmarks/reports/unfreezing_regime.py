"""The records of `benchmarks/unfreezing_regime.py`: their section of docs/results.md and README
headline."""

from benchmarks.reports._common import markdown_table
from kbert.metrics.seed_comparison import format_difference

STEMS = ("unfreezing_regime",)


def _mean_sd(row):
    spread = "" if row["acc_sd"] is None else f" ± {row['acc_sd']:.3f}"
    return f"{row['acc_mean']:.3f}{spread}"


def render(results):
    """Per start, each labelled size's chosen rows (paired to full), then the whole rate grid."""
    settings = results["settings"]
    parts = [
        f"TREC-6 at {', '.join(f'{size:,}' for size in settings['sizes'])} labelled questions, "
        f"{settings['seeds']} seeds, batch {settings['batch_size']}; ULMFiT's regime for every "
        "method (one layer group thawed per epoch from the top, slanted triangular rates, "
        "discriminative rates ÷2.6 per group), full fine-tuning on the same rates and epochs. "
        "Each method's top rate is chosen on validation at each size (the grid below, chosen "
        "in bold); Δ is the chosen row's test accuracy minus the chosen full fine-tuning's, "
        "seed by seed (mean ± sd of the per-seed differences, in points). Test = TREC_10.",
    ]
    runs = [
        row
        for by_size in results["studies"].values()
        for outcome in by_size.values()
        for row in outcome["rows"]
    ]
    total = sum(row["train_s"] * row["seeds"] for row in runs)
    parts.append(
        f"\nTraining time summed over the {sum(row['seeds'] for row in runs)} runs: "
        f"{total / 60:,.0f} min."
    )
    for start, by_size in results["studies"].items():
        about = results["starts"][start]
        compared, grid = [], []
        for size, outcome in by_size.items():
            labels = f"{int(size):,}"
            chosen = {row["chosen"] for row in outcome["compared"]}
            for row in outcome["compared"]:
                compared.append(
                    [
                        labels,
                        row["method"],
                        f"{row['learning_rate']:g}",
                        f"{row['val_mean']:.3f}",
                        _mean_sd(row),
                        format_difference(row["difference"]),
                    ]
                )
            for row in outcome["rows"]:
                mark = "**" if row["label"] in chosen else ""
                grid.append(
                    [
                        labels,
                        row["method"],
                        f"{row['learning_rate']:g}",
                        f"{mark}{row['val_mean']:.3f}{mark}",
                        f"{mark}{_mean_sd(row)}{mark}",
                        f"{row['train_s']:.0f}",
                    ]
                )
        header = ["labels", "method", "top rate", "validation"]
        parts += [
            "",
            f"**{start}** ({about['layer_groups']} layer groups thawed, {about['epochs']} epochs)",
            "",
            markdown_table(header + ["test (mean ± sd)", "Δ to full, paired (points)"], compared),
            "",
            f"Every top rate ({start}):",
            "",
            markdown_table(header + ["test (mean ± sd)", "train s"], grid),
        ]
    return "\n".join(parts)


def headline(results):
    """Each start and size: gradual unfreezing's and chain-thaw's paired difference to full."""
    parts = []
    for start, by_size in results["studies"].items():
        for size, outcome in by_size.items():
            differences = [
                f"{row['method']} {format_difference(row['difference'])}"
                for row in outcome["compared"]
                if row["method"] != "full"
            ]
            parts.append(f"{start}, {int(size):,} labels: " + ", ".join(differences))
    return "TREC-6, ULMFiT's regime, Δ test to full (points, paired): " + "; ".join(parts)
