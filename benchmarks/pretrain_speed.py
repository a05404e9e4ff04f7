"""Pretraining speed: tokens/s and model-FLOPs utilization of causal-LM training steps.

Trains `CausalLanguageModel` (tied output projection) on full blocks of random tokens (packed
pretraining has no padding, so kbert's unpadding is switched off) in float32 and bfloat16, with
and without XLA, and reports tokens/s and MFU against this machine's matmul peak measured in the
same run.

The PyTorch peer is Hugging Face's `GPT2LMHeadModel` built from the same sizes with random
weights (the architecture closest to a pre-LN kbert encoder: learned positions, no segment
table, pre-LN blocks, a final LayerNorm, output weights tied to the token table; same width,
layers, heads, FFN width, vocabulary, GELU, LayerNorm epsilon and dropout), SDPA attention,
trained on the same block of random tokens with AdamW and gradient clipping at 1, in float32
and under `torch.autocast("cpu", dtype=torch.bfloat16)`, with TensorFlow's intra-op thread
count, in a child process of its own (see `benchmarks/torch_peer.py`). What differs: GPT-2's
tied output has no bias (kbert's `TiedDecoder` adds one per vocabulary entry), its projections
are `Conv1D` (the same matmuls, transposed weights), it is fed no padding mask (a full block
needs none; kbert's model takes an all-ones one with unpadding off), and its loss is
transformers' shifted cross-entropy (the same positions as kbert's). It is built only for
pre-LN presets (`norm_first=True`, such as `tutorial_50m`); for others the peer is skipped with
that reason. Its MFU counts the same FLOPs against the same measured peak; `torch` in the
record holds its speed and kbert's best configuration of each dtype over it.

    python -m benchmarks.pretrain_speed [--preset tutorial_50m --batch-size 8 --sequence-length 256]
    PYTHONPATH=../kbert-peers python -m benchmarks.pretrain_speed      # with the PyTorch peer

torch and transformers are optional (`bash benchmarks/install_peers.sh` puts them in
../kbert-peers); without them the peer is skipped and the record says why.

The last line is JSON: configuration name → {"tokens_per_s", "mfu"}, the peaks, `torch` (dtype →
{"torch_tokens_per_s", "torch_mfu", "kbert_tokens_per_s", "ratio", "goal_met"}) and
`torch_peer` (versions and threads, or why it was skipped).
"""

import argparse
import gc
import json
import time

import kbert.quiet  # noqa: F401  (TensorFlow's start-up lines filtered)

import keras
import numpy as np

from benchmarks import torch_peer
from benchmarks.flops import encoder_training_flops, measure_matmul_peak
from kbert.models import CausalLanguageModel, Encoder, EncoderConfig
from kbert.run_records import add_record_argument, record_if_requested
from kbert.train.fused_adamw import FusedAdamW


def causal_lm_training_flops(config, batch_size, sequence_length):
    """Encoder FLOPs plus the tied output projection (2 × width × vocabulary per token, × 3)."""
    lengths = [sequence_length] * batch_size
    width = config.embedding_dim or config.hidden_dim
    projection = 3 * 2 * width * config.vocabulary_size * batch_size * sequence_length
    return encoder_training_flops(config, lengths) + projection


def time_steps(model, x, steps, warmup):
    for _ in range(warmup):
        model.train_on_batch(x)
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        logs = model.train_on_batch(x, return_dict=True)
        times.append(time.perf_counter() - start)
    if not all(np.isfinite(v) for v in logs.values()):
        raise RuntimeError(f"non-finite training logs {logs}")
    return float(np.median(times))


def gpt2_mismatch(config):
    """Why GPT-2 cannot stand for this kbert config, or None."""
    if not config.norm_first:
        return f"GPT-2 is pre-LN; this preset is post-LN (norm_first={config.norm_first})"
    if config.embedding_dim or config.share_layers or config.num_segments:
        return "GPT-2 has no factorized embedding, shared layers or segment table"
    return None


