"""Training-step speed: kbert's Encoder vs keras-hub's BertBackbone and Hugging Face PyTorch.

Times forward + backward + AdamW update (kbert's `FusedAdamW`, Keras's `AdamW` for keras-hub: what
each one's users train with) of a classifier (mean-pooled encoder → Dense(2)) on the
same MiniLM-L6 weights at batch 32, sequence length 128 on CPU, in float32 and bfloat16, same
inputs. kbert and keras-hub run in this process with Keras mixed precision, with and without
XLA (`jit_compile=True`). The PyTorch peer is transformers' `BertModel` from the same checkpoint
directory (SDPA attention, the attention mask passed, tanh GELU like the Keras sides) under the
same head and loss, trained in float32 and under `torch.autocast("cpu", dtype=torch.bfloat16)`,
in a child process of its own with TensorFlow's intra-op thread count (see
`benchmarks/torch_peer.py` for why). Prints tokens/s (batch × sequence length per second),
kbert/peer ratios and model-FLOPs utilization (MFU) against this machine's matmul peak, measured
here first and used for every side. Two workloads:

- `full`: every one of the 32 × 128 positions is a real token (no padding), the usual synthetic
  benchmark; all implementations do the same arithmetic.
- `sst2`: 32 SST-2 dev sentences padded to 128, as fine-tuning sees them; kbert's encoder skips
  padded positions in its position-wise matmuls, keras-hub and PyTorch compute them.

MFU counts the useful FLOPs, those of real tokens (see `benchmarks/flops.py`), for every side: on
`sst2` it shows how much of the machine goes into work the batch needs.

    python -m benchmarks.train_step --checkpoint minilm_l6                     # without PyTorch
    PYTHONPATH=../kbert-peers python -m benchmarks.train_step                  # with it
    PYTHONPATH=../kbert-peers python -m benchmarks.train_step --peers torch    # kbert vs PyTorch

torch and transformers are optional (`bash benchmarks/install_peers.sh` puts them in
../kbert-peers); without them the PyTorch side is skipped and the record says why.

The last line is JSON for the best kbert configuration on `full`, with `sst2` nested:
    {"kbert_tokens_per_s", "keras_hub_tokens_per_s", "ratio", "mfu", ...,
     "torch": {dtype: {"torch_tokens_per_s", "torch_mfu", "kbert_tokens_per_s", "ratio",
     "goal_met"}}, "sst2": {...}, "torch_peer": {versions, threads, or "skipped"}}
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
from kbert.checkpoints import load_hf_bert_encoder, resolve_checkpoint
from kbert.checkpoints.hf_bert import encoder_config_from_hf
from kbert.run_records import add_record_argument, record_if_requested
from kbert.train.fused_adamw import FusedAdamW


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


def time_training(model, inputs, labels, jit_compile, steps, warmup, optimizer=None):
    model.compile(
        optimizer=optimizer or keras.optimizers.AdamW(1e-5),
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


def parse_arguments(argv=None):
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
    torch_peer.add_peers_argument(parser, others=("keras_hub",))
    add_record_argument(parser)
    args = parser.parse_args(argv)
    args.peers, args.torch_skipped = torch_peer.chosen_peers(parser, args, others=("keras_hub",))
    for dtype in args.dtypes.split(","):
        if dtype not in torch_peer.AUTOCAST:
            parser.error(f"--dtypes: {dtype!r} is not one of {', '.join(torch_peer.AUTOCAST)}")
    return args


def main(argv=None):
    args = parse_arguments(argv)
    checkpoint = resolve_checkpoint(args.checkpoint)
    peer_facts = {"skipped": args.torch_skipped}
    peaks = {
        "float32": measure_matmul_peak("float32"),
        "mixed_bfloat16": measure_matmul_peak("bfloat16"),
    }
    print(
        f"measured matmul peak: float32 {peaks['float32']:.0f} GFLOP/s, "
        f"bfloat16 {peaks['mixed_bfloat16']:.0f} GFLOP/s"
    )
    summaries = {}
    for workload in args.workloads.split(","):
        summaries[workload], facts = run_workload(args, checkpoint, workload, peaks)
        peer_facts = facts or peer_facts
    first, *others = summaries
    result = {
        **summaries[first],
        "workload": first,
        **{name: summaries[name] for name in others},
        "peak_gflops": {k: round(v, 1) for k, v in peaks.items()},
        "torch_peer": peer_facts,
    }
    record_if_requested(args, result)
    print(json.dumps(result))
    return result


def run_workload(args, checkpoint, workload, peaks):
    """Every side on one workload; returns its summary (the best kbert configuration first) and
    the PyTorch peer's facts (None without the peer)."""
    tokens = args.batch_size * args.sequence_length
    inputs, labels = make_batch(
        workload, args.batch_size, args.sequence_length, checkpoint, args.data_dir
    )
    real = int(inputs["padding_mask"].sum())
    print(f"workload {workload}: {real} real tokens of {tokens} positions ({real / tokens:.0%})")
    rows = run_configurations(args, checkpoint, inputs, labels, peaks)
    best = max(rows, key=lambda r: r["kbert_tokens_per_s"])
    summary = {"kbert_tokens_per_s": round(best["kbert_tokens_per_s"], 1)}
    if "keras_hub" in args.peers:
        summary |= {
            "keras_hub_tokens_per_s": round(best["keras_hub_tokens_per_s"], 1),
            "ratio": round(best["ratio"], 3),
        }
    summary["mfu"] = round(best["kbert_mfu"], 4)
    if "keras_hub" in args.peers:
        summary["keras_hub_mfu"] = round(best["keras_hub_mfu"], 4)
    summary |= {
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
                for key, value in r.items()
            }
            for r in rows
        ],
    }
    if torch_peer.NAME in args.peers:
        config = encoder_config_from_hf(json.loads((checkpoint / "config.json").read_text()))
        flops = encoder_training_flops(config, inputs["padding_mask"].sum(axis=1).tolist())
        dtypes = args.dtypes.split(",")
        seconds, facts = torch_peer.measure(
            "classifier",
            {
                "checkpoint": str(checkpoint),
                "dtypes": dtypes,
                "steps": args.steps,
                "warmup": args.warmup,
            },
            {**inputs, "labels": labels},
        )
        speeds = torch_peer.speeds(seconds, tokens, flops, peaks)
        summary["torch"] = torch_peer.compare(rows, speeds)
        return summary, facts
    return summary, None


