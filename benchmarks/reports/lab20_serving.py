"""The records of `labs/lab20_serving.py`: their section of docs/results.md and README headline."""

from benchmarks.reports._common import markdown_table

STEMS = ("lab20_serving",)


def render(results):
    """Table of `labs/lab20_serving.py`: the export against `model.predict`, per batch size."""
    rows = [
        [
            name,
            row["batch_size"],
            f"{row['p50_ms']:.2f}",
            f"{row['p95_ms']:.2f}",
            f"{row['sentences_per_s']:,.1f}",
        ]
        for name, row in results["timings"].items()
    ]
    return "\n".join(
        [
            f"MiniLM-L6 fine-tuned on TREC-6 (test accuracy {results['test_accuracy']:.3f}), exported "
            "with the tokenizer in the graph and reloaded; the largest difference between the "
            f"export's and the Keras model's outputs: {results['max_abs_diff']:.1e}. "
            "Latency on raw text (export) and on tokenized input (Keras):",
            "",
            markdown_table(["path", "batch", "p50 ms", "p95 ms", "sentences/s"], rows),
        ]
    )


def headline(results):
    ratio = results["export_sentences_per_s"] / results["keras_sentences_per_s"]
    return (
        f"TREC-6 MiniLM-L6 exported for TF Serving: accuracy {results['test_accuracy']:.3f}, "
        f"{results['export_sentences_per_s']:,.0f} sentences/s from raw text vs "
        f"{results['keras_sentences_per_s']:,.0f} through model.predict ({ratio:.2f}x), "
        f"outputs differ by at most {results['max_abs_diff']:.1e}"
    )
