"""Serving speed from raw text: kbert's exported `classify` vs ONNX Runtime, same weights.

Both sides serve one classifier: MiniLM-L6-H384-uncased with BERT's pooler and a 6-class head
(seeded random weights, the same on both sides; speed and agreement need no training).

- kbert: `export_saved_model` writes the `classify` SavedModel (tokenizer in the graph), and it
  is loaded as TF Serving's C++ server loads it: the TF1 session loader, fed and fetched by
  tensor name (`session.make_callable`). `--padding fixed` also measures the export that packs
  every row to `sequence_length` (the behaviour before exports padded to the batch's longest).
  `kbert_bf16` exports the same model with `ExportSettings(dtype="bfloat16")` (matmuls in
  bfloat16, outputs float32) and is timed the same way; beside `kbert` it reports
  `label_agreement_kbert_bf16`, the share of texts given the float32 export's label (the
  weights are random, so there is no accuracy to compare), and its largest |Δ| log-probability.
  `kbert_xla` exports it with `ExportSettings(xla_rows=--xla-rows)`: batches of at most that
  many texts run an XLA-compiled copy of the model; the loader first runs the export's warm-up
  requests, as TF Serving does while it loads a model, so no timed call compiles.
- peer: Hugging Face `BertForSequenceClassification` built from the same checkpoint with the
  same head weights, exported with `torch.onnx.export` and run by ONNX Runtime, plain and after
  `onnxruntime.transformers.optimizer` (fused attention, LayerNorm and GELU); texts tokenized by
  the checkpoint's tokenizer.json (transformers' fast tokenizer), padded to the batch's longest
  and truncated to the same `--sequence-length` as kbert's (IMDb reviews are cut to their head).

Timing is end to end from raw strings to class scores, after a warm-up pass, median of
`--passes` passes: batch 1 (p50 and p95 latency over the texts) and batch `--batch-size`
(sentences/s), on TREC-6 test questions (short) and IMDb test reviews (long, truncated). The
agreement is the largest |Δ| between kbert's log-probabilities and the log-softmax of ORT's
logits (the signature returns probabilities; log-softmax is the logits up to a per-row shift).
`ratio_kbert_over_*` is kbert's speed over the peer's (sentences/s at the batch size, and
latency ratio peer/kbert at batch 1: above 1 means kbert is faster).

    bash benchmarks/install_peers.sh          # torch, transformers, ONNX Runtime into ../kbert-peers
    PYTHONPATH=../kbert-peers python -m benchmarks.serving --max-examples 100
    PYTHONPATH=../kbert-peers python -m benchmarks.serving --record docs/results/serving.json

The last line is JSON with, per dataset, each side's `batch1_p50_ms`, `batch1_p95_ms` and
`batch_sentences_per_s`, the agreement and the ratios.
"""

import argparse
import json
import os
import tempfile
import time

import kbert.quiet  # noqa: F401  (TensorFlow's start-up lines filtered)

import keras
import numpy as np
import tensorflow as tf

from kbert.checkpoints import load_pretrained, minilm_l6_dir
from kbert.data import read_imdb, read_trec
from kbert.export import ExportSettings, export_saved_model
from kbert.models import SequenceClassifier
from kbert.run_records import add_record_argument, record_if_requested
from kbert.runs import software_versions

NUM_CLASSES = 6
DATASETS = ("trec", "imdb")
SIDES = ("kbert", "kbert_fixed", "kbert_bf16", "kbert_xla", "ort", "ort_optimized")
# `--xla-rows`' default: the most rows at which XLA was clearly faster than TensorFlow's kernels
# in a batch-size sweep on the course's 2-core AMD EPYC (`benchmarks/serving_profile.py` records
# the sweep; the first one, by hand, is in commit fe74761's message).
XLA_ROWS = 4
# The kbert sides: the `ExportSettings` of each export beyond the sequence length (kbert_xla's
# `xla_rows` is `--xla-rows`).
KBERT_EXPORTS = {
    "kbert": {},
    "kbert_fixed": {"padding": "fixed"},
    "kbert_bf16": {"dtype": "bfloat16"},
    "kbert_xla": {"xla_rows": XLA_ROWS},
}


# ------------------------------------------------------------------ data and model


