"""Lab 21: sequential adaptation (STILTs): a related labelled task first, then the target.

Reproduces §4.3.B of the NAACL 2019 tutorial "Transfer Learning in NLP" (sequential adaptation
on a related high-resource dataset; Phang et al. 2018, "STILTs"): the pretrained encoder is
fine-tuned on an intermediate task, its head is dropped, and a new head is trained on the
target with the encoder's weights as they left the intermediate task.

- IMDb (movie reviews, 2 classes) after SST-2 (movie-review sentences, the same two classes),
  at `--imdb-examples` labelled reviews (100 and 500), against IMDb alone;
- RTE (entailment pairs) after MRPC (paraphrase pairs), against RTE alone.

Fine-tuning on so few labels can end predicting the majority class (Mosbach et al. 2021), RTE's
pairs and IMDb's 100 reviews alike, so every row is reported beside its majority class and the
count of its runs that landed there (`kbert.metrics.majority_class.at_majority`: predictions
all one class, or accuracy within a point of the majority's), and a difference between rows
with runs there is read with those counts beside it (STILTs also reports fewer degenerate runs:
Phang et al. 2018).

A control separates "more training" from "a related task": the same intermediate texts with
their labels shuffled (see `shuffled_labels`). Every target run, with or without an
intermediate step, trains the same head for the same epochs and steps at the same rate on the
same seeded subset, and each seed pairs the three starts, so the lab reports per target and
size mean ± sd of test accuracy over `--seeds` seeds and the seed-paired difference of each
start to the target alone (`kbert.metrics.seed_comparison`: "no difference" inside the spread).

Each start's target runs have their own peak rate, chosen on validation per target and size
(`kbert.train.rate_on_validation`): the first seed tries each of `--learning-rates`, scored on
the target's held-out training examples (`--validation-examples`, never trained on), and the
other seeds train at the rate chosen; an encoder that left an intermediate task need not want
the rate the pretrained one does. Settings come from the repository's chosen defaults: the rates
tried are full fine-tuning's rate chosen on validation for MiniLM-L6 (TREC-6, 1,000 questions)
by `benchmarks/adaptation_grid.py`, read from its record
(`kbert.train.chosen_on_validation.chosen_rates`), a third and three times it; the intermediate
runs train at that rate itself; the
intermediate task runs one epoch (`kbert.train.adaptation_recipes.sequential_adaptation`),
batches of 16 and "few labels get more epochs" are lab07's, with fewer least steps (24 where
lab07 takes 100: `--min-steps`, `--epochs`, sized so that the 27 target runs fit a 2-core CPU;
the shuffled-labels start gets the same extra updates as the related task, so a gain that
is only more optimisation shows in it too), the held-out 10%
of each training file is never trained on (lab12), and MiniLM-L6 is read by the pooling it was
trained for (`kbert.checkpoints.trained_pooling`: mean). Sizes are cut for a 2-core CPU: the
head of each review (`--sequence-length` tokens, as lab07), a subsample of IMDb's test set
(`--eval-examples`), and a few thousand intermediate examples.

What STILTs leads one to expect: the related task helps most where the target has fewest labels
(IMDb at 100 more than at 500: the lab pairs the two gains by seed, `gain_by_labels`), and the
shuffled control helps less than the real task. What
the record found: docs/results.md#lab21_sequential_adaptation.

    python labs/lab21_sequential_adaptation.py [--record docs/results/lab21_sequential_adaptation.json]
    python labs/lab21_sequential_adaptation.py --targets imdb --seeds 1   # a quick look
"""

import argparse
import dataclasses
import math

import kbert.quiet  # noqa: F401  (TensorFlow's start-up lines filtered)

import keras
import numpy as np

