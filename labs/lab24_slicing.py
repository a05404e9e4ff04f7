"""Lab 24: dataset slicing: find the slices a model fails on, and give them their own heads.

Reproduces §4.3.B of the NAACL 2019 tutorial "Transfer Learning in NLP" (dataset slicing: find
the subsets of the data where a model is weak and add capacity for them) with slice-based
learning (Chen et al. 2019, "Slice-based Learning: A Programming Model for Residual Learning in
Critical Data Slices", NeurIPS 2019), on TREC-6 question classification with MiniLM-L6:

1. Slices a student can read, by slicing functions over the question text
   (`kbert.analysis.data_slices`): the question word (what, who, how, where, when, which, why,
   other), the length (`--short-words` words or fewer, `--long-words` or more), negation (not,
   n't, never, no, ...), a number, "how many / how much", a capitalised word after the first.
2. The plain fine-tuned classifier's accuracy on every slice (`kbert.metrics.slice_accuracy`).
3. The worst slices found automatically on the held-out validation split (the 10% of the
   training file that is never trained on, as lab12 and lab21 hold out): among slices with at
   least `--min-slice-examples` validation questions, the `--slices` largest accuracy gaps below
   overall, averaged over the baseline's seeds (`kbert.analysis.worst_slices`). Test never
   enters the choice.
4. A slice-aware model (`kbert.models.SliceAwareClassifier`), a simpler variant of Chen et al.'s:
   the shared encoder, a base head, and per chosen slice a membership ("indicator") head trained
   on every question to predict the slicing function, and an expert head trained on the slice's
   members only; the prediction is the base logits plus each expert's residual weighted by the
   predicted membership, so nothing about slices is needed at test time. Chen et al. mix learnt
   slice representations by attention instead; the losses (task, membership, experts) are
   summed the same way.
5. The control: the same baseline with the chosen slices' training questions upweighted in the
   loss (each one's cross-entropy counts `--slice-weight` times another's: 2 by default, as in
   the slice-aware model, whose expert head adds a member's cross-entropy once more), on the
   same questions and steps. If the heads did no more than this, the two would tie.

All three are trained for the same epochs from the same seed, per seed, each at its own peak
rate chosen on validation (`kbert.train.rate_on_validation`: the first seed tries each of
`--learning-rates`, overall accuracy on the held-out validation split chooses, the other seeds
train at it; a model with 2 + 2 × slices new heads need not want the baseline's rate); the lab
reports
test accuracy overall and on each chosen slice, mean ± sd over `--seeds` seeds, and the
seed-paired differences of each model to the baseline and of the heads to the control
(`kbert.metrics.seed_comparison`: "no difference" inside the spread). MiniLM-L6 is read by the
pooling it was trained for (`kbert.checkpoints.trained_pooling`: mean); the rates tried are
full fine-tuning's, chosen on validation by `benchmarks/adaptation_grid.py` (1,000 questions,
3 epochs) and read from its record (`kbert.train.chosen_on_validation.chosen_rates`), a third
and three times it. The worst slices are found on the baseline's seeds at its chosen rate.
Sizes are
cut for a 2-core CPU: `--train-examples` questions, `--sequence-length` tokens (TREC questions
are short).

What Chen et al. lead one to expect: the slice heads raise accuracy on the slices they serve
without lowering it overall, and more than reweighting those slices does. The slices are small
on TREC_10's 500 questions, so read each slice's difference beside its spread and its size.
What the record found: docs/results.md#lab24_slicing.

    python labs/lab24_slicing.py [--record docs/results/lab24_slicing.json]
    python labs/lab24_slicing.py --seeds 1 --train-examples 500   # a quick look
"""

import argparse
import dataclasses

import kbert.quiet  # noqa: F401  (TensorFlow's start-up lines filtered)

import keras
import numpy as np

from kbert.analysis.data_slices import data_slices
from kbert.analysis.worst_slices import worst_slices
from kbert.checkpoints import load_pretrained, trained_pooling
from kbert.data import load_classification_task
from kbert.metrics.seed_comparison import format_difference, paired_difference, seed_summary
from kbert.metrics.slice_accuracy import slice_accuracy
from kbert.models import SequenceClassifier, SliceAwareClassifier
from kbert.tasks import classifier_logits, evaluate_classifier
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

MODELS = {
    "baseline": "plain fine-tuning",
    "slice_aware": "slice heads (membership + expert per slice)",
    "upweighted": "control: slices upweighted",
}


