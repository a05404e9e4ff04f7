"""RTE's small-set instability, and the remedies Mosbach et al. 2021 name, measured on MiniLM-L6.

lab12 fine-tunes MiniLM-L6 on RTE's 2,490 training pairs and some of its runs end at the
majority class (docs/results.md#lab12_pairs). Mosbach et al. 2021 trace such failures to
optimization (vanishing gradients early in training), not to too little data, and name three
remedies: bias-corrected Adam, a small rate with warmup, and many more iterations (they train 20
epochs on RTE, MRPC and CoLA; cited, not-measured). kbert's optimizer is already bias-corrected
(`kbert.train.fine_tuning_optimizer`: Keras's AdamW always is; tests/train/fine_tuning_test.py
shows its first update is the rate), so the other two are measured here, each alone and both
together, over `--seeds` seeds (3) with the same model, reading and data as lab12:

- `default`: lab12's settings (`--learning-rate`, `--epochs`; 10% warmup);
- `small_rate`: `--small-learning-rate` with `--warmup-fraction` warmup, lab12's epochs;
- `more_epochs`: lab12's rate over `--more-epochs` epochs;
- `both`: the small rate with warmup over `--more-epochs` epochs.

lab12's default already warms up over the first 10% of updates (`TrainingSettings`' default), so
at the default `--warmup-fraction` the `small_rate` row differs from it by the rate alone.

The model is MiniLM-L6 read by its trained pooling (`kbert.checkpoints.trained_pooling`: mean),
as lab12 reads it. As in lab12, a seeded 10% of the training file is held out for validation,
each run keeps its epoch with the best validation accuracy, and GLUE's dev set is the test set
(its test labels are private). The setting with the best mean validation accuracy is the one
chosen; every row's test accuracy is reported. Each row: test accuracy mean ± sd over seeds; the
seed-paired difference to `default` (`kbert.metrics.seed_comparison.paired_difference`); and how
many runs landed at the majority class (`kbert.metrics.majority_class.at_majority`: all one
class, or within a point of the majority), beside the majority class's own accuracy.

    python -m benchmarks.pair_stability [--record docs/results/pair_stability.json]
    python -m benchmarks.pair_stability --settings default,both --more-epochs 20

The last line printed is the JSON record.
"""

import argparse
import json
from pathlib import Path

import kbert.quiet  # noqa: F401  (TensorFlow's start-up lines filtered)

import keras

from kbert.checkpoints import load_pretrained, trained_pooling
from kbert.data import load_classification_task
from kbert.files import atomic_write_text
from kbert.metrics.majority_class import at_majority, majority_accuracy
from kbert.metrics.seed_comparison import format_difference, mean_sd, paired_difference
from kbert.models import SequenceClassifier
from kbert.run_records import add_record_argument, record_if_requested
from kbert.tasks import evaluate_classifier
from kbert.text import BertPreprocessor
from kbert.train import TrainingSettings, fine_tune_classifier
from kbert.train.lab_run_arguments import add_chosen_rate_argument
from kbert.train.precision import DTYPES, resolve_dtype

SETTINGS = ("default", "small_rate", "more_epochs", "both")
LAB12_WARMUP_FRACTION = TrainingSettings().warmup_fraction


def setting(name, args):
    """The rate, warmup and epochs of one named setting (see the module docstring)."""
    small = name in ("small_rate", "both")
    return {
        "learning_rate": args.small_learning_rate if small else args.learning_rate,
        "warmup_fraction": args.warmup_fraction if small else LAB12_WARMUP_FRACTION,
        "epochs": args.more_epochs if name in ("more_epochs", "both") else args.epochs,
    }


def load_data(args):
    """Train, validation (the seeded 10% of train lab12 holds out) and test (GLUE dev)."""
    limits = {
        "train": args.max_train_examples,
        "validation": args.max_eval_examples,
        "test": args.max_eval_examples,
    }
    return {
        split: load_classification_task(
            args.task, split, data_dir=args.data_dir, seed=args.seed, max_examples=limit
        )
        for split, limit in limits.items()
    }


