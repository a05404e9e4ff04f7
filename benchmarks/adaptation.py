"""Every adaptation method on TREC-6, from lab01's tutorial-style model and from MiniLM-L6.

The NAACL 2019 tutorial compares ways to adapt a pretrained transformer on TREC-6 (hands-on
#2–#6): full fine-tuning, adapters (~25% of its small model trainable, "similar to full
fine-tuning"), gradual unfreezing, discriminative learning rates, and multitask training with
an auxiliary LM loss ("improving over single-task"); the textbook adds LoRA, prefix and prompt
tuning and distillation; Houlsby et al. report GLUE within 0.4% of full fine-tuning at 3.6% of
the parameters. This runs every method of labs 3–6, lab_peft and lab_distillation
(`kbert.train.adaptation_recipes`) with 3 seeds from both starting points, and prints one
table: method, trainable parameters (count and %), TREC-6 test accuracy (TREC_10, 500
questions) as mean ± sd over seeds, and training seconds per run.

Defaults fit this 2-core CPU in about 40 minutes: 2,000 training questions (a seeded slice of
TREC-6 train after holding out 10% for validation), 3 epochs, batch 32, length 64. EWC runs
where the checkpoint's pretraining head can be rebuilt (lab01's causal LM: a tied decoder);
MiniLM-L6 ships no MLM head, so its EWC row is absent. The ensemble row is one ensemble of the
3 seeds' fully fine-tuned models (no sd); the distillation rows report the student's size as a
share of the teacher's under "trainable".

    python benchmarks/adaptation.py                        # everything (resumes if interrupted)
    python benchmarks/adaptation.py --starts minilm_l6 --methods full,adapters,lora --seeds 1

Progress goes to stderr; each run's result is appended to `<run-dir>/results.jsonl` as soon as
it exists (a rerun skips those). The last line of stdout is JSON mapping each `start/method`
to `trainable_pct`, `acc_mean`, `acc_sd`, `train_s`.
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from kbert.data import load_classification_task  # noqa: E402
from kbert.train.adaptation_recipes import (  # noqa: E402
    compare_methods,
    format_summary_table,
    pretrained_starting_point,
    summarize,
)

# (label, method, options): every method the labs compare, in the table's order.
VARIANTS = [
    ("full", "full", {}),
    ("feature_extraction", "feature_extraction", {}),
    ("top_2", "top_2", {}),
    ("adapters", "adapters", {"bottleneck_dim": 32, "placement": "houlsby"}),
    ("adapters_pfeiffer", "adapters", {"bottleneck_dim": 32, "placement": "pfeiffer"}),
    ("gradual_unfreezing", "gradual_unfreezing", {}),
    ("chain_thaw", "chain_thaw", {}),
    ("discriminative_lr", "discriminative_lr", {"factor": 2.6}),
    ("l2_sp", "l2_sp", {"strength": 0.01}),
    ("ewc", "ewc", {"strength": 0.01}),
    ("multitask", "multitask", {"language_model_weight": 0.5}),
    ("sequential", "sequential", {"intermediate_task": "sst2"}),
    ("lora", "lora", {"rank": 8, "alpha": 16}),
    ("prefix_tuning", "prefix_tuning", {"prefix_length": 10}),
    ("prompt_tuning", "prompt_tuning", {"prompt_tokens": 20}),
    ("distillation", "distillation", {"temperature": 2.0, "soft_weight": 0.5}),
    ("ensemble", "ensemble", {}),
]
STARTS = {"lab01": "saved_models/lab01_causal", "minilm_l6": "minilm_l6"}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--starts", default="lab01,minilm_l6",
                        help="comma-separated: lab01 (its causal model), minilm_l6, or paths")
    parser.add_argument("--lab01-model", default=STARTS["lab01"])
    parser.add_argument("--methods", default="all", help="comma-separated labels, or all")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--sequence-length", type=int, default=64)
    parser.add_argument("--train-examples", type=int, default=2000,
                        help="0 for all 4,907 (slow: ~2.5x the time)")
    parser.add_argument("--data-dir", default=None, help="default: KBERT_DATA_DIR, ../shared/data")
    parser.add_argument("--run-dir", default="runs/adaptation")
    parser.add_argument("--fresh", action="store_true", help="ignore earlier results")
    parser.add_argument("--verbose", type=int, default=0)
    args = parser.parse_args()

    variants = VARIANTS if args.methods == "all" else [
        variant for variant in VARIANTS if variant[0] in args.methods.split(",")]
    if not variants:
        parser.error(f"--methods names none of {[label for label, _, _ in VARIANTS]}")
    starts = []
    for name in args.starts.split(","):
        path = args.lab01_model if name == "lab01" else STARTS.get(name, name)
        if name == "lab01" and not (Path(path) / "encoder.keras").is_file():
            parser.error(f"lab01's causal model is not at {path}: run "
                         "`python labs/lab01_pretraining.py` first or pass --lab01-model")
        starts.append(pretrained_starting_point(path, args.sequence_length, name=name))

    limit = args.train_examples or None
    data = {"train": load_classification_task("trec", "train", data_dir=args.data_dir,
                                              max_examples=limit),
            "test": load_classification_task("trec", "test", data_dir=args.data_dir)}
    run_dir = Path(args.run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    results_path = run_dir / "results.jsonl"
    settings = {"train_examples": len(data["train"]), "epochs": args.epochs,
                "batch_size": args.batch_size, "sequence_length": args.sequence_length}
    done = []
    if results_path.exists() and not args.fresh:
        done = [row for row in map(json.loads, results_path.read_text().splitlines())
                if row.get("settings") == settings]
    labels = {label for label, _, _ in variants}
    done = [row for row in done if row["label"] in labels
            and row["start"] in {start.name for start in starts}]

    def save(row):
        row = {**row, "settings": settings}
        with results_path.open("a") as stream:
            stream.write(json.dumps(row) + "\n")
        print(f"[{time.strftime('%H:%M:%S')}] {row['start']} {row['label']} seed {row['seed']}: "
              f"acc {row['accuracy']:.4f}, {row['trainable_pct']:.2f}% trainable, "
              f"{row['train_s']:.1f} s", file=sys.stderr, flush=True)

    start_time = time.perf_counter()
    rows = compare_methods(variants, starts, data, seeds=range(args.seeds), epochs=args.epochs,
                           batch_size=args.batch_size, done=done, on_result=save,
                           verbose=args.verbose)
    summaries = summarize(rows)
    print(f"TREC-6: {len(data['train'])} training questions, {len(data['test'])} test, "
          f"{args.epochs} epochs, batch {args.batch_size}, {args.seeds} seeds; "
          f"{time.perf_counter() - start_time:.0f} s this call")
    print(format_summary_table(summaries))
    print(json.dumps({f"{row['start']}/{row['label']}": {
        "trainable_pct": round(row["trainable_pct"], 3), "acc_mean": round(row["acc_mean"], 4),
        "acc_sd": None if row["acc_sd"] is None else round(row["acc_sd"], 4),
        "train_s": round(row["train_s"], 1)} for row in summaries}))


if __name__ == "__main__":
    main()
