"""Where one serving call's time goes, and which TF Serving settings suit the export.

`benchmarks/serving.py` times kbert's exported `classify` end to end against ONNX Runtime; this
benchmark opens the call up (issue #38, item 4). It exports the same classifier (MiniLM-L6 with
BERT's pooler and a seeded 6-class head, `serving.build_classifier`; padding to the batch's
longest row, float32) twice, as it is (`plain`) and with batches of up to `--xla-rows` rows
through XLA (`xla`, `ExportSettings(xla_rows=...)`), and loads each as TF Serving's C++ server
does (the TF1 session loader, `serving.SessionClassifier`, which first runs the export's warm-up
requests as the server does), then:

1. **Kernels.** TensorFlow's x86 wheels run many ops through oneDNN on CPUs with AVX-512 (the
   `TF_ENABLE_ONEDNN_OPTS` switch, read once when TensorFlow starts), while TF Serving's default
   builds and images run TensorFlow's own (Eigen) kernels and Intel's builds run oneDNN. Each
   setting of `--onednn` is a child process of its own with the switch set, so both kinds of
   server are measured on the same exports.
2. **Threads.** TF Serving passes `--tensorflow_intra_op_parallelism` and
   `--tensorflow_inter_op_parallelism` to the session it runs the model in (0 = TensorFlow's
   default: one thread per core in each pool). Each setting of `--threads` (intra:inter pairs) is
   a session of its own with that `ConfigProto`, timed per export as `benchmarks.serving` times a
   side: batch-1 p50/p95 latency and sentences/s at `--batch-size`, medians of `--passes`
   passes.
3. **Batch-size sweep.** At TensorFlow's default threads, per oneDNN setting, sentences/s over
   the first dataset's texts in batches of each of `--sweep-sizes`, for the plain export and one
   that sends every batch size of the sweep through XLA (`xla_rows` = the largest size; each
   shape compiles in an untimed first pass): where XLA stops paying, which is what `--xla-rows`
   should be on this machine's kind.
4. **Profile.** At TensorFlow's default threads, per oneDNN setting, `--trace-calls` calls of
   the plain export per dataset and batch size (1 and `--batch-size`) run under TensorFlow's
   profiler, and the op events of the trace are summed per call by kind: the tokenizer (the
   tf-text and string ops: normalisation, splitting, WordPiece, vocabulary lookups), packing
   (the ragged ops that build `[CLS] … [SEP]`, cut and pad the batch), the output (softmax over
   the classes, argmax, the label lookup), and the encoder's kinds as `benchmarks.step_profile`
   names them (matmuls, attention softmax and masking, layer norm, GELU, embedding lookups, data
   movement, ...). Op time is summed over threads, so a kind's share is of the traced op time;
   the wall time per call is measured apart.

Data: TREC-6 test questions (short) and IMDb test reviews (long, cut to `--sequence-length`).
docs/deploy.md turns the record into TF Serving settings (kernels, threads, XLA, batching).

    python -m benchmarks.serving_profile [--onednn on,off] [--exports plain,xla] \\
        [--threads 0:0,1:1,2:1] [--record docs/results/serving_profile.json]

The last line is JSON: `threads`, one row per (oneDNN, export, thread setting) with each
dataset's timings; `sweep`, per oneDNN setting, sentences/s per batch size and export;
`profile`, per oneDNN setting, dataset and batch size, the wall ms per call and each kind's op
ms per call.
"""

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter

import kbert.quiet  # noqa: F401  (TensorFlow's start-up lines filtered)

import numpy as np
import tensorflow as tf