def run_seed(data, settings, args, seed):
    """One fine-tuning run, its best validation epoch kept; its validation and test scores."""
    keras.utils.set_random_seed(seed)
    encoder, tokenizer = load_pretrained(args.model, dtype=args.dtype)
    preprocessor = BertPreprocessor(tokenizer, sequence_length=args.sequence_length)
    classifier = SequenceClassifier(encoder, len(data["train"].label_names), pooling=args.pooling)
    best = keras.callbacks.EarlyStopping(
        monitor="val_accuracy",
        mode="max",
        patience=settings["epochs"],
        restore_best_weights=True,
    )
    history, seconds = fine_tune_classifier(
        classifier,
        preprocessor,
        data["train"],
        data["validation"],
        settings=TrainingSettings(
            batch_size=args.batch_size,
            seed=seed,
            callbacks=[best],
            verbose=args.verbose,
            **settings,
        ),
    )
    by_epoch = [round(float(value), 4) for value in history.history["val_accuracy"]]
    test = evaluate_classifier(classifier, preprocessor, data["test"])
    return {
        "seed": seed,
        "val_accuracy_per_epoch": by_epoch,
        "val_accuracy": max(by_epoch),
        "test_accuracy": round(test["accuracy"], 4),
        "classes_predicted": len(set(test["predictions"])),
        "at_majority": at_majority(test["predictions"], data["test"].labels),
        "train_s": round(seconds, 1),
    }


def summarize(runs, baseline):
    """A setting's row: mean ± sd over seeds, paired difference to `baseline`, majority runs."""
    test = [run["test_accuracy"] for run in runs]
    val_mean, val_sd = mean_sd([run["val_accuracy"] for run in runs])
    test_mean, test_sd = mean_sd(test)
    difference = None if baseline is None else paired_difference(test, baseline)
    if difference is not None:
        difference.update(mean=_rounded(difference["mean"]), sd=_rounded(difference["sd"]))
    return {
        "val_mean": _rounded(val_mean),
        "val_sd": _rounded(val_sd),
        "test_mean": _rounded(test_mean),
        "test_sd": _rounded(test_sd),
        "difference": difference,
        "runs_at_majority": sum(run["at_majority"] for run in runs),
        "seeds": len(runs),
        "train_s": round(sum(run["train_s"] for run in runs), 1),
    }


def _rounded(value):
    return None if value is None else round(value, 4)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", default="rte", choices=("rte", "mrpc"))
    parser.add_argument("--model", default="minilm_l6")
    parser.add_argument(
        "--pooling", default="trained", help="trained (the checkpoint's own, as lab12), cls, ..."
    )
    parser.add_argument(
        "--settings",
        default=",".join(SETTINGS),
        help=f"comma-separated, default first: {', '.join(SETTINGS)}",
    )
    parser.add_argument("--seeds", type=int, default=3, help="fine-tuning runs per setting")
    parser.add_argument("--seed", type=int, default=0, help="the held-out split, first seed")
    add_chosen_rate_argument(parser, what="lab12's rate")
    parser.add_argument("--epochs", type=int, default=4, help="lab12's epochs")
    parser.add_argument("--small-learning-rate", type=float, default=2e-5)
    parser.add_argument("--warmup-fraction", type=float, default=0.1, help="the small rate's")
    parser.add_argument("--more-epochs", type=int, default=8)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--sequence-length", type=int, default=128)
    parser.add_argument("--dtype", default="auto", choices=DTYPES)
    parser.add_argument("--max-train-examples", type=int, default=None, help="(smoke runs)")
    parser.add_argument("--max-eval-examples", type=int, default=None, help="(smoke runs)")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--run-dir", default="runs/pair_stability")
    parser.add_argument("--verbose", type=int, default=0)
    add_record_argument(parser)
    args = parser.parse_args(argv)
    check_args(parser, args)
    args.dtype = resolve_dtype(args.dtype)
    if args.pooling == "trained":  # how the checkpoint was trained to be read (MiniLM-L6: mean)
        args.pooling = trained_pooling(args.model)
    return args


