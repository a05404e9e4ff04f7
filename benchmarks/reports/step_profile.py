"""The records of `benchmarks/step_profile.py`: where a training step's time goes, by op kind."""

from benchmarks.reports._common import markdown_table

STEMS = ("step_profile",)


def render(results):
    """Per model: ms per step, tokens/s and each kind's ms of op time per dtype, and the
    bfloat16 / float32 time ratio per kind."""
    parts = [
        f"One training step (forward, loss, backward, AdamW) at batch {results['batch_size']} × "
        f"{results['sequence_length']} tokens, traced {results['trace_steps']} step(s) with "
        "TensorFlow's profiler; op time is summed over threads, per step.",
    ]
    for model, rows in results["models"].items():
        dtypes = [dtype for dtype in rows if dtype != "bf16_over_fp32"]
        kinds = list(dict.fromkeys(kind for d in dtypes for kind in rows[d]["kinds"]))
        table = [
            ["step (wall)"] + [f"{rows[d]['step_ms']:,.1f} ms" for d in dtypes],
            ["tokens/s"] + [f"{rows[d]['tokens_per_s']:,.0f}" for d in dtypes],
        ]
        table += [
            [kind] + [f"{rows[d]['kinds'].get(kind, 0.0):,.1f}" for d in dtypes] for kind in kinds
        ]
        header = ["", *dtypes]
        ratios = rows.get("bf16_over_fp32")
        if ratios:
            header.append("bf16 / fp32")
            for row in table:
                row.append(f"{ratios[row[0]]:.2f}" if row[0] in ratios else "")
            table[0][-1] = f"{rows['mixed_bfloat16']['step_ms'] / rows['float32']['step_ms']:.2f}"
        parts += ["", f"**{model}** (op ms per step)", "", markdown_table(header, table)]
    return "\n".join(parts)


def headline(results):
    steps, worst = [], set()
    for model, rows in results["models"].items():
        if {"float32", "mixed_bfloat16"} <= set(rows):
            fp32, bf16 = rows["float32"]["kinds"], rows["mixed_bfloat16"]["kinds"]
            added = {kind: bf16.get(kind, 0.0) - fp32.get(kind, 0.0) for kind in {*fp32, *bf16}}
            worst.add(max(sorted(added), key=added.get))
            step = rows["mixed_bfloat16"]["step_ms"] / rows["float32"]["step_ms"]
            steps.append(f"{model} {step:.2f}")
    return (
        f"training step time, bf16 / fp32: {', '.join(steps)} "
        f"(op time added most by {', '.join(sorted(worst))})"
    )
