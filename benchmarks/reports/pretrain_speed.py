"""The records of `benchmarks/pretrain_speed.py`: their section of docs/results.md and README
headline."""

from benchmarks.reports._common import markdown_table

STEMS = ("pretrain_speed",)


def _speed_rows(results):
    return {
        name: value
        for name, value in results.items()
        if isinstance(value, dict) and "tokens_per_s" in value
    }


def render(results):
    """Table of `benchmarks/pretrain_speed.py`: causal-LM training tokens/s and MFU."""
    rows = [
        [name, f"{value['tokens_per_s']:,.0f}", f"{value['mfu']:.1%}"]
        for name, value in _speed_rows(results).items()
    ]
    size = f", {results['parameters'] / 1e6:.1f}M parameters" if "parameters" in results else ""
    return "\n".join(
        [
            f"Causal-LM training steps of preset `{results['preset']}`{size}, batch "
            f"{results['batch_size']} × {results['sequence_length']} tokens; matmul peak "
            f"measured in the same run: float32 {results['peak_gflops']['float32']:.0f}, "
            f"bfloat16 {results['peak_gflops']['mixed_bfloat16']:.0f} GFLOP/s.",
            "",
            markdown_table(["configuration", "tokens/s", "MFU"], rows),
        ]
    )


def headline(results):
    name, best = max(_speed_rows(results).items(), key=lambda item: item[1]["tokens_per_s"])
    return (
        f"`{results['preset']}` causal-LM pretraining: {best['tokens_per_s']:,.0f} tokens/s "
        f"({name}, MFU {best['mfu']:.1%})"
    )
