"""The records of `benchmarks/serving.py`: their section of docs/results.md and README headline."""

from benchmarks.reports._common import markdown_table

STEMS = ("serving",)


SERVING_SIDES = {
    "kbert": "kbert SavedModel (session loader)",
    "kbert_fixed": "kbert SavedModel, rows at sequence_length",
    "kbert_bf16": "kbert SavedModel in bfloat16",
    "kbert_xla": "kbert SavedModel, small batches through XLA",
    "ort": "HF fast tokenizer + ONNX Runtime",
    "ort_optimized": "HF fast tokenizer + ONNX Runtime, optimized",
}


def render(results):
    """Tables of `benchmarks/serving.py`: kbert's exported `classify` vs ONNX Runtime."""
    batch = results["batch_size"]
    lines = [
        f"MiniLM-L6 with a {results['num_classes']}-class head, the same weights on every side, "
        f"end to end from raw text, length {results['sequence_length']}, median of "
        f"{results['passes']} passes on {results['cpu_count']} cores. The ratio is kbert's "
        "speed over each side's (above 1: kbert is faster); the difference is the largest "
        "absolute difference of log-probabilities from kbert's.",
    ]
    agreements = [
        f"{name} {entry['label_agreement_kbert_bf16']:.1%}"
        for name, entry in results["datasets"].items()
        if "label_agreement_kbert_bf16" in entry
    ]
    if agreements:
        lines[0] += (
            " The bfloat16 export gives the float32 export's label to "
            + ", ".join(agreements)
            + " of the texts."
        )
    for name, entry in results["datasets"].items():
        rows = []
        for side, label in SERVING_SIDES.items():
            if side not in entry:
                continue
            if side == "kbert_xla" and "xla_rows" in results:
                label += f" (1 to {results['xla_rows']} rows)"
            timing = entry[side]
            ratio = entry.get(f"ratio_kbert_over_{side}")
            difference = entry.get(f"max_abs_diff_{side}")
            rows.append(
                [
                    label,
                    f"{timing['batch1_p50_ms']:.2f}",
                    f"{timing['batch1_p95_ms']:.2f}",
                    f"{timing['batch_sentences_per_s']:,.1f}",
                    f"{ratio['batch1_p50']:.2f}× / {ratio['batch']:.2f}×" if ratio else "",
                    f"{difference:.1e}" if difference is not None else "",
                ]
            )
        lines += [
            "",
            f"{name} ({entry['examples']} test texts):",
            "",
            markdown_table(
                [
                    "side",
                    "batch 1 p50 ms",
                    "batch 1 p95 ms",
                    f"batch {batch} sentences/s",
                    "kbert / side (batch 1 / batch)",
                    "max abs Δ log-prob",
                ],
                rows,
            ),
        ]
    return "\n".join(lines)


def headline(results):
    """Each dataset's batch throughput and batch-1 p50 latency (and the XLA export's batch-1 p50
    where the record has it) beside plain ONNX Runtime's (the way practitioners run it; the
    optimized graph's numbers are in the section)."""
    parts = []
    for name, entry in results["datasets"].items():
        mine = entry["kbert"]
        text = f"{name} {mine['batch_sentences_per_s']:,.0f}/s, p50 {mine['batch1_p50_ms']:g} ms"
        if "kbert_xla" in entry:
            text += f" (XLA {entry['kbert_xla']['batch1_p50_ms']:g} ms)"
        if "ort" in entry:
            peer = entry["ort"]
            text += f" (ORT {peer['batch_sentences_per_s']:,.0f}/s, {peer['batch1_p50_ms']:g} ms)"
        parts.append(text)
    return "classify from raw text, batch 32 / 1: " + "; ".join(parts)