def read_texts(name, max_examples, data_dir=None):
    """The test texts of `name` ("trec" or "imdb"), the first `max_examples`."""
    if name == "trec":
        texts, _ = read_trec("test", data_dir=data_dir)
        return texts[:max_examples]
    if name == "imdb":
        texts, _ = read_imdb("test", data_dir=data_dir, max_examples=max_examples)
        return list(texts)
    raise ValueError(f"dataset must be one of {DATASETS}; received {name!r}")


def build_classifier(seed):
    """MiniLM-L6 with BERT's pooler and a seeded 6-class head: `(model, tokenizer)`."""
    keras.utils.set_random_seed(seed)
    encoder, tokenizer = load_pretrained("minilm_l6")
    model = SequenceClassifier(encoder, num_classes=NUM_CLASSES, pooling="pooler")
    return model, tokenizer


def head_weights(model):
    """The classifier's last Dense kernel `(hidden, classes)` and bias, as numpy."""
    dense = [layer for layer in model.layers if isinstance(layer, keras.layers.Dense)][-1]
    kernel, bias = (np.asarray(w) for w in dense.get_weights())
    return kernel, bias


# ------------------------------------------------------------------ kbert (session loader)


class SessionClassifier:
    """An exported signature run as TF Serving runs it: session loader, tensors by name.

    Args:
        path: str, a version directory written by `export_saved_model`.
        signature: str, default "classify".
        config: `tf.compat.v1.ConfigProto` or None. The session's settings (TF Serving builds
            one from `--tensorflow_intra_op_parallelism` and `--tensorflow_inter_op_parallelism`).
        warm_up: bool, default True. Run the export's warm-up requests first, as TF Serving
            does; False leaves each shape to compile on its first call (a caller that warms
            up on its own inputs).
    """

    def __init__(self, path, signature="classify", config=None, warm_up=True):
        import tensorflow_text  # noqa: F401  (registers the tokenizer's ops)

        from kbert.export.warmup_requests import read_warmup_requests

        graph = tf.Graph()
        self.session = tf.compat.v1.Session(graph=graph, config=config)
        meta = tf.compat.v1.saved_model.loader.load(self.session, ["serve"], path)
        definition = meta.signature_def[signature]
        self.names = sorted(definition.outputs)
        with graph.as_default():
            self._run = self.session.make_callable(
                [definition.outputs[name].name for name in self.names],
                [definition.inputs["text"].name],
            )
        # What TF Serving does before a version serves: run the export's warm-up requests.
        for name, inputs in read_warmup_requests(path) if warm_up else ():
            if name in (signature, "serving_default"):
                self._run(inputs["text"])

    def __call__(self, texts):
        values = self._run(np.asarray(texts, dtype=object))
        return dict(zip(self.names, values, strict=True))

    def log_probabilities(self, texts):
        probabilities = self(texts)["probabilities"].astype(np.float64)
        return np.log(np.maximum(probabilities, 1e-30))

    def close(self):
        self.session.close()


# ------------------------------------------------------------------ peer (ONNX Runtime)


def export_onnx(model, directory, sequence_length):
    """The HF twin of `model` exported to ONNX: `(plain path, optimized path, tokenizer)`."""
    import torch
    import transformers
    from onnxruntime.transformers import optimizer

    checkpoint = minilm_l6_dir()
    peer = transformers.BertForSequenceClassification.from_pretrained(
        checkpoint, num_labels=NUM_CLASSES
    ).eval()
    kernel, bias = head_weights(model)
    with torch.no_grad():
        peer.classifier.weight.copy_(torch.from_numpy(kernel.T.copy()))
        peer.classifier.bias.copy_(torch.from_numpy(bias.copy()))
    tokenizer = transformers.AutoTokenizer.from_pretrained(checkpoint, use_fast=True)
    sample = tokenizer(["a sample"], return_tensors="pt")
    names = ["input_ids", "attention_mask", "token_type_ids"]
    plain = os.path.join(directory, "model.onnx")
    torch.onnx.export(
        peer,
        tuple(sample[name] for name in names),
        plain,
        input_names=names,
        output_names=["logits"],
        dynamic_axes={
            **{name: {0: "batch", 1: "sequence"} for name in names},
            "logits": {0: "batch"},
        },
        opset_version=17,
        dynamo=False,
    )
    config = peer.config
    optimized = optimizer.optimize_model(
        plain,
        model_type="bert",
        num_heads=config.num_attention_heads,
        hidden_size=config.hidden_size,
    )
    optimized_path = os.path.join(directory, "model_optimized.onnx")
    optimized.save_model_to_file(optimized_path)
    return plain, optimized_path, tokenizer


