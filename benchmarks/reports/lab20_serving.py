"""The records of `labs/lab20_serving.py`: their section of docs/results.md and README headline.

`lab20_serving` is the default run (TREC-6, float32); `lab20_serving_bf16` and
`lab20_serving_sst2_bf16` (runs with `--dtype bfloat16`, the second with `--task sst2`) also hold
a `dtype_comparison`: the same classifier exported in float32 and in bfloat16, side by side.
"""

from benchmarks.reports._common import markdown_table

STEMS = ("lab20_serving",)

# What the lab's source claims: stated under the record's title, above what it found.
CLAIM = "an exported SavedModel answers as the Keras model does up to float rounding, and a bfloat16 export keeps the accuracy while serving faster where the CPU computes bfloat16"


# A record's `task` (absent before `--task` existed: TREC-6) and how its accuracy is named.
TASKS = {"trec": ("TREC-6", "test accuracy"), "sst2": ("SST-2", "GLUE dev accuracy")}


def render(results):
    """Table of `labs/lab20_serving.py`: the export against `model.predict`, per batch size;
    with a `dtype_comparison`, the float32 and bfloat16 exports side by side."""
    title, accuracy_name = TASKS[results.get("task", "trec")]
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
    dtype = results.get("dtype", "float32")
    computing = "" if dtype == "float32" else f" computing in {dtype}"
    parts = [
        f"MiniLM-L6 fine-tuned on {title} ({accuracy_name} {results['test_accuracy']:.3f}), "
        f"exported{computing} with the tokenizer in the graph and reloaded; the "
        "largest difference between the export's and the Keras model's outputs: "
        f"{results['max_abs_diff']:.1e}. Latency on raw text (export) and on tokenized input "
        "(Keras):",
        "",
        markdown_table(["path", "batch", "p50 ms", "p95 ms", "sentences/s"], rows),
    ]
    if "dtype_comparison" in results:
        parts += ["", dtype_comparison(results["dtype_comparison"])]
    return "\n".join(parts)


def dtype_comparison(comparison):
    """The float32 and bfloat16 exports of one classifier: accuracy, its change, speed."""
    rows = [
        [
            dtype,
            f"{comparison[f'{dtype}_accuracy']:.4f}",
            f"{comparison[f'{dtype}_timings']['batch32']['sentences_per_s']:,.1f}",
            f"{comparison[f'{dtype}_timings']['batch1']['p50_ms']:.2f}",
            f"{comparison[f'{dtype}_timings']['batch1']['p95_ms']:.2f}",
        ]
        for dtype in ("float32", "bfloat16")
    ]
    speedup = (
        comparison["bfloat16_timings"]["batch32"]["sentences_per_s"]
        / comparison["float32_timings"]["batch32"]["sentences_per_s"]
    )
    return "\n".join(
        [
            "The same fine-tuned classifier exported in float32 and in bfloat16, each called "
            f"through its `classify` signature on {comparison['evaluation']} "
            f"({comparison['examples']:,} texts):",
            "",
            markdown_table(
                [
                    "export",
                    "accuracy",
                    "batch 32 sentences/s",
                    "batch 1 p50 ms",
                    "batch 1 p95 ms",
                ],
                rows,
            ),
            "",
            f"bfloat16 − float32 accuracy: {100 * comparison['accuracy_difference']:+.2f} "
            f"points; the same label on {100 * comparison['label_agreement']:.2f}% of the texts; "
            "the largest change of a probability: "
            f"{comparison['max_abs_probability_difference']:.1e}; bfloat16 / float32 "
            f"throughput at batch 32: {speedup:.2f}x.",
        ]
    )


def headline(results):
    title, accuracy_name = TASKS[results.get("task", "trec")]
    ratio = results["export_sentences_per_s"] / results["keras_sentences_per_s"]
    line = (
        f"{title} MiniLM-L6 exported for TF Serving: accuracy {results['test_accuracy']:.3f}, "
        f"{results['export_sentences_per_s']:,.0f} sentences/s from raw text vs "
        f"{results['keras_sentences_per_s']:,.0f} through model.predict ({ratio:.2f}x), "
        f"outputs differ by at most {results['max_abs_diff']:.1e}"
    )
    comparison = results.get("dtype_comparison")
    if comparison is not None:
        line += (
            f"; bfloat16 − float32 accuracy {100 * comparison['accuracy_difference']:+.2f} "
            f"points, same label on {100 * comparison['label_agreement']:.2f}%"
        )
    return line