# %% The control. "Upweight the slice in the loss": each training question's cross-entropy
# weighs `weight` when it is in a chosen slice and 1 otherwise, normalised by the batch's total
# weight. The control trains on every question the other two see, for the same steps: only the
# weight of the slice questions changes. (Drawing a fixed number of rows from a pool with the
# slice rows repeated would also shift the mix, but leave out some of the other questions.)
def upweighted_loss(weight):
    """Cross-entropy on targets `(class, in_slice)`: slice rows weigh `weight`, the others 1."""

    def loss(targets, logits):
        targets = keras.ops.cast(targets, "int32")
        weights = 1.0 + (weight - 1.0) * keras.ops.cast(targets[:, 1], "float32")
        per_row = keras.losses.sparse_categorical_crossentropy(
            targets[:, 0], keras.ops.cast(logits, "float32"), from_logits=True
        )
        return keras.ops.sum(weights * per_row) / keras.ops.sum(weights)

    return loss


def weight_share(in_slice, weight):
    """The share of the training loss's weight on slice questions (their share of questions
    when `weight` is 1)."""
    upweighted = weight * in_slice.sum()
    return float(upweighted / (upweighted + (~in_slice).sum()))


def training(args, seed, learning_rate):
    return TrainingSettings(
        epochs=args.epochs,
        batch_size=args.batch_size,
        learning_rate=learning_rate,
        seed=seed,
        verbose=args.verbose,
    )


def fresh_start(args, seed):
    """MiniLM-L6 as pretrained and its preprocessor; the seed fixes the new heads."""
    keras.backend.clear_session()  # each run builds new models: free the last run's graphs
    keras.utils.set_random_seed(seed)
    encoder, tokenizer = load_pretrained(args.model, dtype=args.dtype)
    return encoder, BertPreprocessor(tokenizer, sequence_length=args.sequence_length)


def plain_run(args, train, seed, learning_rate):
    """A `SequenceClassifier` fine-tuned on `train`; returns it, its preprocessor and seconds."""
    encoder, preprocessor = fresh_start(args, seed)
    classifier = SequenceClassifier(encoder, len(train.label_names), pooling=args.pooling)
    _, seconds = fine_tune_classifier(
        classifier, preprocessor, train, settings=training(args, seed, learning_rate)
    )
    return classifier, preprocessor, seconds


def upweighted_run(args, train, in_slice, seed, learning_rate):
    """The control: a `SequenceClassifier` on `train` with the questions in `in_slice` (bool
    `(n,)`) weighing `--slice-weight` in its loss (`upweighted_loss`)."""
    encoder, preprocessor = fresh_start(args, seed)
    classifier = SequenceClassifier(encoder, len(train.label_names), pooling=args.pooling)
    # `fine_tune_classifier` compiles a model that names its loss and metrics with those; the
    # packed targets have no plain accuracy to watch (the test is scored after training).
    classifier.default_loss = lambda: upweighted_loss(args.slice_weight)
    classifier.default_metrics = lambda: []
    targets = np.stack([np.asarray(train.labels), in_slice], axis=-1).astype(np.int32)
    packed = dataclasses.replace(train, labels=targets)
    _, seconds = fine_tune_classifier(
        classifier, preprocessor, packed, settings=training(args, seed, learning_rate)
    )
    return classifier, preprocessor, seconds


# %% The technique. Each chosen slice gets a membership head and an expert head on the shared
# encoder; the targets are the class and, per slice, whether the slicing function picked the
# question. The prediction needs no slicing function: the membership heads stand in for them.
def slice_aware_run(args, train, members, seed, learning_rate):
    """A `SliceAwareClassifier` for the slices in `members` (name → bool `(n,)`) on `train`."""
    encoder, preprocessor = fresh_start(args, seed)
    model = SliceAwareClassifier(
        encoder, len(train.label_names), num_slices=len(members), pooling=args.pooling
    )
    targets = SliceAwareClassifier.targets(train.labels, members)  # (n, 1 + slices)
    packed = dataclasses.replace(train, labels=targets)
    _, seconds = fine_tune_classifier(
        model, preprocessor, packed, settings=training(args, seed, learning_rate)
    )
    return model, preprocessor, seconds


