"""Where one training step's time goes, by kind of op, in float32 and in mixed bfloat16.

The bfloat16 matmul peak of an AMX or AVX-512-BF16 CPU is several times its float32 peak
(`benchmarks/flops.py` measures both), yet a mixed-bfloat16 training step gains far less
(`pretrain_speed`, `train_step`). This benchmark says where the step's time goes, so the
difference can be named: for each model it builds one training step (forward, loss, backward,
AdamW update), warms it up, times `--steps` steps, then traces `--trace-steps` more with
TensorFlow's profiler (`tf.profiler.experimental`) and sums the op events of the host plane of
the trace by op type and then by kind:

- matmuls (dense layers, attention scores and mixing, the tied output projection);
- attention softmax and masking; layer norm; dropout; GELU; casts; embedding lookups and their
  gradient; data movement (transpose, reshape, slicing, concatenation); the loss; the optimizer
  update; everything else (residual and bias adds, the metric, ...). The runtime's own spans
  (`KernelAndDeviceFunc::Run`, which holds the whole step) are not ops and are left out.

Models: `lab01` (lab01's default causal model: 4 blocks, width 256, vocabulary 8,000),
`tutorial_50m` (the tutorial's causal model) and `minilm_l6` (the classifier step of
`benchmarks/train_step`: mean-pooled MiniLM-L6 → Dense(2)).

    python -m benchmarks.step_profile [--models lab01,tutorial_50m,minilm_l6] \\
        [--dtypes float32,mixed_bfloat16] [--record docs/results/step_profile.json]

Op times are summed over the CPU's threads, so a kind's share is of the traced op time, not of
the wall time; the wall time per step is measured apart, without the profiler. The last line
is JSON: model → dtype → {"step_ms", "tokens_per_s", "kinds": kind → ms per step, "op_ms"},
and each model's bfloat16 / float32 time ratio per kind.
"""

import argparse
import gc
import json
import tempfile
import time
from collections import Counter
from pathlib import Path

import kbert.quiet  # noqa: F401  (TensorFlow's start-up lines filtered)

import keras
import numpy as np
import tensorflow as tf
from tensorflow.tsl.profiler.protobuf import xplane_pb2

from benchmarks.train_step import classifier
from kbert.checkpoints import load_hf_bert_encoder, resolve_checkpoint
from kbert.models import CausalLanguageModel, Encoder
from kbert.run_records import add_record_argument, record_if_requested
from kbert.train.fused_adamw import FusedAdamW

MODELS = ("lab01", "tutorial_50m", "minilm_l6")
# Checked in order: the first kind whose rule matches an op (its type, its name scope) wins.
KINDS = (
    ("optimizer", ("adamw", "adam_w", "/optimizer", "resourceapply", "assignsubvariableop")),
    ("loss", ("loss", "crossentropy", "cross_entropy")),
    ("layer_norm", ("layer_norm", "layernorm", "_norm", "rsqrt", "squareddifference")),
    ("dropout", ("dropout", "randomuniform")),
    ("gelu", ("gelu", "erf", "tanh")),
    ("softmax_and_mask", ("softmax", "mask", "selectv2", "select")),
    ("matmul", ("matmul", "einsum")),
    ("cast", ("cast",)),
    ("embedding", ("embedding", "gather", "unsortedsegmentsum", "scatter")),
    ("data_movement", ("transpose", "reshape", "slice", "concat", "pack", "unpack", "split")),
)


def op_kind(op_name, op_type):
    """The kind an op counts as (`KINDS`), from its type and then its name scope."""
    kind_of_type = next(
        (kind for kind, marks in KINDS if any(mark in op_type.lower() for mark in marks)), None
    )
    if kind_of_type in ("matmul", "cast", "data_movement", "embedding", "gelu"):
        # Where the op sits decides for these (a matmul in the optimizer, a cast in the loss).
        scoped = next(
            (kind for kind, marks in KINDS[:3] if any(mark in op_name.lower() for mark in marks)),
            None,
        )
        return scoped or kind_of_type
    if kind_of_type is not None:
        return kind_of_type
    name = op_name.lower()
    return next((kind for kind, marks in KINDS if any(mark in name for mark in marks)), "other")


def op_times(xspace_path):
    """`{(op name, op type): total microseconds}` over the host plane's TensorFlow op events."""
    space = xplane_pb2.XSpace()
    space.ParseFromString(Path(xspace_path).read_bytes())
    totals = Counter()
    for plane in space.planes:
        if not plane.name.startswith("/host:CPU"):
            continue
        metadata = {key: value.name for key, value in plane.event_metadata.items()}
        for line in plane.lines:
            for event in line.events:
                name = metadata.get(event.metadata_id, "")
                if ":" not in name or "::" in name:
                    continue  # not an op: the runtime's own spans (`KernelAndDeviceFunc::Run`)
                op_name, op_type = name.rsplit(":", 1)
                if op_type[:1].isupper() or op_type.startswith("_"):
                    totals[(op_name, op_type)] += event.duration_ps / 1e6
    return totals


