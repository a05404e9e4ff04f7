"""Where one serving call's time goes, and which TF Serving thread settings suit the export.

`benchmarks/serving.py` times kbert's exported `classify` end to end against ONNX Runtime; this
benchmark opens the call up (issue #38, item 4). It exports the same classifier (MiniLM-L6 with
BERT's pooler and a seeded 6-class head, `serving.build_classifier`; padding to the batch's
longest row, float32) and loads it as TF Serving's C++ server does (the TF1 session loader,
`serving.SessionClassifier`), then:

1. **Threads.** TF Serving passes `--tensorflow_intra_op_parallelism` and
   `--tensorflow_inter_op_parallelism` to the session it runs the model in (0 = TensorFlow's
   default: one thread per core in each pool). Each setting of `--threads` (intra:inter pairs) is
   a session of its own with that `ConfigProto`, timed as `benchmarks.serving` times a side:
   batch-1 p50/p95 latency and sentences/s at `--batch-size`, medians of `--passes` passes.
2. **Profile.** At TensorFlow's default threads, `--trace-calls` calls per dataset and batch
   size (1 and `--batch-size`) run under TensorFlow's profiler, and the op events of the trace are
   summed per call by kind: the tokenizer (the tf-text and string ops: normalisation, splitting,
   WordPiece, vocabulary lookups), packing (the ragged ops that build `[CLS] … [SEP]`, cut and
   pad the batch), the output (softmax over the classes, argmax, the label lookup), and the
   encoder's kinds as `benchmarks.step_profile` names them (matmuls, attention softmax and
   masking, layer norm, GELU, embedding lookups, data movement, ...). Op time is summed over
   threads, so a kind's share is of the traced op time; the wall time per call is measured apart.

Data: TREC-6 test questions (short) and IMDb test reviews (long, cut to `--sequence-length`).
docs/deploy.md turns the record into TF Serving settings (threads, batching).

    python -m benchmarks.serving_profile [--threads 0:0,1:1,2:1,1:2,2:2] \\
        [--record docs/results/serving_profile.json]

The last line is JSON: per thread setting and dataset the timings; per dataset and batch size
the wall ms per call and each kind's op ms per call.
"""

import argparse
import json
import os
import tempfile
import time
from collections import Counter

import kbert.quiet  # noqa: F401  (TensorFlow's start-up lines filtered)

import tensorflow as tf

from benchmarks.serving import (
    DATASETS,
    SessionClassifier,
    batches,
    build_classifier,
    measure,
    read_texts,
)
from benchmarks.step_profile import op_kind, trace
from kbert.arguments import comma_separated
from kbert.export import ExportSettings, export_saved_model
from kbert.run_records import add_record_argument, record_if_requested
from kbert.runs import software_versions

# Checked before the encoder's kinds: the first rule an op's type (or, for "output", its name
# scope) matches decides.
TOKENIZER_TYPES = (
    "regex",
    "utf8",
    "unicode",
    "wordpiece",
    "sentencepiece",
    "string",
    "substr",
    "lookuptable",
    "hashtable",
)
OUTPUT_MARKS = ("argmax", "label", "probabilit")


def serving_kind(op_name, op_type):
    """The kind a serving op counts as: "tokenizer", "packing", "output", or an encoder kind of
    `benchmarks.step_profile.op_kind`."""
    kind_type, name = op_type.lower(), op_name.lower()
    if any(mark in kind_type for mark in TOKENIZER_TYPES):
        return "tokenizer"
    if "ragged" in kind_type or "ragged" in name:
        return "packing"
    if any(mark in kind_type or mark in name for mark in OUTPUT_MARKS):
        return "output"
    return op_kind(op_name, op_type)


def parse_threads(text):
    """`"0:0,1:1"` → `[(0, 0), (1, 1)]` (intra-op, inter-op threads; 0 = TensorFlow's default).

    Raises:
        argparse.ArgumentTypeError: a pair that is not two non-negative integers.
    """
    pairs = []
    for item in text.split(","):
        parts = item.strip().split(":")
        if len(parts) != 2 or not all(part.isdigit() for part in parts):
            raise argparse.ArgumentTypeError(
                f"must be comma-separated intra:inter pairs of non-negative integers such as "
                f"'0:0,1:1'; received {item.strip()!r}"
            )
        pairs.append((int(parts[0]), int(parts[1])))
    return pairs