def slice_aware_predictions(model, preprocessor, examples, members):
    """The combined prediction's class ids, and how often each membership head agrees with its
    slicing function (`members`, name → bool `(n,)`), from one pass over `examples`."""
    packed = classifier_logits(model, preprocessor, examples.texts)["logits"]
    classes = model.num_classes
    indicators = packed[:, classes : classes + model.num_slices]  # (n, slices)
    agreement = {
        name: round(float(np.mean((indicators[:, k] > 0) == column)), 4)
        for k, (name, column) in enumerate(members.items())
    }
    return np.argmax(packed[:, :classes], axis=-1), agreement


def scores(predictions, examples, slices):
    """Accuracy overall and per slice, rounded, from predicted class ids."""
    report = slice_accuracy(examples.labels, predictions, slices)
    return {
        "overall": round(report["overall"], 4),
        "slices": {name: row["accuracy"] for name, row in report["slices"].items()},
    }


def summarize(runs, chosen):
    """Per model and measure (overall, each chosen slice): mean ± sd and paired differences."""
    rows = {}
    for model in MODELS:
        rows[model] = {}
        for measure in ("overall", *chosen):
            if any(run["slices"].get(measure, 0) is None for run in runs[model]):
                continue  # a chosen slice with no test question: nothing to score
            values = [
                run["overall"] if measure == "overall" else run["slices"][measure]
                for run in runs[model]
            ]
            row = seed_summary(values)
            if model != "baseline":
                baseline = [
                    r["overall"] if measure == "overall" else r["slices"][measure]
                    for r in runs["baseline"]
                ]
                row["vs_baseline"] = paired_difference(values, baseline)
            rows[model][measure] = row
    for measure in rows["slice_aware"]:  # what the heads add beyond reweighting the slices
        rows["slice_aware"][measure]["vs_upweighted"] = paired_difference(
            rows["slice_aware"][measure]["runs"], rows["upweighted"][measure]["runs"]
        )
    return rows


def slice_table(slices, splits):
    """Each slice's size per split, and one training question from it (to read the rule)."""
    table = {}
    for name in slices["train"]:
        rows = np.flatnonzero(slices["train"][name])
        table[name] = {split: int(slices[split][name].sum()) for split in splits}
        table[name]["example"] = splits["train"].texts[rows[0]] if len(rows) else None
    return table


# %% Settings (`--help` lists them).
parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--model", default="minilm_l6", help="minilm_l6 or a checkpoint directory")
parser.add_argument(
    "--pooling", default="trained", help="trained (kbert.checkpoints.trained_pooling), cls, mean"
)
parser.add_argument(
    "--train-examples", type=int, default=2000, help="a seeded sample of TREC-6 train (0: all)"
)
parser.add_argument(
    "--eval-examples", type=int, default=0, help="first N of validation and test (0: all)"
)
parser.add_argument("--slices", type=int, default=2, help="how many worst slices to serve")
parser.add_argument(
    "--min-slice-examples",
    type=int,
    default=20,
    help="validation questions a slice needs to be ranked",
)
parser.add_argument("--short-words", type=int, default=6, help="length:short is at most this")
parser.add_argument("--long-words", type=int, default=15, help="length:long is at least this")
parser.add_argument(
    "--slice-weight",
    type=float,
    default=2.0,
    help="the control: a slice question's weight in the loss (the others weigh 1); 2 matches "
    "the slice-aware model, whose expert loss counts a member's cross-entropy once more",
)
parser.add_argument("--sequence-length", type=int, default=32, help="tokens read per question")
parser.add_argument("--batch-size", type=int, default=16)
parser.add_argument("--epochs", type=int, default=1)
add_lab_run_arguments(
    parser,
    "runs/lab24_slicing",
    "full",
    seeds_help="runs per model",
    seed_help="the data sample's seed",
)
add_learning_rates_argument(parser, "model")
args = parser.parse_args()
for flag in ("seeds", "epochs", "batch_size", "sequence_length", "slices", "min_slice_examples"):
    if getattr(args, flag) < 1:
        parser.error(f"--{flag.replace('_', '-')} must be >= 1; received {getattr(args, flag)}")
for flag in ("train_examples", "eval_examples", "seed"):
    if getattr(args, flag) < 0:
        parser.error(f"--{flag.replace('_', '-')} must be >= 0; received {getattr(args, flag)}")
if not args.slice_weight > 1:
    parser.error(f"--slice-weight must be > 1 (1 is the baseline); received {args.slice_weight}")
if not 1 <= args.short_words < args.long_words:
    parser.error(
        "--short-words must be >= 1 and below --long-words; received "
        f"{args.short_words} and {args.long_words}"
    )
if not args.learning_rate > 0:
    parser.error(f"--learning-rate must be > 0; received {args.learning_rate}")
