"""The records of `benchmarks/transfer.py`: their section of docs/results.md and README headline."""

from pathlib import Path

from benchmarks.reports._common import markdown_table

STEMS = ("transfer",)


def render(results):
    """Tables of `benchmarks/transfer.py`: the learning curve and the chosen learning rates."""
    curve = results["curve"]
    sizes = sorted({size for by_size in curve.values() for size in by_size}, key=int)
    rows = [
        [name, results["chosen_learning_rate"][name]]
        + [f"{by_size[size]['mean']:.3f} ± {by_size[size]['sd']:.3f}" for size in sizes]
        for name, by_size in curve.items()
    ]
    parts = []
    if results.get("gaps"):
        parts += [f"**{_gaps_sentence(results)}**", ""]
    elif results.get("objective"):  # records made before the headline size was declared
        parts += [
            f"**Best gap at ≤ 1,000 labels:** {results['objective']} "
            f"{results['pretrained_acc']:.3f} vs {results['control']} "
            f"{results['random_acc']:.3f} with {results['labelled']:,} labelled questions "
            f"({results['gap_points']:+.1f} points, mean of {results['seeds']} seeds).",
            "",
        ]
    parts += [
        f"TREC-6 test accuracy (mean ± sd over {results['seeds']} seeds; majority class "
        f"{results['majority_class_acc']:.3f}) by labelled training questions:",
        "",
        markdown_table(["start", "lr"] + [f"{int(size):,}" for size in sizes], rows),
        "",
        "Learning rate per start, chosen on 500 held-out training questions at 1,000 "
        "labels (validation accuracy):",
        "",
        markdown_table(
            ["start"] + list(next(iter(results["learning_rates"].values()))),
            [
                [name] + [f"{value:.3f}" for value in rates.values()]
                for name, rates in results["learning_rates"].items()
            ],
        ),
    ]
    controls = {
        name: ("random_causal" if name == "causal" else "random_bidirectional")
        for name in curve
        if not name.startswith("random_")
    }
    gaps = [
        f"{name} vs {control}: "
        + ", ".join(
            f"{int(size):,}: {100 * (curve[name][size]['mean'] - curve[control][size]['mean']):+.1f}"
            for size in sizes
        )
        for name, control in controls.items()
        if control in curve
    ]
    if gaps:
        parts += [
            "",
            "Gap to the random control in points, by labelled questions: " + "; ".join(gaps) + ".",
        ]
    if results.get("figure"):
        parts += ["", f"![learning curve]({Path(results['figure']).relative_to('docs')})"]
    return "\n".join(parts)


def _gaps_sentence(results):
    gaps = "; ".join(
        f"{name} {gap['pretrained_acc']:.3f} vs {gap['random_acc']:.3f} "
        f"({gap['gap_points']:+.1f} points)"
        for name, gap in results["gaps"].items()
    )
    return (
        f"TREC-6 with {results['headline_size']:,} labels, each start vs the random init of "
        f"its architecture: {gaps}; mean of {results['seeds']} seeds"
    )


def headline(results):
    if "gaps" in results:
        return _gaps_sentence(results) if results["gaps"] else "no pretrained start measured"
    if not results.get("objective"):
        return "no pretrained start measured"
    return (
        f"TREC-6 with {results['labelled']:,} labels: {results['objective']} start "
        f"{results['pretrained_acc']:.3f} vs random init {results['random_acc']:.3f} "
        f"({results['gap_points']:+.1f} points, {results['seeds']} seeds)"
    )