def parse_arguments(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--threads",
        type=parse_threads,
        default=[(0, 0), (1, 1), (2, 1), (1, 2), (2, 2)],
        help="intra:inter op thread pairs, each a session of its own (0 = TensorFlow's default)",
    )
    parser.add_argument(
        "--datasets",
        type=comma_separated(str),
        default=list(DATASETS),
        help=f"comma-separated among {DATASETS}",
    )
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--sequence-length", type=int, default=128)
    parser.add_argument("--max-examples", type=int, default=500, help="test texts per dataset")
    parser.add_argument(
        "--latency-examples", type=int, default=200, help="texts timed one at a time"
    )
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--trace-calls", type=int, default=20, help="calls traced per batch size")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-dir", default=None)
    add_record_argument(parser)
    args = parser.parse_args(argv)
    unknown = [name for name in args.datasets if name not in DATASETS]
    if unknown:
        parser.error(f"--datasets must name some of {DATASETS}; received {unknown}")
    for flag in ("batch_size", "sequence_length", "max_examples", "passes", "trace_calls"):
        if getattr(args, flag) < 1:
            parser.error(
                f"--{flag.replace('_', '-')} must be a positive integer; received "
                f"{getattr(args, flag)}"
            )
    return args


def session_config(intra, inter):
    """The `ConfigProto` TF Serving builds from its two thread flags."""
    return tf.compat.v1.ConfigProto(
        intra_op_parallelism_threads=intra, inter_op_parallelism_threads=inter
    )


def profile_calls(classify, texts, batch_size, calls):
    """Wall ms per call (untraced) and op ms per call by kind, over the first `calls` batches
    of `texts` (cycled), after a warm-up call per batch."""
    chosen = batches(texts, batch_size)
    chosen = [chosen[index % len(chosen)] for index in range(calls)]
    for batch in chosen:
        classify(batch)
    start = time.perf_counter()
    for batch in chosen:
        classify(batch)
    wall_ms = (time.perf_counter() - start) * 1000.0 / calls
    calls_left = iter(chosen)
    times = trace(lambda: classify(next(calls_left)), calls)
    kinds, ops = Counter(), Counter()
    for (op_name, op_type), microseconds in times.items():
        kinds[serving_kind(op_name, op_type)] += microseconds / 1000.0 / calls
        ops[op_type] += microseconds / 1000.0 / calls
    return {
        "call_ms": round(wall_ms, 3),
        "op_ms": round(sum(kinds.values()), 3),
        "kinds": {kind: round(ms, 3) for kind, ms in kinds.most_common()},
        "top_ops": {op: round(ms, 3) for op, ms in ops.most_common(12)},
    }


def run(args):
    result = {
        "checkpoint": "MiniLM-L6-H384-uncased",
        "sequence_length": args.sequence_length,
        "batch_size": args.batch_size,
        "passes": args.passes,
        "trace_calls": args.trace_calls,
        "cpu_count": os.cpu_count(),
        "versions": software_versions(),
        "threads": [],
        "profile": {},
    }
    texts = {name: read_texts(name, args.max_examples, args.data_dir) for name in args.datasets}
    model, tokenizer = build_classifier(args.seed)
    with tempfile.TemporaryDirectory(prefix="kbert-serving-profile-") as directory:
        path = export_saved_model(
            model,
            tokenizer,
            directory,
            "classify",
            ExportSettings(sequence_length=args.sequence_length),
        )
        for intra, inter in args.threads:
            classify = SessionClassifier(path, config=session_config(intra, inter))
            row = {"intra_op": intra, "inter_op": inter, "datasets": {}}
            for name, items in texts.items():
                row["datasets"][name] = measure(
                    classify, items, args.batch_size, args.passes, args.latency_examples
                )
                print(f"threads {intra}:{inter} {name}: {row['datasets'][name]}", flush=True)
            result["threads"].append(row)
            classify.close()
        classify = SessionClassifier(path, config=session_config(0, 0))
        for name, items in texts.items():
            result["profile"][name] = {
                str(size): profile_calls(classify, items, size, args.trace_calls)
                for size in (1, args.batch_size)
            }
            print(f"profile {name}: {result['profile'][name]}", flush=True)
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