from kbert.arguments import comma_separated
from kbert.checkpoints import load_pretrained, trained_pooling
from kbert.data import load_classification_task
from kbert.metrics.majority_class import at_majority, majority_accuracy
from kbert.metrics.seed_comparison import format_difference, paired_difference, summarize_arms
from kbert.models import SequenceClassifier
from kbert.tasks import evaluate_classifier
from kbert.text import BertPreprocessor
from kbert.train import TrainingSettings, fine_tune_classifier
from kbert.train.lab_run_arguments import (
    add_lab_run_arguments,
    add_learning_rates_argument,
    finish_lab,
    resolve_learning_rates,
)
from kbert.train.precision import resolve_dtype
from kbert.train.rate_on_validation import rate_then_seeds

# Target → its intermediate task, and the flags that size each.
STUDIES = {
    "imdb": {"intermediate": "sst2", "sizes": "imdb_examples", "budget": "sst2_examples"},
    "rte": {"intermediate": "mrpc", "sizes": "rte_examples", "budget": "mrpc_examples"},
}
STARTS = {
    "alone": "target alone (pretrained encoder)",
    "sequential": "intermediate task, then target",
    "shuffled": "shuffled-label control, then target",
}


# %% The control. An intermediate step on *any* data gives the encoder more updates, and moves
# its weights away from the pretrained ones, before the target; a gain over "target alone" may
# come from that alone. The same intermediate texts with their labels permuted keep everything
# but the task: the same sentences (so the same domain and vocabulary), the same number of
# examples, classes and class shares, the same steps at the same rate. An unrelated task would
# change the texts as well as the labels, so it could not say which of the two mattered.
def shuffled_labels(examples, seed):
    """The control's intermediate task: the same texts, their labels permuted by `seed`."""
    labels = np.random.default_rng(seed).permutation(examples.labels)
    return dataclasses.replace(examples, labels=labels, source=f"{examples.source} (shuffled)")


def training(args, seed, epochs, learning_rate=None):
    """The recipe at `learning_rate` (default: `--learning-rate`, the intermediate runs')."""
    return TrainingSettings(
        epochs=epochs,
        batch_size=args.batch_size,
        learning_rate=learning_rate or args.learning_rate,
        seed=seed,
        verbose=args.verbose,
    )


def parameters(variables):
    return int(sum(math.prod(variable.shape) for variable in variables))


# %% The technique: the encoder that leaves the intermediate task keeps its weights, its head is
# dropped, and a new head goes on for the target. Both classifiers are built on one encoder
# object, so "carrying over" is sharing its variables; this cell lists what is shared, dropped
# and new, and checks the shared weights moved away from the pretrained ones.
def show_carry_over(first, second, pretrained):
    """Prints which weights of `second` (the target's classifier) come from `first`.

    Args:
        first: `SequenceClassifier` trained on the intermediate task.
        second: `SequenceClassifier` built on `first.encoder` for the target.
        pretrained: list of arrays, the encoder's weights before the intermediate task.

    Returns:
        dict: counts of carried, dropped and new weights, and how far the carried ones moved.
    """
    if second.encoder is not first.encoder:
        raise ValueError("second must be built on first.encoder, the adapted encoder")
    shared = {id(variable) for variable in first.encoder.weights}
    carried = [v for v in second.weights if id(v) in shared]
    dropped = [v for v in first.weights if id(v) not in shared]
    new = [v for v in second.weights if id(v) not in shared]
    moved = max(
        float(np.max(np.abs(keras.ops.convert_to_numpy(v) - before)))
        for v, before in zip(first.encoder.weights, pretrained, strict=True)
    )
    print(
        f"carried over: the encoder, {len(carried)} weights, {parameters(carried):,} parameters "
        f"(largest change from the pretrained weights during the intermediate task: {moved:.4f})"
    )
    for label, variables in (("dropped", dropped), ("new", new)):
        for variable in variables:
            print(f"{label:>12}: {variable.path} {tuple(variable.shape)} (head)")
    return {
        "carried_weights": len(carried),
        "carried_parameters": parameters(carried),
        "dropped": [variable.path for variable in dropped],
        "new": [variable.path for variable in new],
        "largest_change": round(moved, 6),
    }