resolve_learning_rates(parser, args)
args.dtype = resolve_dtype(args.dtype)  # "auto": what this machine computes fastest
if args.pooling == "trained":  # how the checkpoint was trained to be read (MiniLM-L6: mean)
    args.pooling = trained_pooling(args.model)

# %% TREC-6: train (a seeded sample), validation (the held-out 10%), test (TREC_10), and every
# question's slices. Each slice's size and one of its questions show what the rule picks.
splits = {
    split: load_classification_task(
        "trec",
        split,
        data_dir=args.data_dir,
        seed=args.seed,
        max_examples=(args.train_examples if split == "train" else args.eval_examples) or None,
    )
    for split in ("train", "validation", "test")
}
slices = {
    split: data_slices(examples.texts, args.short_words, args.long_words)
    for split, examples in splits.items()
}
table = slice_table(slices, splits)
print(f"{'slice':16s} {'train':>6s} {'valid':>6s} {'test':>6s}  example")
for name, row in table.items():
    print(f"{name:16s} {row['train']:6d} {row['validation']:6d} {row['test']:6d}  {row['example']}")

# %% The baseline, every seed: plain fine-tuning, scored on every slice of validation and test.
seeds = list(range(args.seed, args.seed + args.seeds))
choices = {}


def choose_and_run(model, fit_and_predict):
    """`model` at its rate chosen on validation, every seed: `fit_and_predict(rate, seed)`
    gives `(validation predictions, test predictions, seconds, extra)`; returns the runs in seed
    order (each with its test scores under "test" and `extra`), the choice kept in `choices`."""

    def train(rate, seed):
        val_predictions, test_predictions, seconds, extra = fit_and_predict(rate, seed)
        validation = slice_accuracy(
            splits["validation"].labels, val_predictions, slices["validation"]
        )
        test = scores(test_predictions, splits["test"], slices["test"])
        print(
            f"seed {seed} {model}, lr {rate:g}: validation {validation['overall']:.4f}, test "
            f"{test['overall']:.4f} ({seconds:.0f} s)",
            flush=True,
        )
        return {
            "learning_rate": rate,
            "validation_accuracy": round(validation["overall"], 4),
            "test_accuracy": test["overall"],
            "validation_report": validation,
            "test": test,
            "train_s": round(seconds, 1),
            **extra,
        }

    kept, choices[model] = rate_then_seeds(args.learning_rates, seeds, train, "validation_accuracy")
    print(f"{model}: peak rate {choices[model]['chosen']:g} chosen on validation", flush=True)
    return kept


def plain_fit(rate, seed):
    classifier, preprocessor, seconds = plain_run(args, splits["train"], seed, rate)
    predictions = [
        evaluate_classifier(classifier, preprocessor, splits[split])["predictions"]
        for split in ("validation", "test")
    ]
    return *predictions, seconds, {}


baseline = choose_and_run("baseline", plain_fit)
runs = {"baseline": [run["test"] for run in baseline]}
timings = {"baseline": [run["train_s"] for run in baseline]}
validation_reports = [run["validation_report"] for run in baseline]

# %% Find the worst slices on validation: each slice's gap to overall, averaged over the
# baseline's seeds; slices with too few validation questions are not ranked.
averaged = {
    "overall": float(np.mean([report["overall"] for report in validation_reports])),
    "slices": {},
}
for name in slices["validation"]:
    accuracies = [report["slices"][name]["accuracy"] for report in validation_reports]
    examples = validation_reports[0]["slices"][name]["examples"]
    mean = None if examples == 0 else float(np.mean(accuracies))
    averaged["slices"][name] = {
        "examples": examples,
        "accuracy": mean,
        "gap": None if mean is None else mean - averaged["overall"],
    }
chosen = worst_slices(averaged, min_examples=args.min_slice_examples, count=args.slices)
print(f"\n{'slice':16s} {'valid n':>7s} {'valid acc':>9s} {'gap':>8s}  (baseline, validation)")
for name, row in sorted(
    averaged["slices"].items(), key=lambda item: (item[1]["gap"] is None, item[1]["gap"] or 0)
):
    if row["accuracy"] is not None:
        mark = "  ← chosen" if name in chosen else ""
        print(f"{name:16s} {row['examples']:7d} {row['accuracy']:9.4f} {row['gap']:+8.4f}{mark}")
