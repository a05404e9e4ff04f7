"""Why L2-SP at a large λ costs MiniLM-L6 fine-tuning so much: the weights' paths, measured.

`benchmarks/adaptation_grid.py` swept L2-SP's λ on MiniLM-L6 (TREC-6, 1,000 questions, 3
epochs, at full fine-tuning's rate chosen on validation): test accuracy falls as λ grows, and λ 10
lies far below λ 0.01 (each λ's validation and test accuracy:
docs/results.md#adaptation_grid_minilm). Three explanations are measured here, at the rate that
study trained at (read from its record; `--learning-rate` overrides it), `--seeds` runs per
setting (λ × global-norm clipping; 3 by default), each measure's mean ± sd over them, and each
anchored row's seed-paired test difference to the control of explanation 3:

1. *Clipping*: the penalty's gradient `λ (w − w₀)` over 22M weights dominates the global
   gradient norm, so `global_clipnorm=1` scales the task's gradient away. If so, λ 10 without
   clipping recovers.
2. *Adam turns a stiff penalty into jitter*: Adam divides each coordinate's gradient by its
   own running scale, so a weight the penalty pulls back takes a full step of about the rate
   whatever λ is, overshoots w₀ and is pulled back again. Every encoder weight then
   oscillates around w₀ instead of resting there, the features the new head reads change at
   every step, and the head cannot fit them. If so, the weights' path (the summed size of
   their steps) is long against their net displacement from w₀ at λ 10, and clipping changes
   nothing (a common scale on every gradient cancels in Adam's ratio).
3. *A pinned encoder leaves a head trained at the encoder's rate*: whatever λ does to the
   encoder, the new head carries no anchor, and it trains at full fine-tuning's peak rate for
   96 updates, far below feature extraction's own (5e-3): a head alone may not get far at it.
   If so, the control row (the encoder frozen, no anchor, the same rate and clipping) scores
   as λ 10 does ("no difference" paired by seed), and the head's weights move as little in
   both.

Each row reports test and validation accuracy, the penalty and the training loss at the end,
the net displacement RMS(w − w₀) of the encoder's anchored weights, the path: the mean RMS
step per update over the last epoch (how far the weights move each step) and its ratio to the
net displacement, and the head's own RMS displacement from its initial weights; the record
keeps every seed's run beside the row.

    python -m benchmarks.anchor_strength [--strengths 0.01,10 --clipnorms 1,none]
                                         [--no-frozen-control]

The last line is JSON: one object per row.
"""

import argparse
import json
import sys
import time

import kbert.quiet  # noqa: F401  (TensorFlow's start-up lines filtered)

import keras
import numpy as np

from kbert.arguments import comma_separated
from kbert.data.classification_tasks import load_classification_task
from kbert.metrics.seed_comparison import over_seeds, paired_difference
from kbert.run_records import add_record_argument, record_if_requested
from kbert.tasks.classification import evaluate_classifier
from kbert.train.adaptation_recipes import pretrained_starting_point
from kbert.train.adaptation_run import AdaptationRun
from kbert.train.chosen_on_validation import RATES_RECORDS, read_results
from kbert.train.classifier_fine_tuning import fine_tune_classifier
from kbert.train.fine_tuning import fine_tuning_optimizer
from kbert.train.freezing import freeze_for_feature_extraction
from kbert.train.pretrained_anchor import anchor_penalty, anchor_to_pretrained
from kbert.train.training_settings import TrainingSettings


class WeightPath(keras.callbacks.Callback):
    """Records, per update, the RMS step of `variables` and their RMS distance to `anchors`."""

    def __init__(self, variables, anchors):
        super().__init__()
        self.variables, self.anchors = variables, anchors
        self.count = sum(int(np.prod(v.shape)) for v in variables)
        self.previous = [np.array(v.numpy()) for v in variables]
        self.steps, self.distances = [], []

    def on_train_batch_end(self, batch, logs=None):
        step = distance = 0.0
        for index, variable in enumerate(self.variables):
            value = variable.numpy()
            step += float(np.sum(np.square(value - self.previous[index])))
            distance += float(np.sum(np.square(value - self.anchors[index])))
            self.previous[index] = np.array(value)
        self.steps.append((step / max(self.count, 1)) ** 0.5)
        self.distances.append((distance / max(self.count, 1)) ** 0.5)


def clipnorm_list(text):
    """`--clipnorms`: comma-separated global-norm clips > 0, or "none" for no clipping."""
    numbers = comma_separated(float, minimum=0, strictly_greater=True)
    parts = [part.strip() for part in str(text).split(",") if part.strip()]
    try:
        if not parts:
            raise argparse.ArgumentTypeError("no value")
        return [None if part.lower() == "none" else numbers(part)[0] for part in parts]
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"must be comma-separated numbers > 0 or none; received {text!r}"
        ) from None