def check_args(parser, args):
    """Every setting flag checked, each error naming the flag and what it expects."""
    names = [name.strip() for name in args.settings.split(",") if name.strip()]
    if (
        not names
        or names[0] != "default"
        or set(names) - set(SETTINGS)
        or len(set(names)) < len(names)
    ):
        parser.error(
            f"--settings must list default first, then any of {', '.join(SETTINGS[1:])} once "
            f"each; received {args.settings!r}"
        )
    args.settings = names
    positive = ("--seeds", "--epochs", "--more-epochs", "--batch-size", "--sequence-length")
    for flag in positive:
        value = getattr(args, flag[2:].replace("-", "_"))
        if value < 1:
            parser.error(f"{flag} must be >= 1; received {value}")
    for flag in ("--learning-rate", "--small-learning-rate"):
        value = getattr(args, flag[2:].replace("-", "_"))
        if not value > 0:
            parser.error(f"{flag} must be > 0; received {value}")
    if not 0.0 <= args.warmup_fraction <= 1.0:
        parser.error(f"--warmup-fraction must be in [0, 1]; received {args.warmup_fraction}")
    for flag in ("--max-train-examples", "--max-eval-examples"):
        value = getattr(args, flag[2:].replace("-", "_"))
        if value is not None and value < 1:
            parser.error(f"{flag} must be >= 1 (or left out for all); received {value}")


def print_table(results):
    print(
        f"\n{results['task']}: {results['model']} read by {results['pooling']}, "
        f"{results['train']:,} train / {results['validation']:,} validation / "
        f"{results['test']:,} test pairs, {results['seeds']} seed(s); majority class "
        f"{results['majority_accuracy']:.4f}"
    )
    print(
        "setting       lr       warmup epochs  val mean   test mean ± sd    vs default"
        "              at majority"
    )
    for name, row in results["rows"].items():
        settings = row["settings"]
        spread = "" if row["test_sd"] is None else f" ± {row['test_sd']:.4f}"
        chosen = "  (chosen on validation)" if name == results["chosen_on_validation"] else ""
        print(
            f"{name:12s} {settings['learning_rate']:8.1e} {settings['warmup_fraction']:6.2f} "
            f"{settings['epochs']:6d}  {row['val_mean']:.4f}   {row['test_mean']:.4f}{spread:9s}"
            f"  {format_difference(row['difference']):24s} {row['runs_at_majority']} of "
            f"{row['seeds']}{chosen}"
        )


def main(argv=None):
    args = parse_args(argv)
    data = load_data(args)
    seeds = [args.seed + k for k in range(args.seeds)]
    runs, rows = {}, {}
    for name in args.settings:
        settings = setting(name, args)
        runs[name] = []
        for seed in seeds:
            run = run_seed(data, settings, args, seed)
            runs[name].append(run)
            print(
                f"{name}, seed {seed}: test {run['test_accuracy']:.4f} (best val "
                f"{run['val_accuracy']:.4f}; {run['classes_predicted']} class(es) predicted"
                f"{', at the majority' if run['at_majority'] else ''}; {run['train_s']:.0f} s)",
                flush=True,
            )
        baseline = None if name == "default" else [r["test_accuracy"] for r in runs["default"]]
        rows[name] = {"settings": settings, **summarize(runs[name], baseline), "runs": runs[name]}
    results = {
        "task": args.task,
        "model": args.model,
        "pooling": args.pooling,
        "train": len(data["train"]),
        "validation": len(data["validation"]),
        "test": len(data["test"]),
        "majority_accuracy": round(majority_accuracy(data["test"].labels), 4),
        "seeds": args.seeds,
        "chosen_on_validation": max(rows, key=lambda name: rows[name]["val_mean"]),
        "rows": rows,
        "batch_size": args.batch_size,
        "sequence_length": args.sequence_length,
        "dtype": args.dtype,
    }
    print_table(results)
    run_dir = Path(args.run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_text(run_dir / "results.json", json.dumps(results, indent=1))
    record_if_requested(args, results)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