if not chosen:
    parser.exit(
        0,
        "No slice with at least --min-slice-examples validation questions is below overall "
        "accuracy: nothing to serve. Lower --min-slice-examples to rank smaller slices.\n",
    )

# %% The slice-aware model and the upweighting control, every seed, on the chosen slices.
members = {name: slices["train"][name] for name in chosen}
in_any = np.any(np.stack(list(members.values())), axis=0)
test_members = {name: slices["test"][name] for name in chosen}
validation_members = {name: slices["validation"][name] for name in chosen}


def slice_aware_fit(rate, seed):
    model, preprocessor, seconds = slice_aware_run(args, splits["train"], members, seed, rate)
    validation, _ = slice_aware_predictions(
        model, preprocessor, splits["validation"], validation_members
    )
    test, agreement = slice_aware_predictions(model, preprocessor, splits["test"], test_members)
    return validation, test, seconds, {"membership": agreement}


def upweighted_fit(rate, seed):
    classifier, preprocessor, seconds = upweighted_run(args, splits["train"], in_any, seed, rate)
    predictions = [
        evaluate_classifier(classifier, preprocessor, splits[split])["predictions"]
        for split in ("validation", "test")
    ]
    return *predictions, seconds, {}


for model, fit in (("slice_aware", slice_aware_fit), ("upweighted", upweighted_fit)):
    kept = choose_and_run(model, fit)
    runs[model] = [run["test"] for run in kept]
    timings[model] = [run["train_s"] for run in kept]
    if model == "slice_aware":
        membership = [run["membership"] for run in kept]

# %% Results table: test accuracy overall and on each chosen slice, mean ± sd over seeds;
# differences in points, seed-paired.
summary = summarize(runs, chosen)
print(
    f"\n{args.model} ({args.pooling} pooling), rates tried {args.learning_rates} (chosen: "
    + ", ".join(f"{model} {choice['chosen']:g}" for model, choice in choices.items())
    + f"), batch {args.batch_size}, {args.epochs} epoch(s), {len(splits['train'])} training "
    f"questions, {args.seeds} seed(s)"
)
print(f"{'model':46s} {'measure':16s} {'test n':>6s} {'mean ± sd':>17s}  vs baseline  vs control")
for model, label in MODELS.items():
    for measure, row in summary[model].items():
        size = len(splits["test"]) if measure == "overall" else int(slices["test"][measure].sum())
        spread = "" if row["sd"] is None else f" ± {row['sd']:.4f}"
        print(
            f"{label:46s} {measure:16s} {size:6d} {row['mean']:.4f}{spread:9s}  "
            f"{format_difference(row.get('vs_baseline'))}  "
            f"{format_difference(row.get('vs_upweighted'))}"
        )
print(
    "membership heads agree with their slicing functions on test: "
    + ", ".join(
        f"{name} {np.mean([seed_run[name] for seed_run in membership]):.4f}" for name in chosen
    )
)
report = {
    "model": args.model,
    "slices": table,
    "validation": averaged,
    "chosen": chosen,
    "test_examples": len(splits["test"]),
    "test_slice_examples": {name: int(slices["test"][name].sum()) for name in slices["test"]},
    "baseline_test_slices": {
        name: None
        if any(run["slices"][name] is None for run in runs["baseline"])
        else round(float(np.mean([run["slices"][name] for run in runs["baseline"]])), 4)
        for name in slices["test"]
    },
    "summary": summary,
    "membership_accuracy": {
        name: round(float(np.mean([seed_run[name] for seed_run in membership])), 4)
        for name in chosen
    },
    # The chosen slices' share of the training loss's weight: in train (their share of the
    # questions), and in the control's loss.
    "slice_share": {
        "train": round(weight_share(in_any, 1.0), 4),
        "upweighted": round(weight_share(in_any, args.slice_weight), 4),
    },
    "train_seconds": timings,
    # Each model's rate, chosen on overall validation accuracy at the first seed.
    "rate_choices": {
        model: {
            **choice,
            "tried": [
                {key: row[key] for key in ("learning_rate", "validation_accuracy", "test_accuracy")}
                for row in choice["tried"]
            ],
        }
        for model, choice in choices.items()
    },
    "settings": {
        key: getattr(args, key)
        for key in (
            "pooling",
            "learning_rates",
            "batch_size",
            "sequence_length",
            "epochs",
            "train_examples",
            "slices",
            "min_slice_examples",
            "short_words",
            "long_words",
            "slice_weight",
            "seeds",
            "dtype",
        )
    },
}
finish_lab(args, report)
