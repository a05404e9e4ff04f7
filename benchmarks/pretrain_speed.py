"""Pretraining speed: tokens/s and model-FLOPs utilization of causal-LM training steps.

Trains `CausalLanguageModel` (tied output projection) on full blocks of random tokens (packed
pretraining has no padding, so kbert's unpadding is switched off) in float32 and bfloat16, with
and without XLA, and reports tokens/s and MFU against this machine's matmul peak measured in the
same run.

    python -m benchmarks.pretrain_speed [--preset tutorial_50m --batch-size 8 --sequence-length 256]

The last line is JSON: configuration name → {"tokens_per_s", "mfu"}, plus the peaks.
"""

import argparse
import gc
import json
import time

import kbert.quiet  # noqa: F401  (TensorFlow's start-up lines filtered)

import keras
import numpy as np

from benchmarks.flops import encoder_training_flops, measure_matmul_peak
from kbert.models import CausalLanguageModel, Encoder
from kbert.run_records import add_record_argument, record_if_requested


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


def main():
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
    add_record_argument(parser)
    args = parser.parse_args()

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
    results = {}
    for dtype in args.dtypes.split(","):
        for jit in [value == "true" for value in args.jit.split(",")]:
            keras.backend.clear_session()
            gc.collect()
            encoder = Encoder.from_preset(args.preset, causal=True, skip_padding=False, dtype=dtype)
            config = encoder.config
            if args.sequence_length > config.max_sequence_length:
                raise ValueError(
                    f"--sequence-length {args.sequence_length} is above the "
                    f"preset's max_sequence_length={config.max_sequence_length}"
                )
            ids = rng.integers(
                5, config.vocabulary_size, (args.batch_size, args.sequence_length)
            ).astype("int32")
            x = {"token_ids": ids, "padding_mask": np.ones_like(ids)}
            model = CausalLanguageModel(encoder)
            model.compile(
                optimizer=keras.optimizers.AdamW(1e-4, global_clipnorm=1.0), jit_compile=jit
            )
            seconds = time_steps(model, x, args.steps, args.warmup)
            tokens = args.batch_size * args.sequence_length
            flops = causal_lm_training_flops(config, args.batch_size, args.sequence_length)
            name = f"{dtype}{'+xla' if jit else ''}"
            results[name] = {
                "tokens_per_s": round(tokens / seconds, 1),
                "mfu": round(flops / seconds / 1e9 / peaks[dtype], 4),
            }
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
    }
    record_if_requested(args, summary)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
