"""Gradual unfreezing and chain-thaw in ULMFiT's regime, against full fine-tuning in the same one.

The NAACL 2019 tutorial's hands-on #4 claims nothing for transformers ("no specific
hyper-parameters advocated"); ULMFiT (Howard & Ruder 2018) unfroze one layer group per epoch
from the top of an LSTM, with slanted triangular rates (cut_frac 0.1, ratio 32) and
discriminative rates (÷2.6 per group going down), and gained most with few labels. This
benchmark runs that regime on TREC-6 at few labelled questions (`--sizes`, 100 and 300 by default;
labs/lab04_gradual_unfreezing.py runs it at the labs' 1,000):

- **full** — every layer group trains from the start (`full_fine_tuning(regime="ulmfit")`);
- **gradual_unfreezing** — the head first, one more group per epoch from the top;
- **chain_thaw** — the head alone, then each group alone from the bottom, then all together;

each on the same slanted triangular and discriminative rates and the same epochs: one per layer
group and one more (so chain-thaw's last stage trains), or `--epochs` when larger
(`kbert.train.unfreezing_recipes.ulmfit_epochs`). Each method's top rate is chosen on validation
at each size from `--rates` (545 TREC-6 training questions held out, never trained on), and the
chosen rows are compared with the chosen full fine-tuning seed by seed (mean and sd of the
per-seed differences, `kbert.metrics.seed_comparison`). Test = TREC_10.

Every run is appended to `<run-dir>/results.jsonl` as it finishes, so an interrupted call
resumes; the run count is printed first (stderr). `--starts lab01` then `--starts minilm_l6`
split the work over two sessions.

    python -m benchmarks.unfreezing_regime --starts minilm_l6 --seeds 1 --sizes 100  # a look
    python -m benchmarks.unfreezing_regime --starts lab01,minilm_l6 \\
        --lab01-model saved_models/lab01_causal --record docs/results/unfreezing_regime.json

The last line of stdout is JSON: per `start/method@size`, the chosen rate, its validation and
test accuracy, and its paired difference to full fine-tuning.
"""

import argparse
import json
import math
import sys
import time

import kbert.quiet  # noqa: F401  (TensorFlow's start-up lines filtered)

from kbert.arguments import comma_separated
from kbert.models import SequenceClassifier
from kbert.run_records import write_run_record
from kbert.train.adaptation_comparison import (
    choose_on_validation,
    comparison_parser,
    format_summary_table,
    run_comparison,
    starting_points,
    summarize,
    trec_data,
)
from kbert.train.unfreezing import GradualUnfreezing
from kbert.train.unfreezing_recipes import schedule_groups, ulmfit_epochs

SIZES = (100, 300)  # few labels, ULMFiT's case; lab04 runs the regime at 1,000
RATES = (3e-4, 1e-3, 3e-3)  # the top group's peak rate; the groups below get ÷2.6 each
METHODS = ("full", "gradual_unfreezing", "chain_thaw")


def regime_variants(rates=RATES):
    """Each method of `METHODS` in ULMFiT's regime at each top rate of `rates`."""
    return [
        (f"{method} lr={rate:g}", method, {"learning_rate": rate, "regime": "ulmfit"})
        for method in METHODS
        for rate in rates
    ]


def scheduled_groups(start, num_classes=6):
    """How many layer groups the schedules thaw on a classifier built on `start`."""
    encoder, _ = start.load()
    classifier = SequenceClassifier(encoder, num_classes, pooling=start.pooling)
    return len(schedule_groups(classifier, GradualUnfreezing, start.pooling))


def run_count(sizes, rates, seeds, starts=1):
    """Training runs of a call: every start × size × method × rate × seed.

    Example:
    >>> run_count([100, 300, 1000], [3e-4, 1e-3, 3e-3], seeds=3, starts=2)
    162
    """
    return starts * len(sizes) * len(METHODS) * len(rates) * seeds


def compare_chosen(rows, summaries):
    """The chosen rate's rows of each method, with their paired difference to full's.

    Returns:
        list of `summarize` rows, one per method, with `chosen` (the grid label) and
        `difference` (None for full).
    """
    chosen = choose_on_validation(summaries)
    labels = {row["label"]: method for (_, method), row in chosen.items()}
    picked = [{**row, "label": labels[row["label"]]} for row in rows if row["label"] in labels]
    compared = summarize(picked, baseline="full" if "full" in labels.values() else None)
    by_method = {row["method"]: row for row in chosen.values()}
    return [row | {"chosen": by_method[row["method"]]["label"]} for row in compared]