def run_configurations(args, checkpoint, inputs, labels, peaks):
    tokens = args.batch_size * args.sequence_length
    kinds = ("kbert", *(["keras_hub"] if "keras_hub" in args.peers else []))
    rows = []
    for dtype in args.dtypes.split(","):
        for jit in [value == "true" for value in args.jit.split(",")]:
            result = {"dtype": dtype, "jit_compile": jit}
            for kind in kinds:
                keras.backend.clear_session()
                gc.collect()
                backbone = build(kind, checkpoint, dtype)
                lengths = inputs["padding_mask"].sum(axis=1).tolist()
                flops = encoder_training_flops(load_config(backbone, kind), lengths)
                # Each side with the optimizer its users get: kbert's fine-tuning builds a
                # `FusedAdamW` (one kernel per variable), keras-hub's users Keras's AdamW.
                optimizer = FusedAdamW(1e-5) if kind == "kbert" else keras.optimizers.AdamW(1e-5)
                seconds = time_training(
                    classifier(backbone), inputs, labels, jit, args.steps, args.warmup, optimizer
                )
                result[f"{kind}_tokens_per_s"] = tokens / seconds
                result[f"{kind}_mfu"] = flops / seconds / 1e9 / peaks[dtype]
            line = (
                f"{dtype:15s} jit={jit!s:5s}  kbert {result['kbert_tokens_per_s']:7.0f} tok/s "
                f"(MFU {result['kbert_mfu']:.1%})"
            )
            if "keras_hub" in kinds:
                result["ratio"] = result["kbert_tokens_per_s"] / result["keras_hub_tokens_per_s"]
                line += (
                    f"  keras-hub {result['keras_hub_tokens_per_s']:7.0f} tok/s "
                    f"(MFU {result['keras_hub_mfu']:.1%})  ratio {result['ratio']:.2f}"
                )
            rows.append(result)
            print(line, flush=True)
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
