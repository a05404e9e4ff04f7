"""The records of `benchmarks/transfer.py`: their section of docs/results.md and README headline."""

from pathlib import Path

from benchmarks.reports._common import markdown_table
from kbert.metrics.seed_comparison import format_difference

STEMS = ("transfer",)


def render(results):
    """Tables of `benchmarks/transfer.py`: the learning curve and the chosen learning rates."""
    curve = results["curve"]
    sizes = sorted({size for by_size in curve.values() for size in by_size}, key=int)
    chosen = results["chosen_learning_rate"]
    per_size = any(isinstance(rates, dict) for rates in chosen.values())
    rows = [
        [name]
        + ([] if per_size else [chosen[name]])
        + [
            f"{by_size[size]['mean']:.3f} ± {by_size[size]['sd']:.3f}"
            + (f" (lr {chosen[name][size]})" if per_size else "")
            for size in sizes
        ]
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
        markdown_table(
            ["start"] + ([] if per_size else ["lr"]) + [f"{int(size):,}" for size in sizes], rows
        ),
        "",
        *_selection(results["learning_rates"], per_size),
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


def _selection(learning_rates, per_size):
    """The validation accuracy of each rate: per start and size (seed 0's runs), or per start
    at 1,000 labels (records made before the rate was chosen per size)."""
    if not per_size:
        return [
            "Learning rate per start, chosen on 500 held-out training questions at 1,000 "
            "labels (validation accuracy):",
            "",
            markdown_table(
                ["start"] + list(next(iter(learning_rates.values()))),
                [
                    [name] + [f"{value:.3f}" for value in rates.values()]
                    for name, rates in learning_rates.items()
                ],
            ),
        ]
    rates = sorted(
        {rate for by_size in learning_rates.values() for s in by_size.values() for rate in s},
        key=float,
    )
    return [
        "Learning rate per start and labelled size, chosen on 500 held-out training questions "
        "by seed 0's run (validation accuracy):",
        "",
        markdown_table(
            ["start", "labelled"] + rates,
            [
                [name, f"{int(size):,}"] + [f"{scores[rate]:.3f}" for rate in rates]
                for name, by_size in learning_rates.items()
                for size, scores in by_size.items()
            ],
        ),
    ]


def _gap(gap):
    text = (
        f"{gap['pretrained_acc']:.3f} vs {gap['random_acc']:.3f} ({gap['gap_points']:+.1f} points"
    )
    if gap.get("difference"):
        text += f"; paired by seed {format_difference(gap['difference'], digits=1)}"
    return text + ")"


def _gaps_sentence(results):
    gaps = "; ".join(f"{name} {_gap(gap)}" for name, gap in results["gaps"].items())
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