class OrtClassifier:
    """Raw texts → the fast tokenizer (pad to longest, truncate) → an ONNX Runtime session."""

    def __init__(self, path, tokenizer, sequence_length):
        import onnxruntime

        options = onnxruntime.SessionOptions()
        self.session = onnxruntime.InferenceSession(
            path, options, providers=["CPUExecutionProvider"]
        )
        self.tokenizer, self.sequence_length = tokenizer, sequence_length
        self.inputs = [node.name for node in self.session.get_inputs()]

    def __call__(self, texts):
        encoded = self.tokenizer(
            list(texts),
            padding="longest",
            truncation=True,
            max_length=self.sequence_length,
            return_tensors="np",
        )
        feeds = {name: encoded[name].astype(np.int64) for name in self.inputs}
        return self.session.run(["logits"], feeds)[0]

    def log_probabilities(self, texts):
        logits = self(texts).astype(np.float64)
        shifted = logits - logits.max(axis=-1, keepdims=True)
        return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


# ------------------------------------------------------------------ timing


def batches(texts, size):
    return [texts[start : start + size] for start in range(0, len(texts), size)]


def time_pass(classify, texts, batch_size):
    """Seconds per call of one pass over `texts` in batches of `batch_size`."""
    seconds = []
    for batch in batches(texts, batch_size):
        start = time.perf_counter()
        classify(batch)
        seconds.append(time.perf_counter() - start)
    return np.asarray(seconds)


def measure(classify, texts, batch_size, passes, latency_examples):
    """Batch-1 p50/p95 latency (ms) and sentences/s at `batch_size`, medians of `passes`."""
    singles = texts[:latency_examples]
    time_pass(classify, texts, batch_size)  # warm-up: every batch shape once
    time_pass(classify, singles[: min(len(singles), 16)], 1)
    p50, p95, speed = [], [], []
    for _ in range(passes):
        one = time_pass(classify, singles, 1) * 1000.0
        p50.append(np.percentile(one, 50))
        p95.append(np.percentile(one, 95))
        speed.append(len(texts) / time_pass(classify, texts, batch_size).sum())
    return {
        "batch1_p50_ms": round(float(np.median(p50)), 2),
        "batch1_p95_ms": round(float(np.median(p95)), 2),
        "batch_sentences_per_s": round(float(np.median(speed)), 1),
    }


def max_abs_diff(first, second, texts, batch_size):
    return max(
        float(np.abs(first.log_probabilities(b) - second.log_probabilities(b)).max())
        for b in batches(texts, batch_size)
    )


def label_agreement(first, second, texts, batch_size):
    """The share of `texts` to which both classifiers give the same label (argmax)."""
    same = [
        first.log_probabilities(b).argmax(-1) == second.log_probabilities(b).argmax(-1)
        for b in batches(texts, batch_size)
    ]
    return round(float(np.concatenate(same).mean()), 4)


def compare_with_kbert(entry, sides, texts, batch_size):
    """Adds each other side's largest |Δ| log-probability and speed ratio against `kbert`."""
    for peer in ("kbert_fixed", "kbert_bf16", "kbert_xla", "ort", "ort_optimized"):
        if peer not in sides:
            continue
        entry[f"max_abs_diff_{peer}"] = max_abs_diff(sides["kbert"], sides[peer], texts, batch_size)
        if peer == "kbert_bf16":
            entry[f"label_agreement_{peer}"] = label_agreement(
                sides["kbert"], sides[peer], texts, batch_size
            )
        entry[f"ratio_kbert_over_{peer}"] = {
            "batch": round(
                entry["kbert"]["batch_sentences_per_s"] / entry[peer]["batch_sentences_per_s"], 3
            ),
            "batch1_p50": round(entry[peer]["batch1_p50_ms"] / entry["kbert"]["batch1_p50_ms"], 3),
        }