GRID_RATE_FALLBACK = 3e-4  # the anchors study's rate before the grid recorded one


def grid_rate(start, results_dir=None):
    """The peak rate the grid's anchors study trained `start` at (full fine-tuning's rate
    chosen on validation), and where it came from; the fallback when it is not recorded."""
    name = RATES_RECORDS.get(start)
    results = (read_results(name, results_dir) if name else None) or {}
    study = (results.get("studies") or {}).get("anchors", {}).get(start)
    if study is None or study.get("learning_rate") is None:
        return GRID_RATE_FALLBACK, f"no anchors study for {start!r} recorded: the fallback"
    return float(study["learning_rate"]), f"{name}.json's anchors study for {start!r}"


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--start", default="minilm_l6")
    parser.add_argument(
        "--strengths",
        type=comma_separated(float, minimum=0, strictly_greater=True),
        default="0.01,10",
        help="comma-separated λ values",
    )
    parser.add_argument(
        "--clipnorms",
        type=clipnorm_list,
        default="1,none",
        help="comma-separated global-norm clips, or none",
    )
    parser.add_argument(
        "--frozen-control",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="add a row with the encoder frozen and no anchor, at the same rate and the "
        "first clipping (explanation 3)",
    )
    parser.add_argument(
        "--learning-rate",
        type=float,
        default=None,
        help="peak rate (default: the rate the grid's anchors study trained the start at)",
    )
    parser.add_argument("--train-examples", type=int, default=1000)
    parser.add_argument("--eval-examples", type=int, default=0, help="0: all (545 and 500)")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--sequence-length", type=int, default=64)
    parser.add_argument("--seeds", type=int, default=3, help="runs per setting")
    parser.add_argument("--seed", type=int, default=0, help="the first seed")
    parser.add_argument("--data-dir", default=None)
    add_record_argument(parser)
    args = parser.parse_args()
    for flag in ("seeds", "epochs", "batch_size"):
        if getattr(args, flag) < 1:
            parser.error(f"--{flag.replace('_', '-')} must be >= 1; received {getattr(args, flag)}")
    if args.learning_rate is not None and not args.learning_rate > 0:
        parser.error(f"--learning-rate must be > 0; received {args.learning_rate}")
    if args.learning_rate is None:
        args.learning_rate, args.rate_source = grid_rate(args.start)
    else:
        args.rate_source = "--learning-rate"
    return args


def load_data(args):
    evaluation = args.eval_examples or None
    return {
        "train": load_classification_task(
            "trec", "train", data_dir=args.data_dir, max_examples=args.train_examples or None
        ),
        "validation": load_classification_task(
            "trec", "validation", data_dir=args.data_dir, max_examples=evaluation
        ),
        "test": load_classification_task(
            "trec", "test", data_dir=args.data_dir, max_examples=evaluation
        ),
    }


def one_run(start, data, setting, seed, args):
    """One fine-tuning at `setting = (λ or None for the frozen control, clipnorm)` and `seed`:
    its accuracies and the weights' paths."""
    strength, clipnorm = setting
    keras.utils.set_random_seed(seed)
    run = AdaptationRun(start, data, seed, args.epochs, args.batch_size, args.learning_rate)
    encoder, preprocessor = start.load()
    encoder_weights = {id(v) for v in encoder.weights}
    if strength is None:
        anchored = []
        classifier = run.classifier(encoder)
        freeze_for_feature_extraction(classifier)
    else:
        anchored = anchor_to_pretrained(encoder, strength)
        classifier = run.classifier(encoder)
    head = [v for v in classifier.trainable_weights if id(v) not in encoder_weights]
    head_path = WeightPath(head, [np.array(v.numpy()) for v in head])
    path = WeightPath(anchored, [v.regularizer.anchor.numpy() for v in anchored])
    history, seconds = fine_tune_classifier(
        classifier,
        preprocessor,
        data["train"],
        settings=TrainingSettings(
            epochs=args.epochs,
            batch_size=args.batch_size,
            seed=seed,
            callbacks=[path, head_path],
            verbose=0,
        ),
        optimizer=lambda steps, clip=clipnorm: fine_tuning_optimizer(
            steps, args.learning_rate, clipnorm=clip
        ),
    )
    per_epoch = len(path.steps) // args.epochs
    last_steps = path.steps[-per_epoch:]
    displacement = path.distances[-1]
    return {
        "seed": seed,
        "test_accuracy": evaluate_classifier(classifier, preprocessor, data["test"])["accuracy"],
        "validation_accuracy": evaluate_classifier(classifier, preprocessor, data["validation"])[
            "accuracy"
        ],
        "final_loss": float(history.history["loss"][-1]),
        "final_penalty": anchor_penalty(classifier),
        "anchored_parameters": path.count,
        "displacement_rms": displacement,
        "step_rms_last_epoch": float(np.mean(last_steps)),
        "path_over_displacement": (
            float(np.sum(last_steps) / displacement) if displacement > 0 else None
        ),
        "head_parameters": head_path.count,
        "head_displacement_rms": head_path.distances[-1],
        "displacement_by_epoch": [
            path.distances[min((epoch + 1) * per_epoch, len(path.distances)) - 1]
            for epoch in range(args.epochs)
        ],
        "train_s": seconds,
    }