def adapted_encoder(args, intermediate, seed, target_classes=None):
    """The encoder's weights after one intermediate run; with `target_classes`, shown too."""
    keras.backend.clear_session()  # each run builds new models: free the last run's graphs
    keras.utils.set_random_seed(seed)
    encoder, tokenizer = load_pretrained(args.model, dtype=args.dtype)
    preprocessor = BertPreprocessor(tokenizer, sequence_length=args.sequence_length)
    pretrained = encoder.get_weights()
    first = SequenceClassifier(encoder, len(intermediate.label_names), pooling=args.pooling)
    history, seconds = fine_tune_classifier(
        first, preprocessor, intermediate, settings=training(args, seed, args.intermediate_epochs)
    )
    run = {
        "train_accuracy": round(history.history["accuracy"][-1], 4),
        "train_s": round(seconds, 1),
    }
    if target_classes is not None:
        second = SequenceClassifier(encoder, target_classes, pooling=args.pooling)
        run["carry_over"] = show_carry_over(first, second, pretrained)
    return encoder.get_weights(), run


def target_run(args, weights, data, seed, learning_rate):
    """The target from `weights` (None: the pretrained encoder) with a new head, trained on
    `data["train"]` at `learning_rate`: its test accuracy, whether it landed at the majority
    class, and (where `data` holds "validation") its validation accuracy."""
    train, test = data["train"], data["test"]
    keras.backend.clear_session()
    keras.utils.set_random_seed(seed)  # the same new head for every start of this seed
    encoder, tokenizer = load_pretrained(args.model, dtype=args.dtype)
    if weights is not None:
        encoder.set_weights(weights)
    preprocessor = BertPreprocessor(tokenizer, sequence_length=args.sequence_length)
    classifier = SequenceClassifier(encoder, len(train.label_names), pooling=args.pooling)
    # Few labels get more epochs (lab07): at least `--min-steps` steps, at least `--epochs`.
    epochs = max(args.epochs, math.ceil(args.min_steps / math.ceil(len(train) / args.batch_size)))
    _, seconds = fine_tune_classifier(
        classifier, preprocessor, train, settings=training(args, seed, epochs, learning_rate)
    )
    report = evaluate_classifier(classifier, preprocessor, test)
    held = {}
    if "validation" in data:
        accuracy = evaluate_classifier(classifier, preprocessor, data["validation"])["accuracy"]
        held["validation_accuracy"] = round(float(accuracy), 4)
    return held | {
        "learning_rate": learning_rate,
        "test_accuracy": round(float(report["accuracy"]), 4),
        "at_majority": at_majority(report["predictions"], test.labels),
        "epochs": epochs,
        "train_s": round(seconds, 1),
    }


def summarize(accuracies, landed):
    """Each start's mean ± sd, its seed-paired difference to the target alone, and how many of
    its runs landed at the majority class.

    Args:
        accuracies: dict start → list of test accuracies over seeds (same seed order).
        landed: dict start → list of bool over seeds, each run's `at_majority`.
    """
    rows = summarize_arms(accuracies, "alone")
    # What the related task adds beyond the training the control also gets.
    rows["sequential"]["vs_shuffled"] = paired_difference(
        accuracies["sequential"], accuracies["shuffled"]
    )
    for start, flags in landed.items():
        rows[start]["runs_at_majority"] = int(sum(flags))
    return rows