def trace(step, steps):
    """Runs `step` `steps` times under the profiler; returns `op_times` of the trace."""
    with tempfile.TemporaryDirectory() as logdir:
        tf.profiler.experimental.start(logdir)
        for _ in range(steps):
            step()
        tf.profiler.experimental.stop()
        paths = sorted(Path(logdir).rglob("*.xplane.pb"))
        if not paths:
            raise RuntimeError(f"the profiler wrote no trace under {logdir}")
        return op_times(paths[-1])


def build_step(model_name, dtype, batch_size, sequence_length, rng):
    """`(train_step, tokens per step)` for one model in one dtype policy."""
    if model_name == "minilm_l6":
        encoder = load_hf_bert_encoder(resolve_checkpoint("minilm_l6"), dtype=dtype)
        model = classifier(encoder)
        model.compile(
            optimizer=FusedAdamW(1e-4),
            loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        )
        ids = rng.integers(1000, 30000, (batch_size, sequence_length)).astype("int32")
        x = {"token_ids": ids, "segment_ids": np.zeros_like(ids), "padding_mask": np.ones_like(ids)}
        y = rng.integers(0, 2, batch_size).astype("int32")
        return (lambda: model.train_on_batch(x, y)), batch_size * sequence_length
    changes = (
        {}
        if model_name != "lab01"
        else {
            "num_layers": 4,
            "hidden_dim": 256,
            "num_heads": 4,
            "intermediate_dim": 1024,
            "vocabulary_size": 8000,
            "max_sequence_length": max(128, sequence_length),
        }
    )
    preset = "tiny" if model_name == "lab01" else model_name
    encoder = Encoder.from_preset(preset, causal=True, skip_padding=False, dtype=dtype, **changes)
    model = CausalLanguageModel(encoder)
    model.compile(optimizer=FusedAdamW(1e-4, global_clipnorm=1.0))
    vocabulary = encoder.config.vocabulary_size
    ids = rng.integers(5, vocabulary, (batch_size, sequence_length)).astype("int32")
    x = {"token_ids": ids, "padding_mask": np.ones_like(ids)}
    return (lambda: model.train_on_batch(x)), batch_size * sequence_length


def profile(model_name, dtype, args):
    keras.backend.clear_session()
    gc.collect()
    step, tokens = build_step(
        model_name, dtype, args.batch_size, args.sequence_length, np.random.default_rng(0)
    )
    for _ in range(args.warmup):
        step()
    seconds = []
    for _ in range(args.steps):
        start = time.perf_counter()
        step()
        seconds.append(time.perf_counter() - start)
    step_seconds = float(np.median(seconds))
    times = trace(step, args.trace_steps)
    kinds = Counter()
    for (op_name, op_type), micros in times.items():
        kinds[op_kind(op_name, op_type)] += micros / 1000 / args.trace_steps
    return {
        "step_ms": round(step_seconds * 1000, 1),
        "tokens_per_s": round(tokens / step_seconds, 1),
        "op_ms": round(sum(kinds.values()), 1),
        "kinds": {kind: round(ms, 2) for kind, ms in kinds.most_common()},
    }


def parse_list(text, allowed, flag):
    values = [value.strip() for value in text.split(",") if value.strip()]
    unknown = [value for value in values if value not in allowed]
    if not values or unknown:
        raise argparse.ArgumentTypeError(
            f"{flag} must list some of {', '.join(allowed)}; received {text!r}"
        )
    return values


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--models",
        type=lambda text: parse_list(text, MODELS, "--models"),
        default=list(MODELS),
    )
    parser.add_argument(
        "--dtypes",
        type=lambda text: parse_list(text, ("float32", "mixed_bfloat16"), "--dtypes"),
        default=["float32", "mixed_bfloat16"],
    )
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--sequence-length", type=int, default=128)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--trace-steps", type=int, default=2)
    add_record_argument(parser)
    args = parser.parse_args(argv)
    results = {}
    for model_name in args.models:
        results[model_name] = {}
        for dtype in args.dtypes:
            row = profile(model_name, dtype, args)
            results[model_name][dtype] = row
            shares = ", ".join(
                f"{kind} {ms / row['op_ms']:.0%}" for kind, ms in list(row["kinds"].items())[:6]
            )
            print(
                f"{model_name:13s} {dtype:15s} {row['step_ms']:8.1f} ms/step "
                f"{row['tokens_per_s']:8.0f} tokens/s; op time: {shares}",
                flush=True,
            )
        if {"float32", "mixed_bfloat16"} <= set(results[model_name]):
            fp32, bf16 = (results[model_name][d]["kinds"] for d in ("float32", "mixed_bfloat16"))
            results[model_name]["bf16_over_fp32"] = {
                kind: round(bf16.get(kind, 0.0) / fp32[kind], 2) for kind in fp32 if fp32[kind] > 0
            }
    summary = {
        "models": results,
        "batch_size": args.batch_size,
        "sequence_length": args.sequence_length,
        "trace_steps": args.trace_steps,
    }
    record_if_requested(args, summary)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