# A row's measures averaged over its seeds (each with its sd as `{name}_sd`).
AVERAGED = (
    "test_accuracy",
    "validation_accuracy",
    "final_loss",
    "final_penalty",
    "displacement_rms",
    "step_rms_last_epoch",
    "head_displacement_rms",
    "train_s",
)


def setting_row(setting, runs):
    """One setting's row: its measures' mean and sd over seeds, the per-epoch displacement and
    path ratio averaged, and the runs themselves."""
    strength, clipnorm = setting
    ratios = [run["path_over_displacement"] for run in runs]
    epochs = len(runs[0]["displacement_by_epoch"])
    return {
        "strength": strength,
        "encoder": "frozen" if strength is None else "anchored",
        "clipnorm": clipnorm,
        "seeds": len(runs),
        **over_seeds(runs, AVERAGED),
        "anchored_parameters": runs[0]["anchored_parameters"],
        "head_parameters": runs[0]["head_parameters"],
        "path_over_displacement": None if None in ratios else float(np.mean(ratios)),
        "displacement_by_epoch": [
            float(np.mean([run["displacement_by_epoch"][epoch] for run in runs]))
            for epoch in range(epochs)
        ],
        "runs": runs,
    }


def with_control_differences(rows):
    """Each anchored row gets its seed-paired test-accuracy difference to the encoder-frozen
    control (`vs_frozen`), when the control ran."""
    control = next((row for row in rows if row["strength"] is None), None)
    if control is None:
        return rows
    baseline = [run["test_accuracy"] for run in control["runs"]]
    for row in rows:
        if row["strength"] is not None:
            values = [run["test_accuracy"] for run in row["runs"]]
            row["vs_frozen"] = paired_difference(values, baseline)
    return rows


def main():
    args = parse_arguments()
    data = load_data(args)
    start = pretrained_starting_point(args.start, args.sequence_length, name=args.start)
    print(f"peak rate {args.learning_rate:g} ({args.rate_source})", file=sys.stderr)
    settings = [(strength, clipnorm) for strength in args.strengths for clipnorm in args.clipnorms]
    if args.frozen_control:
        settings.append((None, args.clipnorms[0]))  # the encoder frozen, nothing anchored
    seeds = range(args.seed, args.seed + args.seeds)
    rows = []
    for setting in settings:
        runs = []
        for seed in seeds:
            run = one_run(start, data, setting, seed, args)
            runs.append(run)
            name = "encoder frozen" if setting[0] is None else f"λ {setting[0]:g}"
            print(
                f"[{time.strftime('%H:%M:%S')}] {name}, clip {setting[1]}, seed {seed}: test "
                f"{run['test_accuracy']:.3f}, loss {run['final_loss']:.3f} (penalty "
                f"{run['final_penalty']:.3f}), RMS(w − w₀) {run['displacement_rms']:.2e}, RMS "
                f"step {run['step_rms_last_epoch']:.2e}, head RMS change "
                f"{run['head_displacement_rms']:.2e}",
                file=sys.stderr,
                flush=True,
            )
            keras.backend.clear_session()
        rows.append(setting_row(setting, runs))
    rows = with_control_differences(rows)
    majority = float(np.bincount(data["test"].labels).max() / len(data["test"].labels))
    results = {
        "start": args.start,
        "learning_rate": args.learning_rate,
        "learning_rate_source": args.rate_source,
        "train_examples": len(data["train"]),
        "validation_examples": len(data["validation"]),
        "test_examples": len(data["test"]),
        "test_majority": majority,
        "epochs": args.epochs,
        "batch_size": args.batch_size,
        "seed": args.seed,
        "seeds": args.seeds,
        "rows": rows,
    }
    record_if_requested(args, results)
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
