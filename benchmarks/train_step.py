"""Training-step speed: kbert's Encoder vs keras-hub's BertBackbone, same MiniLM-L6 weights.

Times forward + backward + AdamW update of a classifier (mean-pooled encoder → Dense) at batch 32,
sequence length 128 on CPU, in float32 and bfloat16 (Keras mixed precision), with and without
XLA (`jit_compile=True`), one process, same inputs. Prints tokens/s (batch × sequence length per
second), the kbert/keras-hub ratio and model-FLOPs utilization (MFU) against this machine's matmul
peak, measured here first. Two workloads:

- `full`: every one of the 32 × 128 positions is a real token (no padding), the usual synthetic
  benchmark; both implementations do the same arithmetic.
- `sst2`: 32 SST-2 dev sentences padded to 128, as fine-tuning sees them; kbert's encoder skips
  padded positions in its position-wise matmuls, keras-hub computes them.

MFU counts the useful FLOPs, those of real tokens (see `benchmarks/flops.py`), for both: on
`sst2` it shows how much of the machine goes into work the batch needs.

    python -m benchmarks.train_step --checkpoint minilm_l6

The last line is JSON for the best kbert configuration on `full`, with `sst2` nested:
    {"kbert_tokens_per_s", "keras_hub_tokens_per_s", "ratio", "mfu", ..., "sst2": {...}}
"""

import argparse
import gc
import json
import time

import kbert.quiet  # noqa: F401  (TensorFlow's start-up lines filtered)

import keras
import numpy as np

from benchmarks.flops import encoder_training_flops, measure_matmul_peak
from kbert.checkpoints import load_hf_bert_encoder, resolve_checkpoint
from kbert.run_records import add_record_argument, record_if_requested


def classifier(backbone, dropout_free=False):
    """Mean-pooled sequence output → Dense(2): the same head on either backbone."""
    inputs = {
        name: keras.Input((None,), dtype="int32", name=name)
        for name in ("token_ids", "segment_ids", "padding_mask")
    }
    sequence = backbone(inputs)["sequence_output"]
    mask = keras.ops.cast(inputs["padding_mask"], sequence.dtype)[:, :, None]
    pooled = keras.ops.sum(sequence * mask, axis=1) / keras.ops.sum(mask, axis=1)
    logits = keras.layers.Dense(2, dtype="float32")(pooled)
    return keras.Model(inputs, logits)