def gain_by_labels(accuracies, resolved):
    """STILTs' claim that the related task helps most where the target has fewest labels, as one
    paired difference: per seed, (intermediate task − alone) at the fewest labels minus the same
    at the most, `paired_difference` of the two gains. None with a single size.

    Args:
        accuracies: dict size flag → start → list of test accuracies over seeds (same order).
        resolved: dict size flag → the labelled examples it trained on.
    """
    if len(accuracies) < 2:
        return None
    fewest = min(accuracies, key=lambda size: resolved[size])
    most = max(accuracies, key=lambda size: resolved[size])
    gains = {
        size: [
            sequential - alone
            for sequential, alone in zip(
                accuracies[size]["sequential"], accuracies[size]["alone"], strict=True
            )
        ]
        for size in (fewest, most)
    }
    difference = paired_difference(gains[fewest], gains[most])
    return {"fewest": resolved[fewest], "most": resolved[most], **difference}


def study_data(target, args):
    """One target's training pool, its scored test subset, its intermediate task's examples and
    its held-out validation examples (where each start's rate is chosen)."""
    study = STUDIES[target]
    pool = load_classification_task(target, "train", data_dir=args.data_dir, seed=args.seed)
    test = load_classification_task(target, "test", data_dir=args.data_dir).sample(
        args.eval_examples, args.seed
    )
    intermediate = load_classification_task(
        study["intermediate"], "train", data_dir=args.data_dir, seed=args.seed
    ).sample(getattr(args, study["budget"]), args.seed)
    validation = load_classification_task(
        target, "validation", data_dir=args.data_dir, seed=args.seed
    ).sample(args.validation_examples, args.seed)
    return pool, test, intermediate, validation


def seed_starts(args, intermediate, seed, target_classes, intermediate_runs):
    """One seed's three starts: the encoder's weights by start (None: the pretrained ones).

    Each intermediate run (the related task, then its shuffled control) goes into
    `intermediate_runs`; with `target_classes`, the first one's carry-over is shown.

    Returns:
        `(weights, carry_over)`: carry_over is `show_carry_over`'s dict, or None if not shown.
    """
    weights, carry_over = {"alone": None}, None
    for start in ("sequential", "shuffled"):
        data = intermediate if start == "sequential" else shuffled_labels(intermediate, seed)
        classes = target_classes if carry_over is None else None
        weights[start], run = adapted_encoder(args, data, seed, classes)
        carry_over = run.pop("carry_over", carry_over)
        intermediate_runs[start].append(run)
    return weights, carry_over


def start_runs(args, target, size_inputs, start):
    """One start's target runs at one size, every seed, at the peak rate chosen on validation
    (`rate_then_seeds`): `(runs in seed order, the rate choice)`, printing each run.
    `size_inputs`: "seeds"; "weights", with `weights[seed][start]` the encoder's (None:
    pretrained); "data_for", with `data_for(seed, choosing)` the seed's "train" and "test" (and
    "validation" when `choosing`)."""
    seeds, weights, data_for = (size_inputs[key] for key in ("seeds", "weights", "data_for"))

    def train(rate, seed):
        choosing = seed == seeds[0] and len(args.learning_rates) > 1
        data = data_for(seed, choosing)
        run = target_run(args, weights[seed][start], data, seed, rate)
        majority = ", at the majority class" if run["at_majority"] else ""
        held = f", validation {run['validation_accuracy']:.4f}" if choosing else ""
        print(
            f"{target} {len(data['train'])} labelled, seed {seed}, {start}, lr {rate:g}: test "
            f"{run['test_accuracy']:.4f}{held}{majority} ({run['epochs']} epochs, "
            f"{run['train_s']:.0f} s)",
            flush=True,
        )
        return run

    return rate_then_seeds(args.learning_rates, seeds, train, "validation_accuracy")


