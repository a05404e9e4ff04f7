"""The records of `benchmarks/transfer_probes.py`: their section of docs/results.md and README
headline."""

from pathlib import Path

from benchmarks.reports._common import markdown_table

STEMS = ("transfer_probes",)


def render(results):
    """Table of `benchmarks/transfer_probes.py`: probe accuracy per layer, starts and controls."""
    accuracy = results["probe_accuracy"]
    layers = max(len(values) for values in accuracy.values())
    header = ["encoder"] + ["emb"] + [str(layer) for layer in range(1, layers)]
    rows = [[name] + [f"{value:.3f}" for value in values] for name, values in accuracy.items()]
    gains = [
        f"{name} {gain['gain_points']:+.1f} points at layer {gain['layer']} "
        f"({gain['accuracy']:.3f} vs {results['control_of'][name]} {gain['control']:.3f})"
        for name, gain in results["best_layer_gain"].items()
    ]
    # Records since the layer is chosen on held-out questions, each start read its own way.
    chosen = "validation" in {gain.get("chosen_on") for gain in results["best_layer_gain"].values()}
    pooling = results.get("pooling")
    if isinstance(pooling, dict):
        ways = {"last": "at its last real token", "mean": "by the mean of its real tokens"}
        reading = ", ".join(f"{name} {ways.get(mode, mode)}" for name, mode in pooling.items())
        reading = f"the frozen layer read as each encoder was trained: {reading}"
    else:
        reading = f"the frozen, {pooling or 'mean'}-pooled layer"
    parts = [
        f"Linear probes (softmax regression on {reading}) trained on "
        f"{results['train_size']:,} TREC-6 questions, test accuracy on {results['test_size']} "
        f"(majority class {results['majority_class_acc']:.3f}); random controls are the mean of "
        f"{results['control_seeds']} seeds:",
        "",
        markdown_table(header, rows),
        "",
        (
            f"Layer chosen on {results['validation_size']} held-out training questions, its test "
            "accuracy against its control's at that layer: "
            if chosen
            else "Best layer (by test accuracy) against its control: "
        )
        + "; ".join(gains)
        + ".",
    ]
    if results.get("figure"):
        parts += ["", f"![probes]({Path(results['figure']).relative_to('docs')})"]
    return "\n".join(parts)


def headline(results):
    gains = ", ".join(
        f"{name} {gain['gain_points']:+.1f}" for name, gain in results["best_layer_gain"].items()
    )
    chosen = "validation" in {gain.get("chosen_on") for gain in results["best_layer_gain"].values()}
    layer = "layer chosen on validation" if chosen else "best layer"
    return f"frozen-layer linear probes on TREC-6, {layer} vs random weights (points): {gains}"