from benchmarks.serving import (
    DATASETS,
    XLA_ROWS,
    SessionClassifier,
    batches,
    build_classifier,
    measure,
    read_texts,
    time_pass,
)
from benchmarks.step_profile import op_kind, trace
from kbert.arguments import comma_separated
from kbert.export import ExportSettings, export_saved_model
from kbert.export.export_settings import MAX_XLA_ROWS
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
# `TF_ENABLE_ONEDNN_OPTS` per `--onednn` setting.
ONEDNN = {"on": "1", "off": "0"}
EXPORTS = ("plain", "xla")


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
        # TensorFlow's default, one thread, and both cores for each op with one op at a time;
        # with two kernels and two exports each setting is four sessions timed on both datasets.
        default=[(0, 0), (1, 1), (2, 1)],
        help="intra:inter op thread pairs, each a session of its own (0 = TensorFlow's default)",
    )
    parser.add_argument(
        "--datasets",
        type=comma_separated(str),
        default=list(DATASETS),
        help=f"comma-separated among {DATASETS}",
    )
    parser.add_argument(
        "--onednn",
        type=comma_separated(str),
        default=list(ONEDNN),
        help="TF_ENABLE_ONEDNN_OPTS per child process: comma-separated among on, off",
    )
    parser.add_argument(
        "--exports",
        type=comma_separated(str),
        default=list(EXPORTS),
        help="comma-separated among plain, xla (batches of up to --xla-rows rows through XLA)",
    )
    parser.add_argument("--xla-rows", type=int, default=XLA_ROWS, help="the xla export's")
    parser.add_argument(
        "--sweep-sizes",
        type=comma_separated(int, minimum=1),
        default=[1, 2, 4, 8, 16, 32],
        help="batch sizes of the plain-against-XLA sweep, at most 32",
    )
    parser.add_argument("--no-sweep", action="store_true", help="skip the batch-size sweep")
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
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
    for flag, allowed in (
        ("datasets", DATASETS),
        ("onednn", tuple(ONEDNN)),
        ("exports", EXPORTS),
    ):
        unknown = [name for name in getattr(args, flag) if name not in allowed]
        if unknown or not getattr(args, flag):
            parser.error(f"--{flag} must name some of {allowed}; received {unknown or 'none'}")
    for flag in (
        "batch_size",
        "sequence_length",
        "max_examples",
        "passes",
        "trace_calls",
        "xla_rows",
    ):
        if getattr(args, flag) < 1:
            parser.error(
                f"--{flag.replace('_', '-')} must be a positive integer; received "
                f"{getattr(args, flag)}"
            )
    if max(args.sweep_sizes) > MAX_XLA_ROWS:
        parser.error(
            f"--sweep-sizes must be batch sizes from 1 to {MAX_XLA_ROWS} (the most rows an export "
            f"sends through XLA); received {args.sweep_sizes}"
        )
    if args.no_sweep:
        args.sweep_sizes = []
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


def export_models(args, directory):
    """`{export: version directory}` of the classifier: each of `--exports`, and with a sweep
    "plain" and "xla_sweep" (every batch size of the sweep through XLA)."""
    model, tokenizer = build_classifier(args.seed)
    rows = {"plain": 0, "xla": args.xla_rows, "xla_sweep": max(args.sweep_sizes, default=0)}
    names = list(args.exports) + (["plain", "xla_sweep"] if args.sweep_sizes else [])
    return {
        name: export_saved_model(
            model,
            tokenizer,
            directory,
            name,
            ExportSettings(sequence_length=args.sequence_length, xla_rows=rows[name]),
        )
        for name in dict.fromkeys(names)
    }


@dataclasses.dataclass(frozen=True)
class WorkerSpec:
    """What one `--onednn` child measures, written as JSON for `--worker`."""

    paths: dict  # export name -> version directory
    threads: list  # [intra, inter] pairs
    datasets: list
    max_examples: int
    latency_examples: int
    batch_size: int
    passes: int
    trace_calls: int
    sweep_sizes: list
    exports: list  # the exports of the thread table (`paths` may hold the sweep's too)
    data_dir: str | None
    output: str  # where the child writes its result

    @classmethod
    def from_arguments(cls, args, paths, output):
        fields = {field.name for field in dataclasses.fields(cls)} - {"paths", "output"}
        return cls(paths=paths, output=output, **{name: getattr(args, name) for name in fields})

    def write(self, path):
        with open(path, "w") as handle:
            json.dump(dataclasses.asdict(self), handle)

    @classmethod
    def read(cls, path):
        with open(path) as handle:
            spec = cls(**json.load(handle))
        return dataclasses.replace(spec, threads=[tuple(pair) for pair in spec.threads])