def run_study(target, args, show):
    """Every seed and start of one target; returns its part of the record."""
    sizes = getattr(args, STUDIES[target]["sizes"])
    pool, test, intermediate, validation = study_data(target, args)
    seeds = list(range(args.seed, args.seed + args.seeds))
    accuracies = {size: {} for size in sizes}
    landed = {size: {} for size in sizes}
    runs, intermediate_runs, carry_over = [], {"sequential": [], "shuffled": []}, None
    weights = {}  # seed → start → the encoder's weights (None: pretrained)
    for seed in seeds:
        classes = len(pool.label_names) if show and carry_over is None else None
        weights[seed], shown = seed_starts(args, intermediate, seed, classes, intermediate_runs)
        carry_over = carry_over or shown
    resolved = {size: min(size, len(pool)) if size else len(pool) for size in sizes}
    choices = {}
    for size in sizes:

        def data_for(seed, choosing, size=size):
            data = {"train": pool.sample(size, 1000 * size + seed), "test": test}
            return data | ({"validation": validation} if choosing else {})

        for start in STARTS:  # the same subset per seed for every start
            inputs = {"seeds": seeds, "weights": weights, "data_for": data_for}
            kept, choice = start_runs(args, target, inputs, start)
            choices.setdefault(str(resolved[size]), {})[start] = choice
            accuracies[size][start] = [run["test_accuracy"] for run in kept]
            landed[size][start] = [run["at_majority"] for run in kept]
            runs += [
                {"size": resolved[size], "seed": seed, "start": start, **run}
                for seed, run in zip(seeds, kept, strict=True)
            ]
    runs.sort(key=lambda run: run["seed"])  # seed-major; sizes and starts in order within
    return {
        "intermediate": STUDIES[target]["intermediate"],
        "intermediate_examples": len(intermediate),
        "intermediate_train_accuracy": {
            start: round(float(np.mean([r["train_accuracy"] for r in rs])), 4)
            for start, rs in intermediate_runs.items()
        },
        "test_examples": len(test),
        "validation_examples": len(validation),
        "majority_accuracy": round(majority_accuracy(test.labels), 4),
        "sizes": {str(resolved[size]): summarize(accuracies[size], landed[size]) for size in sizes},
        "rate_choices": choices,
        "gain_fewest_minus_most": gain_by_labels(accuracies, resolved),
        "runs": runs,
        "carry_over": carry_over,
    }


def print_table(studies, args):
    """The results table: per target, size and start, test accuracy (mean ± sd), its paired
    difference to the target alone, the majority class and the runs that landed there."""
    print(
        f"\n{args.model} ({args.pooling} pooling), intermediate lr {args.learning_rate}, "
        f"target rates tried {args.learning_rates}, batch "
        f"{args.batch_size}, {args.sequence_length} tokens, {args.seeds} seed(s)"
    )
    print(
        "target  labelled  start                                 rate     test mean ± sd   "
        "majority  at majority  vs alone"
    )
    for target, study in studies.items():
        for size, rows in study["sizes"].items():
            for start, label in STARTS.items():
                row = rows[start]
                spread = "" if row["sd"] is None else f" ± {row['sd']:.4f}"
                rate = f"{study['rate_choices'][size][start]['chosen']:g}"
                print(
                    f"{target:6s}  {size:>8s}  {label:36s}  {rate:7s}  {row['mean']:.4f}"
                    f"{spread:9s}  "
                    f"{study['majority_accuracy']:.4f}    "
                    f"{row['runs_at_majority']} of {len(row['runs']):<6d}  "
                    f"{format_difference(row.get('vs_alone'))}"
                )
            print(
                f"{target:6s}  {size:>8s}  intermediate task vs its shuffled control: "
                f"{format_difference(rows['sequential']['vs_shuffled'])}"
            )
        gain = study["gain_fewest_minus_most"]
        if gain is not None:
            print(
                f"{target:6s}  the related task's gain over alone at {gain['fewest']} labelled "
                f"minus at {gain['most']} (points, paired by seed): {format_difference(gain)}"
            )
        print(
            f"{target:6s}  majority class {study['majority_accuracy']:.4f} on "
            f"{study['test_examples']} test examples; {study['intermediate']} training accuracy "
            "after its epoch(s): "
            + ", ".join(f"{k} {v:.4f}" for k, v in study["intermediate_train_accuracy"].items())
        )