def parse_arguments(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--preset",
        default="tutorial_50m",
        help="encoder preset (forced causal), default tutorial_50m",
    )
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--sequence-length", type=int, default=256)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--dtypes", default="float32,mixed_bfloat16")
    parser.add_argument("--jit", default="false,true")
    torch_peer.add_peers_argument(parser)
    add_record_argument(parser)
    args = parser.parse_args(argv)
    args.peers_requested = args.peers is not None  # named peers must run, not be skipped
    args.peers, args.torch_skipped = torch_peer.chosen_peers(parser, args)
    config = EncoderConfig.preset(args.preset, causal=True)
    if args.sequence_length > config.max_sequence_length:
        parser.error(
            f"--sequence-length {args.sequence_length} is above the "
            f"preset's max_sequence_length={config.max_sequence_length}"
        )
    for dtype in args.dtypes.split(","):
        if dtype not in torch_peer.AUTOCAST:
            parser.error(f"--dtypes: {dtype!r} is not one of {', '.join(torch_peer.AUTOCAST)}")
    mismatch = gpt2_mismatch(config)
    if torch_peer.NAME in args.peers and mismatch:
        if args.peers_requested:
            parser.error(f"--peers {torch_peer.NAME}: {mismatch}")
        print(f"PyTorch peer skipped: {mismatch}", flush=True)
        args.peers, args.torch_skipped = [], mismatch
    return args, config


def main(argv=None):
    args, config = parse_arguments(argv)
    peaks = {
        "float32": measure_matmul_peak("float32"),
        "mixed_bfloat16": measure_matmul_peak("bfloat16"),
    }
    print(
        f"measured matmul peak: float32 {peaks['float32']:.0f} GFLOP/s, "
        f"bfloat16 {peaks['mixed_bfloat16']:.0f} GFLOP/s",
        flush=True,
    )
    rng = np.random.default_rng(0)
    ids = rng.integers(5, config.vocabulary_size, (args.batch_size, args.sequence_length))
    ids = ids.astype("int32")  # (batch, seq), the same block for every side
    tokens = args.batch_size * args.sequence_length
    flops = causal_lm_training_flops(config, args.batch_size, args.sequence_length)
    results, rows = {}, []
    for dtype in args.dtypes.split(","):
        for jit in [value == "true" for value in args.jit.split(",")]:
            keras.backend.clear_session()
            gc.collect()
            encoder = Encoder.from_preset(args.preset, causal=True, skip_padding=False, dtype=dtype)
            x = {"token_ids": ids, "padding_mask": np.ones_like(ids)}
            model = CausalLanguageModel(encoder)
            model.compile(optimizer=FusedAdamW(1e-4, global_clipnorm=1.0), jit_compile=jit)
            seconds = time_steps(model, x, args.steps, args.warmup)
            name = f"{dtype}{'+xla' if jit else ''}"
            results[name] = {
                "tokens_per_s": round(tokens / seconds, 1),
                "mfu": round(flops / seconds / 1e9 / peaks[dtype], 4),
            }
            rows.append({"dtype": dtype, "kbert_tokens_per_s": tokens / seconds})
            print(
                f"{name:22s} {tokens / seconds:8.0f} tokens/s  MFU "
                f"{results[name]['mfu']:.1%}  ({seconds:.2f} s/step, "
                f"{encoder.count_params() / 1e6:.1f}M parameters)",
                flush=True,
            )
    summary = {
        **results,
        "peak_gflops": {k: round(v, 1) for k, v in peaks.items()},
        "preset": args.preset,
        "parameters": encoder.count_params(),
        "batch_size": args.batch_size,
        "sequence_length": args.sequence_length,
        "torch_peer": {"skipped": args.torch_skipped},
    }
    if torch_peer.NAME in args.peers:
        dtypes = args.dtypes.split(",")
        seconds, summary["torch_peer"] = torch_peer.measure(
            "causal_lm",
            {"config": config, "dtypes": dtypes, "steps": args.steps, "warmup": args.warmup},
            {"ids": ids},
        )
        speeds = torch_peer.speeds(seconds, tokens, flops, peaks)
        summary["torch"] = torch_peer.compare(rows, speeds)
    record_if_requested(args, summary)
    print(json.dumps(summary))
    return summary


if __name__ == "__main__":
    main()