def measure_exports(spec):
    """The thread table and the plain export's profile, in this process's kernels: what one
    `--onednn` child returns (`spec`: `WorkerSpec`)."""
    texts = {name: read_texts(name, spec.max_examples, spec.data_dir) for name in spec.datasets}
    result = {"threads": [], "sweep": {}, "profile": {}}
    paths = spec.paths
    for export in spec.exports:
        path = paths[export]
        for intra, inter in spec.threads:
            classify = SessionClassifier(path, config=session_config(intra, inter))
            row = {"export": export, "intra_op": intra, "inter_op": inter, "datasets": {}}
            for name, items in texts.items():
                row["datasets"][name] = measure(
                    classify, items, spec.batch_size, spec.passes, spec.latency_examples
                )
                print(f"{export} threads {intra}:{inter} {name}: {row['datasets'][name]}")
            result["threads"].append(row)
            classify.close()
    if spec.sweep_sizes:
        result["sweep"] = sweep(paths, texts[spec.datasets[0]], spec)
        result["sweep"]["dataset"] = spec.datasets[0]
    if "plain" in spec.exports:
        classify = SessionClassifier(paths["plain"], config=session_config(0, 0))
        for name, items in texts.items():
            result["profile"][name] = {
                str(size): profile_calls(classify, items, size, spec.trace_calls)
                for size in (1, spec.batch_size)
            }
            print(f"profile {name}: {result['profile'][name]}", flush=True)
        classify.close()
    return result


def sweep(paths, texts, spec):
    """`{"sizes": {size: {"plain": sentences/s, "xla": sentences/s}}}` at default threads: an
    untimed pass at each size first (XLA compiles the shapes it meets), then the median of
    `spec.passes` timed passes."""
    sides = {
        "plain": SessionClassifier(paths["plain"], config=session_config(0, 0)),
        "xla": SessionClassifier(paths["xla_sweep"], config=session_config(0, 0), warm_up=False),
    }
    sizes = {}
    for size in spec.sweep_sizes:
        sizes[str(size)] = {}
        for side, classify in sides.items():
            time_pass(classify, texts, size)
            speeds = [
                len(texts) / time_pass(classify, texts, size).sum() for _ in range(spec.passes)
            ]
            sizes[str(size)][side] = round(float(np.median(speeds)), 1)
        print(f"sweep batch {size}: {sizes[str(size)]}", flush=True)
    for classify in sides.values():
        classify.close()
    return {"sizes": sizes}


def run_child(setting, spec_path, output_path):
    """Runs this benchmark's worker with oneDNN `setting` ("on"/"off"); returns its result."""
    environment = {**os.environ, "TF_ENABLE_ONEDNN_OPTS": ONEDNN[setting]}
    command = [sys.executable, "-m", "benchmarks.serving_profile", "--worker", spec_path]
    completed = subprocess.run(command, env=environment, check=False)
    if completed.returncode != 0:
        raise RuntimeError(
            f"the oneDNN {setting} worker failed with status {completed.returncode}: {command}"
        )
    with open(output_path) as handle:
        return json.load(handle)


def run(args):
    result = {
        "checkpoint": "MiniLM-L6-H384-uncased",
        "sequence_length": args.sequence_length,
        "batch_size": args.batch_size,
        "passes": args.passes,
        "trace_calls": args.trace_calls,
        "xla_rows": args.xla_rows,
        "cpu_count": os.cpu_count(),
        "versions": software_versions(),
        "threads": [],
        "profile": {},
    }
    for name in args.datasets:  # read here too, so that the record pins what the children read
        read_texts(name, args.max_examples, args.data_dir)
    with tempfile.TemporaryDirectory(prefix="kbert-serving-profile-") as directory:
        paths = export_models(args, directory)
        for setting in args.onednn:
            spec_path = os.path.join(directory, f"worker_{setting}.json")
            output_path = os.path.join(directory, f"result_{setting}.json")
            WorkerSpec.from_arguments(args, paths, output_path).write(spec_path)
            measured = run_child(setting, spec_path, output_path)
            result["threads"] += [{"onednn": setting, **row} for row in measured["threads"]]
            if measured["sweep"]:
                result.setdefault("sweep", {})[setting] = measured["sweep"]
            result["profile"][setting] = measured["profile"]
    return result


def worker(spec_path):
    """A `--onednn` child: measures the exports named in its spec file, writes the result."""
    spec = WorkerSpec.read(spec_path)
    result = measure_exports(spec)
    with open(spec.output, "w") as handle:
        json.dump(result, handle)


def main(argv=None):
    args = parse_arguments(argv)
    if args.worker is not None:
        worker(args.worker)
        return None
    result = run(args)
    record_if_requested(args, result)
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
