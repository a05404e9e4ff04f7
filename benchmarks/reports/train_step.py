"""The records of `benchmarks/train_step.py`: their section of docs/results.md and README
headline."""

from benchmarks.reports._common import bfloat16_speedup, markdown_table, torch_peer_section

STEMS = ("train_step",)


def render(results):
    """Tables of `benchmarks/train_step.py`: kbert vs keras-hub tokens/s and MFU per setting, and
    kbert vs the PyTorch peer per dtype where the record has it."""
    parts = [
        f"One training step (forward, backward, AdamW) of MiniLM-L6 + a classifier, batch "
        f"{results['configuration']['batch_size']} × {results['configuration']['sequence_length']}"
        f" positions; matmul peak measured in the same run: float32 "
        f"{results['peak_gflops']['float32']:.0f}, bfloat16 "
        f"{results['peak_gflops']['mixed_bfloat16']:.0f} GFLOP/s. MFU counts real tokens only."
    ]
    workloads = {results["workload"]: results} | {
        name: value
        for name, value in results.items()
        if isinstance(value, dict) and "configurations" in value
    }
    for name, workload in workloads.items():
        rows = [
            [
                row["dtype"],
                "yes" if row["jit_compile"] else "no",
                f"{row['kbert_tokens_per_s']:,.0f}",
                f"{row['kbert_mfu']:.1%}",
                f"{row['keras_hub_tokens_per_s']:,.0f}" if "ratio" in row else "—",
                f"{row['keras_hub_mfu']:.1%}" if "ratio" in row else "—",
                f"{row['ratio']:.2f}" if "ratio" in row else "—",
            ]
            for row in workload.get("configurations", [])
        ]
        parts += [
            "",
            f"Workload `{name}` ({workload['real_token_fraction']:.0%} of the positions are "
            "real tokens):",
            "",
            markdown_table(
                [
                    "dtype",
                    "XLA",
                    "kbert tok/s",
                    "kbert MFU",
                    "keras-hub tok/s",
                    "keras-hub MFU",
                    "ratio",
                ],
                rows,
            ),
        ]
        speedup = bfloat16_speedup(_speeds(workload), results["peak_gflops"])
        if speedup:
            parts += ["", f"Without XLA, {speedup}"]
        parts += torch_peer_section(
            workload.get("torch"),
            results.get("torch_peer"),
            "transformers' BertModel (SDPA attention) from the same checkpoint, same head, "
            "inputs and AdamW",
        )
    return "\n".join(parts)


def _speeds(workload):
    """Per side, (float32, mixed_bfloat16) tokens/s without XLA, from one workload's rows."""
    rows = {
        row["dtype"]: row for row in workload.get("configurations", []) if not row["jit_compile"]
    }
    torch = workload.get("torch", {})

    def pair(read):
        return tuple(read(dtype) for dtype in ("float32", "mixed_bfloat16"))

    return {
        "kbert": pair(lambda dtype: rows.get(dtype, {}).get("kbert_tokens_per_s")),
        "keras-hub": pair(lambda dtype: rows.get(dtype, {}).get("keras_hub_tokens_per_s")),
        "PyTorch": pair(lambda dtype: torch.get(dtype, {}).get("torch_tokens_per_s")),
    }


def headline(results):
    best = results["configuration"]
    text = (
        f"MiniLM-L6 training step: kbert {results['kbert_tokens_per_s']:,.0f} tokens/s "
        f"({best['dtype']}{', XLA' if best['jit_compile'] else ''}; MFU "
        f"{results['mfu']:.1%})"
    )
    if "ratio" in results:
        text += f", {results['ratio']:.2f}x keras-hub in the same setting"
    if best["dtype"] in results.get("torch", {}):
        text += f", {results['torch'][best['dtype']]['ratio']:.2f}x PyTorch in {best['dtype']}"
    return text
