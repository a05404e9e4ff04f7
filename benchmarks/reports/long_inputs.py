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
    best = max(
        (
            (training, reading, value)
            for training, row in results["accuracy"].items()
            for reading, value in row.items()
        ),
        key=lambda item: item[2],
    )
    head = results["accuracy"].get("head", {}).get("head")
    return (
        f"IMDb reviews longer than {results['sequence_length']} tokens: best "
        f"{best[2]:.3f} (trained {best[0]}, read {best[1]})"
        + (f" vs {head:.3f} head-only" if head is not None else "")
    )