def size_study(start, size, epochs, args):
    """The grid at one labelled size: every run, every grid row and the chosen comparison."""
    small = argparse.Namespace(**vars(args))
    small.train_examples, small.epochs = size, epochs
    data = trec_data(small)
    variants = regime_variants(args.rates)
    rows = run_comparison(variants, [start], data, small)
    labels = [label for label, _, _ in variants]
    summaries = sorted(summarize(rows), key=lambda row: labels.index(row["label"]))
    compared = compare_chosen(rows, summaries)
    print(
        f"\n{start.name}, {size} labels, {epochs} epochs:\n{format_summary_table(summaries)}\n"
        f"chosen on validation, paired to full:\n{format_summary_table(compared)}"
    )
    keys = ("label", "method", "learning_rate", "seeds", "val_mean", "acc_mean", "acc_sd")
    return {
        "epochs": epochs,
        "train_examples": len(data["train"]),
        "rows": [{key: row[key] for key in (*keys, "train_s")} for row in summaries],
        "compared": [
            {key: row[key] for key in (*keys, "chosen", "difference", "train_s")}
            for row in compared
        ],
    }


def parse_arguments(argv=None):
    parser = comparison_parser(__doc__.split("\n\n")[0], seeds=3, run_dir="runs/unfreezing_regime")
    parser.add_argument(
        "--sizes",
        type=comma_separated(int, minimum=1),
        default=list(SIZES),
        help="comma-separated labelled-question counts (at most TREC-6's 4,907)",
    )
    parser.add_argument(
        "--rates",
        type=comma_separated(float, minimum=0, strictly_greater=True),
        default=list(RATES),
        help="comma-separated top rates; each method's is chosen on validation per size",
    )
    args = parser.parse_args(argv)
    if args.methods != "all":
        parser.error(f"--methods does not apply here: every call runs {METHODS}")
    if args.train_examples != 1000:
        parser.error("--train-examples does not apply here: give the labelled sizes as --sizes")
    if args.seeds < 1 or args.epochs < 1:
        parser.error(
            f"--seeds and --epochs must be positive integers; received {args.seeds}, {args.epochs}"
        )
    return parser, args


def main(argv=None):
    started = time.perf_counter()
    parser, args = parse_arguments(argv)
    starts = starting_points(parser, args)
    available = len(trec_data(argparse.Namespace(**{**vars(args), "train_examples": 0}))["train"])
    too_many = [size for size in args.sizes if size > available]
    if too_many:
        parser.error(
            f"--sizes must be at most {available} (TREC-6's training questions); {too_many}"
        )
    groups = {start.name: scheduled_groups(start) for start in starts}
    epochs = {name: ulmfit_epochs(count, args.epochs) for name, count in groups.items()}
    per_size = run_count([None], args.rates, args.seeds)  # one start's runs at one size
    steps = per_size * sum(
        math.ceil(size / args.batch_size) * epochs[name] for name in epochs for size in args.sizes
    )
    print(
        f"{run_count(args.sizes, args.rates, args.seeds, len(starts))} runs "
        f"({len(starts)} start(s) × {len(args.sizes)} sizes × {len(METHODS)} methods × "
        f"{len(args.rates)} rates × {args.seeds} seeds), {steps:,} training steps; epochs per "
        f"start: {epochs} (layer groups: {groups}); finished runs in {args.run_dir} are reused",
        file=sys.stderr,
        flush=True,
    )
    results = {
        "settings": {
            "sizes": args.sizes,
            "rates": args.rates,
            "seeds": args.seeds,
            "batch_size": args.batch_size,
            "sequence_length": args.sequence_length,
            "eval_examples": args.eval_examples,
            "lab01_model": args.lab01_model,
        },
        "starts": {
            start.name: {
                "source": start.source,
                "layer_groups": groups[start.name],
                "epochs": epochs[start.name],
            }
            for start in starts
        },
        "studies": {
            start.name: {
                str(size): size_study(start, size, epochs[start.name], args) for size in args.sizes
            }
            for start in starts
        },
    }
    headline = {}
    for start_name, by_size in results["studies"].items():
        for size, outcome in by_size.items():
            for row in outcome["compared"]:
                headline[f"{start_name}/{row['method']}@{size}"] = {
                    "chosen": row["chosen"],
                    "val": round(row["val_mean"], 4),
                    "test": round(row["acc_mean"], 4),
                    "difference": row["difference"],
                }
    results["chosen"] = headline
    seconds = time.perf_counter() - started
    print(f"{seconds:.0f} s this call", file=sys.stderr)
    if args.record:
        write_run_record(args.record, results, seconds)
    print(json.dumps(headline))
    return results


if __name__ == "__main__":
    main()
