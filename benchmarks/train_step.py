"""Training-step speed: kbert's Encoder vs keras-hub's BertBackbone, same MiniLM-L6 weights.

Times forward + backward + AdamW update of a classifier (mean-pooled encoder → Dense) at batch 32,
sequence length 128 on CPU, in float32 and bfloat16 (Keras mixed precision), with and without
XLA (`jit_compile=True`), one process, same inputs. Prints tokens/s, the kbert/keras-hub ratio
and model-FLOPs utilization (MFU) against this machine's matmul peak, measured here first.

    python benchmarks/train_step.py --checkpoint minilm_l6

The last line is JSON for the best kbert configuration:
    {"kbert_tokens_per_s", "keras_hub_tokens_per_s", "ratio", "mfu", ...}
"""

import argparse
import gc
import json
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402

from benchmarks.flops import encoder_training_flops, measure_matmul_peak  # noqa: E402
from kbert.checkpoints import load_hf_bert_encoder, resolve_checkpoint  # noqa: E402


def classifier(backbone, dropout_free=False):
    """Mean-pooled sequence output → Dense(2): the same head on either backbone."""
    inputs = {name: keras.Input((None,), dtype="int32", name=name)
              for name in ("token_ids", "segment_ids", "padding_mask")}
    sequence = backbone(inputs)["sequence_output"]
    mask = keras.ops.cast(inputs["padding_mask"], sequence.dtype)[:, :, None]
    pooled = keras.ops.sum(sequence * mask, axis=1) / keras.ops.sum(mask, axis=1)
    logits = keras.layers.Dense(2, dtype="float32")(pooled)
    return keras.Model(inputs, logits)


def make_batch(batch_size, sequence_length, seed=0):
    rng = np.random.default_rng(seed)
    ids = rng.integers(1000, 30000, (batch_size, sequence_length)).astype("int32")
    ids[:, 0] = 101
    lengths = rng.integers(sequence_length // 2, sequence_length + 1, batch_size)
    mask = (np.arange(sequence_length)[None, :] < lengths[:, None]).astype("int32")
    ids = ids * mask
    inputs = {"token_ids": ids, "segment_ids": np.zeros_like(ids), "padding_mask": mask}
    labels = rng.integers(0, 2, batch_size).astype("int32")
    return inputs, labels


def time_training(model, inputs, labels, jit_compile, steps, warmup):
    model.compile(optimizer=keras.optimizers.AdamW(1e-5),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  jit_compile=jit_compile)
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
    parser.add_argument("--checkpoint", default="minilm_l6",
                        help="Hugging Face BERT directory, or 'minilm_l6' (default)")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--sequence-length", type=int, default=128)
    parser.add_argument("--steps", type=int, default=5, help="timed steps (median reported)")
    parser.add_argument("--warmup", type=int, default=2, help="untimed steps first")
    parser.add_argument("--dtypes", default="float32,mixed_bfloat16")
    parser.add_argument("--jit", default="false,true", help="jit_compile values to try")
    args = parser.parse_args()

    checkpoint = resolve_checkpoint(args.checkpoint)
    peaks = {"float32": measure_matmul_peak("float32"),
             "mixed_bfloat16": measure_matmul_peak("bfloat16")}
    print(f"measured matmul peak: float32 {peaks['float32']:.0f} GFLOP/s, "
          f"bfloat16 {peaks['mixed_bfloat16']:.0f} GFLOP/s")
    inputs, labels = make_batch(args.batch_size, args.sequence_length)
    tokens = args.batch_size * args.sequence_length

    rows = []
    for dtype in args.dtypes.split(","):
        for jit in [value == "true" for value in args.jit.split(",")]:
            result = {"dtype": dtype, "jit_compile": jit}
            for kind in ("kbert", "keras_hub"):
                keras.backend.clear_session()
                gc.collect()
                backbone = build(kind, checkpoint, dtype)
                flops = encoder_training_flops(
                    load_config(backbone, kind), args.batch_size, args.sequence_length)
                seconds = time_training(classifier(backbone), inputs, labels, jit, args.steps,
                                        args.warmup)
                result[f"{kind}_tokens_per_s"] = tokens / seconds
                result[f"{kind}_mfu"] = flops / seconds / 1e9 / peaks[dtype]
            result["ratio"] = result["kbert_tokens_per_s"] / result["keras_hub_tokens_per_s"]
            rows.append(result)
            print(f"{dtype:15s} jit={jit!s:5s}  kbert {result['kbert_tokens_per_s']:7.0f} tok/s "
                  f"(MFU {result['kbert_mfu']:.1%})  keras-hub "
                  f"{result['keras_hub_tokens_per_s']:7.0f} tok/s "
                  f"(MFU {result['keras_hub_mfu']:.1%})  ratio {result['ratio']:.2f}", flush=True)

    best = max(rows, key=lambda r: r["kbert_tokens_per_s"])
    print(json.dumps({
        "kbert_tokens_per_s": round(best["kbert_tokens_per_s"], 1),
        "keras_hub_tokens_per_s": round(best["keras_hub_tokens_per_s"], 1),
        "ratio": round(best["ratio"], 3),
        "mfu": round(best["kbert_mfu"], 4),
        "configuration": {"dtype": best["dtype"], "jit_compile": best["jit_compile"],
                          "batch_size": args.batch_size,
                          "sequence_length": args.sequence_length},
        "peak_gflops": {k: round(v, 1) for k, v in peaks.items()},
    }))


def load_config(backbone, kind):
    if kind == "kbert":
        return backbone.config
    from kbert.models import EncoderConfig

    return EncoderConfig(vocabulary_size=backbone.vocabulary_size, num_layers=backbone.num_layers,
                         hidden_dim=backbone.hidden_dim, num_heads=backbone.num_heads,
                         intermediate_dim=backbone.intermediate_dim)


if __name__ == "__main__":
    main()
