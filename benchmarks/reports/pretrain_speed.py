"""The records of `benchmarks/pretrain_speed.py`: their section of docs/results.md and README
headline."""

from benchmarks.reports._common import bfloat16_speedup, markdown_table, torch_peer_section

STEMS = ("pretrain_speed",)


def _speed_rows(results):
    return {
        name: value
        for name, value in results.items()
        if isinstance(value, dict) and "tokens_per_s" in value
    }


def render(results):
    """Tables of `benchmarks/pretrain_speed.py`: causal-LM training tokens/s and MFU, and kbert vs
    the PyTorch peer per dtype where the record has it."""
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
            *_speedup(results),
            *torch_peer_section(
                results.get("torch"),
                results.get("torch_peer"),
                "transformers' GPT2LMHeadModel of the same sizes (random weights, tied output "
                "without a bias, SDPA attention), same batch of random tokens",
            ),
        ]
    )


def _speedup(results):
    """The bfloat16 / float32 sentence (without XLA) as a paragraph, or nothing."""
    speeds, torch = _speed_rows(results), results.get("torch", {})

    def pair(read):
        return tuple(read(dtype) for dtype in ("float32", "mixed_bfloat16"))

    sentence = bfloat16_speedup(
        {
            "kbert": pair(lambda dtype: speeds.get(dtype, {}).get("tokens_per_s")),
            "PyTorch": pair(lambda dtype: torch.get(dtype, {}).get("torch_tokens_per_s")),
        },
        results["peak_gflops"],
    )
    return ["", sentence] if sentence else []


def headline(results):
    name, best = max(_speed_rows(results).items(), key=lambda item: item[1]["tokens_per_s"])
    text = (
        f"`{results['preset']}` causal-LM pretraining: {best['tokens_per_s']:,.0f} tokens/s "
        f"({name}, MFU {best['mfu']:.1%})"
    )
    dtype = name.removesuffix("+xla")
    if dtype in results.get("torch", {}):
        text += f", {results['torch'][dtype]['ratio']:.2f}x PyTorch in {dtype}"
    return text