# %% Settings (`--help` lists them).
parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--targets", default=",".join(STUDIES), help="imdb and/or rte, comma-separated")
parser.add_argument("--model", default="minilm_l6", help="minilm_l6 or a checkpoint directory")
parser.add_argument(
    "--pooling", default="trained", help="trained (kbert.checkpoints.trained_pooling), cls, mean"
)
parser.add_argument(
    "--imdb-examples",
    type=comma_separated(int, minimum=1),
    default=[100, 500],
    help="labelled IMDb reviews per target run, comma-separated sizes",
)
parser.add_argument(
    "--rte-examples",
    type=comma_separated(int, minimum=0),
    default=[500],
    help="labelled RTE pairs per target run (0: the whole training split)",
)
parser.add_argument("--sst2-examples", type=int, default=2000, help="SST-2 sentences (0: all)")
parser.add_argument("--mrpc-examples", type=int, default=800, help="MRPC pairs (0: all)")
parser.add_argument(
    "--eval-examples", type=int, default=300, help="test examples scored per target (0: all)"
)
parser.add_argument(
    "--validation-examples",
    type=int,
    default=300,
    help="held-out training examples per target each start's rate is chosen on (0: all)",
)
parser.add_argument(
    "--sequence-length", type=int, default=128, help="tokens read (a review's head)"
)
parser.add_argument("--batch-size", type=int, default=16)
parser.add_argument("--epochs", type=int, default=1, help="least epochs of each target run")
parser.add_argument("--min-steps", type=int, default=24, help="least steps of each target run")
parser.add_argument("--intermediate-epochs", type=int, default=1)
add_lab_run_arguments(
    parser,
    "runs/lab21_sequential_adaptation",
    "sequential",
    seeds_help="runs per target, size and start",
    seed_help="the data subsets' seed",
)
add_learning_rates_argument(parser, "start's target run")
args = parser.parse_args()
targets = [target.strip() for target in args.targets.split(",") if target.strip()]
if not targets or set(targets) - set(STUDIES):
    parser.error(f"--targets must list imdb and/or rte; received {args.targets!r}")
for flag in ("seeds", "epochs", "intermediate_epochs", "batch_size", "sequence_length"):
    if getattr(args, flag) < 1:
        parser.error(f"--{flag.replace('_', '-')} must be >= 1; received {getattr(args, flag)}")
for flag in (
    "sst2_examples",
    "mrpc_examples",
    "eval_examples",
    "validation_examples",
    "min_steps",
    "seed",
):
    if getattr(args, flag) < 0:
        parser.error(f"--{flag.replace('_', '-')} must be >= 0; received {getattr(args, flag)}")
if not args.learning_rate > 0:
    parser.error(f"--learning-rate must be > 0; received {args.learning_rate}")
resolve_learning_rates(parser, args)
args.dtype = resolve_dtype(args.dtype)  # "auto": what this machine computes fastest
if args.pooling == "trained":  # how the checkpoint was trained to be read (MiniLM-L6: mean)
    args.pooling = trained_pooling(args.model)

# %% Each target: per seed, the two intermediate runs (the first one shown), then each size
# from the three starts.
studies = {target: run_study(target, args, show=index == 0) for index, target in enumerate(targets)}

# %% Results table: test accuracy, mean ± sd over seeds, beside the majority class and the runs
# that landed there; differences in points, seed-paired.
print_table(studies, args)
report = {
    "model": args.model,
    "targets": studies,
    "settings": {
        key: getattr(args, key)
        for key in (
            "pooling",
            "learning_rate",
            "learning_rates",
            "batch_size",
            "sequence_length",
            "epochs",
            "min_steps",
            "intermediate_epochs",
            "seeds",
            "dtype",
        )
    },
}
finish_lab(args, report)