# ------------------------------------------------------------------ main


def parse_arguments(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", default="trec,imdb", help="comma-separated: trec, imdb")
    parser.add_argument(
        "--sides",
        default="kbert,ort,ort_optimized",
        help="comma-separated: kbert, kbert_fixed (rows packed to --sequence-length), "
        "kbert_bf16 (the export computing in bfloat16), kbert_xla (small batches through "
        "XLA), ort, ort_optimized",
    )
    parser.add_argument(
        "--xla-rows",
        type=int,
        default=XLA_ROWS,
        help=f"the kbert_xla export's xla_rows (default {XLA_ROWS})",
    )
    parser.add_argument("--max-examples", type=int, default=500, help="texts per dataset")
    parser.add_argument(
        "--latency-examples",
        type=int,
        default=None,
        help="texts timed one at a time (default: all of --max-examples)",
    )
    parser.add_argument("--sequence-length", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--seed", type=int, default=0)
    add_record_argument(parser)
    args = parser.parse_args(argv)
    args.datasets = args.datasets.split(",")
    args.sides = args.sides.split(",")
    for name in args.datasets:
        if name not in DATASETS:
            parser.error(f"--datasets: {name!r} is not one of {DATASETS}")
    for side in args.sides:
        if side not in SIDES:
            parser.error(f"--sides: {side!r} is not one of {', '.join(SIDES)}")
    for flag in ("max_examples", "sequence_length", "batch_size", "passes", "xla_rows"):
        if getattr(args, flag) < 1:
            parser.error(
                f"--{flag.replace('_', '-')} must be an int >= 1; received {getattr(args, flag)}"
            )
    return args


def build_sides(args, directory):
    """`{side: classifier}` for the requested sides, and the software versions they add."""
    model, tokenizer = build_classifier(args.seed)
    sides, versions = {}, {}
    for side, changes in KBERT_EXPORTS.items():
        if side in args.sides:
            if "xla_rows" in changes:
                changes = {**changes, "xla_rows": args.xla_rows}
            path = export_saved_model(
                model,
                tokenizer,
                directory,
                side,
                ExportSettings(sequence_length=args.sequence_length, **changes),
            )
            sides[side] = SessionClassifier(path)
    peers = [side for side in args.sides if side.startswith("ort")]
    if peers:
        import onnxruntime
        import torch
        import transformers

        versions = {
            "onnxruntime": onnxruntime.__version__,
            "torch": torch.__version__,
            "transformers": transformers.__version__,
        }
        plain, optimized, peer_tokenizer = export_onnx(model, directory, args.sequence_length)
        for side, path in (("ort", plain), ("ort_optimized", optimized)):
            if side in args.sides:
                sides[side] = OrtClassifier(path, peer_tokenizer, args.sequence_length)
    return sides, versions


def run(args):
    """Measures every side on every dataset; returns the results dict."""
    result = {
        "checkpoint": "MiniLM-L6-H384-uncased",
        "num_classes": NUM_CLASSES,
        "sequence_length": args.sequence_length,
        "batch_size": args.batch_size,
        "passes": args.passes,
        "xla_rows": args.xla_rows,
        "cpu_count": os.cpu_count(),
        "versions": software_versions(),
        "datasets": {},
    }
    with tempfile.TemporaryDirectory(prefix="kbert-serving-") as directory:
        sides, versions = build_sides(args, directory)
        result["versions"] |= versions
        for name in args.datasets:
            texts = read_texts(name, args.max_examples, args.data_dir)
            latency_examples = args.latency_examples or len(texts)
            entry = {"examples": len(texts), "latency_examples": min(latency_examples, len(texts))}
            for side, classify in sides.items():
                entry[side] = measure(
                    classify, texts, args.batch_size, args.passes, latency_examples
                )
                print(f"{name} {side}: {entry[side]}", flush=True)
            if "kbert" in sides:
                compare_with_kbert(entry, sides, texts, args.batch_size)
            result["datasets"][name] = entry
        for classify in sides.values():
            if hasattr(classify, "close"):
                classify.close()
    return result


def main(argv=None):
    args = parse_arguments(argv)
    result = run(args)
    record_if_requested(args, result)
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