def make_batch(workload, batch_size, sequence_length, checkpoint, data_dir=None, seed=0):
    """Returns (inputs, labels) for the `full` or `sst2` workload."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, batch_size).astype("int32")
    if workload == "full":
        ids = rng.integers(1000, 30000, (batch_size, sequence_length)).astype("int32")
        ids[:, 0] = 101
        inputs = {
            "token_ids": ids,
            "segment_ids": np.zeros_like(ids),
            "padding_mask": np.ones_like(ids),
        }
        return inputs, labels
    if workload != "sst2":
        raise ValueError(f"workload must be 'full' or 'sst2'; received {workload!r}")
    from kbert.checkpoints import load_hf_bert_tokenizer
    from kbert.data import read_sst2
    from kbert.text import BertPreprocessor

    texts, sst2_labels = read_sst2("dev", data_dir=data_dir)
    chosen = rng.choice(len(texts), batch_size, replace=False)
    preprocessor = BertPreprocessor(
        load_hf_bert_tokenizer(checkpoint), sequence_length=sequence_length
    )
    inputs = {k: np.asarray(v) for k, v in preprocessor([texts[i] for i in chosen]).items()}
    return inputs, np.array([sst2_labels[i] for i in chosen], "int32")


def time_training(model, inputs, labels, jit_compile, steps, warmup):
    model.compile(
        optimizer=keras.optimizers.AdamW(1e-5),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        jit_compile=jit_compile,
    )
    for _ in range(warmup):
        model.train_on_batch(inputs, labels)
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        loss = model.train_on_batch(inputs, labels)
        times.append(time.perf_counter() - start)
    if not np.isfinite(loss):
        raise RuntimeError(f"non-finite loss {loss}")
    return float(np.median(times))


def build(kind, checkpoint, dtype):
    if kind == "kbert":
        # keras-hub's BERT uses the tanh GELU; kbert uses the same here so both do equal work.
        return load_hf_bert_encoder(checkpoint, activation="gelu_approximate", dtype=dtype)
    import keras_hub

    return keras_hub.models.BertBackbone.from_preset(str(checkpoint), dtype=dtype)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--checkpoint",
        default="minilm_l6",
        help="Hugging Face BERT directory, or 'minilm_l6' (default)",
    )
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--sequence-length", type=int, default=128)
    parser.add_argument("--steps", type=int, default=5, help="timed steps (median reported)")
    parser.add_argument("--warmup", type=int, default=2, help="untimed steps first")
    parser.add_argument("--dtypes", default="float32,mixed_bfloat16")
    parser.add_argument("--jit", default="false,true", help="jit_compile values to try")
    parser.add_argument("--workloads", default="full,sst2")
    parser.add_argument("--data-dir", default=None, help="for the sst2 workload")
    add_record_argument(parser)
    args = parser.parse_args()

    checkpoint = resolve_checkpoint(args.checkpoint)
    peaks = {
        "float32": measure_matmul_peak("float32"),
        "mixed_bfloat16": measure_matmul_peak("bfloat16"),
    }
    print(
        f"measured matmul peak: float32 {peaks['float32']:.0f} GFLOP/s, "
        f"bfloat16 {peaks['mixed_bfloat16']:.0f} GFLOP/s"
    )
    tokens = args.batch_size * args.sequence_length
    summaries = {}
    for workload in args.workloads.split(","):
        inputs, labels = make_batch(
            workload, args.batch_size, args.sequence_length, checkpoint, args.data_dir
        )
        real = int(inputs["padding_mask"].sum())
        print(
            f"workload {workload}: {real} real tokens of {tokens} positions ({real / tokens:.0%})"
        )
        rows = run_configurations(args, checkpoint, inputs, labels, peaks)
        best = max(rows, key=lambda r: r["kbert_tokens_per_s"])
        summaries[workload] = {
            "kbert_tokens_per_s": round(best["kbert_tokens_per_s"], 1),
            "keras_hub_tokens_per_s": round(best["keras_hub_tokens_per_s"], 1),
            "ratio": round(best["ratio"], 3),
            "mfu": round(best["kbert_mfu"], 4),
            "keras_hub_mfu": round(best["keras_hub_mfu"], 4),
            "real_token_fraction": round(real / tokens, 3),
            "configuration": {
                "dtype": best["dtype"],
                "jit_compile": best["jit_compile"],
                "batch_size": args.batch_size,
                "sequence_length": args.sequence_length,
            },
            "configurations": [
                {
                    key: round(value, 4) if isinstance(value, float) else value
                    for key, value in row.items()
                }
                for row in rows
            ],
        }
    first, *others = summaries
    result = {
        **summaries[first],
        "workload": first,
        **{name: summaries[name] for name in others},
        "peak_gflops": {k: round(v, 1) for k, v in peaks.items()},
    }
    record_if_requested(args, result)
    print(json.dumps(result))


def run_configurations(args, checkpoint, inputs, labels, peaks):
    tokens = args.batch_size * args.sequence_length
    rows = []
    for dtype in args.dtypes.split(","):
        for jit in [value == "true" for value in args.jit.split(",")]:
            result = {"dtype": dtype, "jit_compile": jit}
            for kind in ("kbert", "keras_hub"):
                keras.backend.clear_session()
                gc.collect()
                backbone = build(kind, checkpoint, dtype)
                lengths = inputs["padding_mask"].sum(axis=1).tolist()
                flops = encoder_training_flops(load_config(backbone, kind), lengths)
                seconds = time_training(
                    classifier(backbone), inputs, labels, jit, args.steps, args.warmup
                )
                result[f"{kind}_tokens_per_s"] = tokens / seconds
                result[f"{kind}_mfu"] = flops / seconds / 1e9 / peaks[dtype]
            result["ratio"] = result["kbert_tokens_per_s"] / result["keras_hub_tokens_per_s"]
            rows.append(result)
            print(
                f"{dtype:15s} jit={jit!s:5s}  kbert {result['kbert_tokens_per_s']:7.0f} tok/s "
                f"(MFU {result['kbert_mfu']:.1%})  keras-hub "
                f"{result['keras_hub_tokens_per_s']:7.0f} tok/s "
                f"(MFU {result['keras_hub_mfu']:.1%})  ratio {result['ratio']:.2f}",
                flush=True,
            )
    return rows


def load_config(backbone, kind):
    if kind == "kbert":
        return backbone.config
    from kbert.models import EncoderConfig

    return EncoderConfig(
        vocabulary_size=backbone.vocabulary_size,
        num_layers=backbone.num_layers,
        hidden_dim=backbone.hidden_dim,
        num_heads=backbone.num_heads,
        intermediate_dim=backbone.intermediate_dim,
    )


if __name__ == "__main__":
    main()
