"""The records of `benchmarks/long_inputs.py`: their section of docs/results.md and README
headline."""

from benchmarks.reports._common import markdown_table

STEMS = ("long_inputs",)


def render(results):
    """Table of `benchmarks/long_inputs.py`: accuracy by training x reading strategy, speed."""
    readings = list(results["reviews_per_s"])
    rows = [
        [training, f"{results['train_seconds'][training]:,.0f}"]
        + [f"{row[reading]:.4f}" if reading in row else "-" for reading in readings]
        for training, row in results["accuracy"].items()
    ]
    rows.append(
        ["reviews/s (reading)", ""] + [f"{results['reviews_per_s'][r]:.1f}" for r in readings]
    )
    rows.append(
        ["windows per review", ""] + [f"{results['windows_per_review'][r]:.2f}" for r in readings]
    )
    return "\n".join(
        [
            f"{results['model']} fine-tuned on {results['train_reviews']:,} IMDb training reviews "
            f"({results['epochs']} epochs, {results['sequence_length']} tokens per window) once "
            "per training strategy, each model then read every way; accuracy on the first "
            f"{results['test_reviews']:,} test reviews longer than the window:",
            "",
            markdown_table(["trained on", "train s"] + readings, rows),
        ]
    )


def headline(results):
    """Sun et al.'s comparison (a model trained and read on the head + tail against head-only),
    and the same head-trained model read by windows: fixed rows, none picked by its test score
    (the record holds no validation split to choose on)."""
    accuracy = results["accuracy"]
    parts = []
    if "head_tail" in accuracy.get("head_tail", {}) and "head" in accuracy.get("head", {}):
        parts.append(
            f"head + tail {accuracy['head_tail']['head_tail']:.3f} vs head-only "
            f"{accuracy['head']['head']:.3f}"
        )
    if "window_mean" in accuracy.get("head", {}):
        parts.append(
            f"the head-trained model read by window means {accuracy['head']['window_mean']:.3f}"
        )
    return f"IMDb reviews longer than {results['sequence_length']} tokens: " + "; ".join(parts)
