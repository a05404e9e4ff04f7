"""Lab 25: semi-supervised consistency training (UDA) on TREC-6 with few labels.

Reproduces §4.3.B D of the NAACL 2019 tutorial "Transfer Learning in NLP" (semi-supervised
learning: consistency training on unlabelled data; Clark et al. 2018, cross-view training; Xie
et al. 2019, "Unsupervised Data Augmentation for Consistency Training", UDA). With
`--labels` labelled TREC-6 questions (100 and 300), MiniLM-L6 is fine-tuned

- on the labelled questions alone (supervised only), against
- the same, plus UDA's consistency loss on the rest of TREC-6's training file with its labels
  dropped: the model's prediction on a question (sharpened, no gradient) is the target for its
  prediction on a perturbed copy (`kbert.models.consistency_trainer.ConsistencyTrainer`).

UDA's recipe, with its text settings (google-research/uda, the run scripts of its text
experiments; the values its re-implementations carry as defaults) (not-measured): KL(p(y|x) ‖
p(y|x̂)) with the target sharpened at softmax temperature τ = 0.85, confidence masking at
β = 0.45 (only questions whose top probability exceeds it count), weight λ = 1 (not-measured).
UDA set β for two-class IMDb, where a top probability is never below one half and β masks
nothing; over TREC-6's six classes it does mask, and each run records the share it kept
(`confident_share`). The perturbations act on wordpieces (`kbert.text.token_perturbation`):
masking (`[MASK]` for a share `--mask-rate`) and replacement by a whole-word wordpiece drawn
*uniformly* from the vocabulary (`--replace-rate`; UDA draws by TF-IDF, which keeps a
question's keywords more often, and back-translates). The rates are this lab's choice (BERT's
masking share), not UDA's. UDA feeds several unlabelled examples per labelled one; on 2 cores
this lab feeds `--unlabelled-ratio` 3 per labelled one. Training-signal annealing (TSA) is
left out: it guards against overfitting the labelled set over UDA's many thousands of steps; a
few dozen steps here do not get there, and one ingredient fewer keeps the comparison about
consistency.

Both arms see the same labelled batches in the same order, from the same head, for the same
steps; "few labels get more epochs" (`--min-steps`) is lab07's. Each arm has its own peak rate,
chosen on validation at each label count (`kbert.train.rate_on_validation`): the first seed
trains at each of `--learning-rates` — full fine-tuning's rate chosen on validation for
MiniLM-L6 by `benchmarks/adaptation_grid.py` (1,000 questions, 3 epochs; read from its record)
and a third and three times it, since an arm with an extra loss, or 100 labels, need not suit
that rate — the best on validation is kept, and the other seeds train at it. The epoch kept is
the one with the best accuracy on the 10% of the training file held out (lab12), never on
test; the held-out questions are neither labelled nor unlabelled data. Each
label count reports test accuracy, mean ± sd over `--seeds` seeds, and the seed-paired
difference of consistency training to supervised only (`kbert.metrics.seed_comparison`).
`--perturbations mask,replace,both` adds a row per perturbation; the default runs `both`
alone, to keep the lab near a quarter of an hour on 2 cores.

What UDA leads one to expect: unlabelled data helps most where labels are fewest (100 more
than 300). What the record found: docs/results.md#lab25_consistency.

    python labs/lab25_consistency.py [--record docs/results/lab25_consistency.json]
    python labs/lab25_consistency.py --labels 100 --seeds 1   # a quick look
"""

import argparse
import math
import time

import kbert.quiet  # noqa: F401  (TensorFlow's start-up lines filtered)

import keras
import numpy as np
import tensorflow as tf

from kbert.arguments import comma_separated
from kbert.checkpoints import load_pretrained, trained_pooling
from kbert.data import load_classification_task
from kbert.data.classification_dataset import classification_dataset
from kbert.metrics.seed_comparison import format_difference, summarize_arms
from kbert.models import SequenceClassifier
from kbert.models.consistency_trainer import ConsistencyTrainer
from kbert.tasks import evaluate_classifier
from kbert.text import BertPreprocessor
from kbert.text.token_perturbation import TokenPerturbation
from kbert.train import TrainingSettings, fine_tuning_optimizer
from kbert.train.fine_tuning import unused_pooler_frozen
from kbert.train.lab_run_arguments import (
    add_lab_run_arguments,
    add_learning_rates_argument,
    finish_lab,
    resolve_learning_rates,
)
from kbert.train.precision import resolve_dtype
from kbert.train.rate_on_validation import rate_then_seeds

# A perturbation's name → which of the two rates it uses.
PERTURBATIONS = {
    "mask": ("mask_rate",),
    "replace": ("replace_rate",),
    "both": ("mask_rate", "replace_rate"),
}
KEYS = ("token_ids", "segment_ids", "padding_mask")


def packed(preprocessor, texts):
    """Every text packed to `--sequence-length`: a dict of NumPy arrays (one shape, one trace)."""
    return {key: value.numpy() for key, value in preprocessor(list(texts)).items()}


def perturbations(tokenizer, args):
    """Each arm's `TokenPerturbation`, by name: its rates from the flags, the rest shared."""
    # Whole English words only (no "##" pieces, no [unused…] slots, no other scripts).
    words = [
        i
        for i, token in enumerate(tokenizer.get_vocabulary())
        if token.isascii() and token.isalpha()
    ]
    return {
        name: TokenPerturbation(
            tokenizer.mask_token_id,
            words,
            protected_ids=tokenizer.special_token_ids,
            mask_rate=args.mask_rate if "mask_rate" in PERTURBATIONS[name] else 0.0,
            replace_rate=args.replace_rate if "replace_rate" in PERTURBATIONS[name] else 0.0,
        )
        for name in args.perturbations
    }


def stream(count, needed, rng):
    """`needed` row numbers of `count` rows: one shuffled pass after another."""
    passes = math.ceil(needed / count)
    return np.concatenate([rng.permutation(count) for _ in range(passes)])[:needed]


# %% The perturbations. Each unlabelled question gets a copy with some wordpieces masked and
# some replaced by random whole words; special tokens and padding stay, so the copy lines up
# with its original. This cell shows one question and its copies once.
def show_perturbations(tokenizer, inputs, perturbers, seed):
    """Prints one unlabelled question and its perturbed copy under each perturbation."""

    def text(ids):
        return tokenizer.detokenize(ids).numpy().decode()

    first = {key: value[:1] for key, value in inputs.items()}
    shown = {"original": text(first["token_ids"][0])}
    print("original:", shown["original"])
    for name, perturb in perturbers.items():
        shown[name] = text(perturb(first["token_ids"], first["padding_mask"], seed)[0])
        print(f"{name:>8}: {shown[name]}")
    return shown


def training_batches(split, perturb, steps, args, seed):
    """Per-step batches: `(x, y)`, x holding the labelled batch and, with a perturbation
    (`perturb`, None for supervised only), the unlabelled batch and its perturbed copy. The
    labelled stream depends only on `seed`, so both arms see the same labelled batches in the
    same order. `split` holds packed "labelled" and "unlabelled" inputs and the "labels"."""
    labelled, labels, unlabelled = split["labelled"], split["labels"], split["unlabelled"]
    labelled_rows = stream(len(labels), steps * args.batch_size, np.random.default_rng([seed, 0]))
    shape = (steps, args.batch_size)
    x = {"labelled": {key: labelled[key][labelled_rows].reshape(*shape, -1) for key in KEYS}}
    if perturb is not None:
        rng = np.random.default_rng([seed, 1])
        width = args.batch_size * args.unlabelled_ratio
        rows = stream(len(unlabelled["token_ids"]), steps * width, rng)
        original = {key: unlabelled[key][rows] for key in KEYS}
        copy = {
            **original,
            "token_ids": perturb(original["token_ids"], original["padding_mask"], rng),
        }
        x["unlabelled"] = {key: value.reshape(steps, width, -1) for key, value in original.items()}
        x["perturbed"] = {key: value.reshape(steps, width, -1) for key, value in copy.items()}
    return tf.data.Dataset.from_tensor_slices((x, labels[labelled_rows].reshape(shape)))


# %% The technique: one classifier, wrapped by `ConsistencyTrainer`, whose step adds
# λ · masked KL(sharpened p(y|x) ‖ p(y|x̂)) on the unlabelled batch to the labelled batch's
# cross-entropy. The supervised arm goes through the same trainer with labelled batches only.
def train_run(args, data, split, run):
    """One arm at one label count, seed and peak rate (`run`: its "perturb", None for
    supervised only, "seed" and "learning_rate"); returns its test accuracy and how it trained
    (the kept epoch's validation accuracy chooses the rate)."""
    perturb, seed, learning_rate = run["perturb"], run["seed"], run["learning_rate"]
    keras.backend.clear_session()
    keras.utils.set_random_seed(seed)  # the same new head for both arms of this seed
    encoder, tokenizer = load_pretrained(args.model, dtype=args.dtype)
    preprocessor = BertPreprocessor(tokenizer, sequence_length=args.sequence_length)
    classifier = SequenceClassifier(encoder, len(data["test"].label_names), pooling=args.pooling)
    trainer = ConsistencyTrainer(
        classifier,
        consistency_weight=args.consistency_weight,
        confidence_threshold=args.confidence_threshold,
        temperature=args.temperature,
    )
    steps_per_epoch = math.ceil(len(split["labels"]) / args.batch_size)
    # Few labels get more epochs (lab07): at least `--min-steps` steps, at least `--epochs`.
    epochs = max(args.epochs, math.ceil(args.min_steps / steps_per_epoch))
    settings = TrainingSettings(
        epochs=epochs,
        batch_size=args.batch_size,
        learning_rate=learning_rate,
        seed=seed,
        # The epoch kept is the one best on the held-out questions (lab12), never on test.
        callbacks=(
            keras.callbacks.EarlyStopping(
                monitor="val_accuracy", mode="max", patience=epochs, restore_best_weights=True
            ),
        ),
        verbose=args.verbose,
    )
    batches = training_batches(split, perturb, steps_per_epoch * epochs, args, seed)
    validation = data["validation"]
    with unused_pooler_frozen(classifier):  # mean pooling does not read the pooler
        trainer.compile(
            optimizer=fine_tuning_optimizer(
                steps_per_epoch * epochs,
                settings.learning_rate,
                settings.warmup_fraction,
                settings.weight_decay,
            ),
            metrics=["accuracy"],
            jit_compile=settings.jit_compile,
        )
        start = time.perf_counter()
        history = trainer.fit(
            batches,
            steps_per_epoch=steps_per_epoch,  # one iterator across epochs: new batches each
            epochs=epochs,
            shuffle=False,  # each step's batch was drawn by the seed already
            validation_data=classification_dataset(
                preprocessor, validation.texts, None, validation.labels, 64
            ),
            callbacks=list(settings.callbacks),
            verbose=settings.verbose,
        )
    seconds = time.perf_counter() - start
    logs = history.history
    accuracy = evaluate_classifier(classifier, preprocessor, data["test"])["accuracy"]
    best = int(np.argmax(logs["val_accuracy"]))
    return {
        "learning_rate": learning_rate,
        "test_accuracy": round(accuracy, 4),
        "epochs": epochs,
        "steps": steps_per_epoch * epochs,
        "best_epoch": best + 1,
        "val_accuracy": round(logs["val_accuracy"][best], 4),
        "consistency_loss": round(logs["consistency_loss"][best], 4),
        "confident_share": round(logs["confident_share"][best], 4),
        "train_s": round(seconds, 1),
    }


def summarize(accuracies):
    """Each arm's mean ± sd, and its seed-paired difference to supervised only."""
    return summarize_arms(accuracies, "supervised")


def labelled_split(pool, preprocessor, size, seed, args):
    """`size` labelled questions drawn by `seed` and the rest of `pool` without labels, packed."""
    rows = np.random.default_rng(1000 * size + seed).permutation(len(pool))
    labelled = pool.subset(np.sort(rows[:size]))  # the same subset for both arms
    # The rest of the training file, its labels dropped (`--unlabelled-examples` of it).
    rest = rows[size:][: args.unlabelled_examples or None]
    return {
        "labelled": packed(preprocessor, labelled.texts),
        "labels": np.asarray(labelled.labels, "int32"),
        "unlabelled": packed(preprocessor, [pool.texts[row] for row in rest]),
    }


def run_lab(args):
    """Every label count, seed and arm; returns the record."""
    pool = load_classification_task("trec", "train", data_dir=args.data_dir, seed=args.seed)
    data = {
        "validation": load_classification_task(
            "trec", "validation", data_dir=args.data_dir, seed=args.seed
        ).sample(args.validation_examples, args.seed),
        "test": load_classification_task("trec", "test", data_dir=args.data_dir).sample(
            args.eval_examples, args.seed
        ),
    }
    _, tokenizer = load_pretrained(args.model, dtype=args.dtype)
    preprocessor = BertPreprocessor(tokenizer, sequence_length=args.sequence_length)
    perturbers = perturbations(tokenizer, args)
    arms = ["supervised", *args.perturbations]
    seeds = list(range(args.seed, args.seed + args.seeds))
    accuracies = {size: {} for size in args.labels}
    choices = {str(size): {} for size in args.labels}
    runs, splits = [], {}

    def split_for(size, seed):  # the same labelled subset for both arms of a seed
        if (size, seed) not in splits:
            splits[size, seed] = labelled_split(pool, preprocessor, size, seed, args)
        return splits[size, seed]

    shown = show_perturbations(
        tokenizer, split_for(args.labels[0], seeds[0])["unlabelled"], perturbers, args.seed
    )
    for size in args.labels:
        for arm in arms:

            def train(rate, seed, size=size, arm=arm):
                at = {"perturb": perturbers.get(arm), "seed": seed, "learning_rate": rate}
                run = train_run(args, data, split_for(size, seed), at)
                print(
                    f"{size} labels, seed {seed}, {arm}, lr {rate:g}: test "
                    f"{run['test_accuracy']:.4f}, validation {run['val_accuracy']:.4f} (epoch "
                    f"{run['best_epoch']} of {run['epochs']} kept on validation, confident "
                    f"share {run['confident_share']:.2f}, {run['train_s']:.0f} s)",
                    flush=True,
                )
                return run

            arm_runs, choice = rate_then_seeds(args.learning_rates, seeds, train, "val_accuracy")
            choices[str(size)][arm] = choice
            accuracies[size][arm] = [run["test_accuracy"] for run in arm_runs]
            runs += [
                {"labels": size, "seed": seed, "arm": arm, **run}
                for seed, run in zip(seeds, arm_runs, strict=True)
            ]
            print(f"{size} labels, {arm}: peak rate {choice['chosen']:g} chosen on validation")
    majority = np.bincount(data["test"].labels).max() / len(data["test"])
    return {
        "model": args.model,
        "sizes": {str(size): summarize(accuracies[size]) for size in args.labels},
        "rate_choices": choices,
        "unlabelled_examples": {
            str(size): min(len(pool) - size, args.unlabelled_examples or len(pool))
            for size in args.labels
        },
        "validation_examples": len(data["validation"]),
        "test_examples": len(data["test"]),
        "majority_accuracy": round(float(majority), 4),
        "perturbed_example": shown,
        "runs": runs,
    }


SETTINGS = (
    "pooling", "learning_rates", "batch_size", "unlabelled_ratio", "sequence_length", "epochs",
    "min_steps", "mask_rate", "replace_rate", "consistency_weight", "confidence_threshold",
    "temperature", "seeds", "dtype",
)  # fmt: skip


# Each numeric flag: what it accepts, said the way its error says it.
CHECKS = (
    *(
        (flag, lambda v: v >= 1, ">= 1")
        for flag in ("seeds", "epochs", "batch_size", "sequence_length", "unlabelled_ratio")
    ),
    *(
        (flag, lambda v: v >= 0, ">= 0")
        for flag in ("unlabelled_examples", "validation_examples", "eval_examples", "min_steps")
    ),
    ("seed", lambda v: v >= 0, ">= 0"),
    ("mask_rate", lambda v: 0 <= v <= 1, "in [0, 1]"),
    ("replace_rate", lambda v: 0 <= v <= 1, "in [0, 1]"),
    ("learning_rate", lambda v: v > 0, "> 0"),
    ("temperature", lambda v: v > 0, "> 0"),
    ("consistency_weight", lambda v: v >= 0, ">= 0"),
    ("confidence_threshold", lambda v: -1 <= v < 1, "in [-1, 1) (negative: no masking)"),
)


def parse_arguments(argv=None):
    """The lab's settings (`--help` lists them), checked: a bad one exits naming it."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="minilm_l6", help="minilm_l6 or a checkpoint directory")
    parser.add_argument(
        "--pooling",
        default="trained",
        help="trained (kbert.checkpoints.trained_pooling), cls, mean",
    )
    parser.add_argument(
        "--labels",
        type=comma_separated(int, minimum=1),
        default=[100, 300],
        help="labelled TREC-6 questions per run, comma-separated counts",
    )
    parser.add_argument(
        "--perturbations",
        default="both",
        help="comma-separated arms beside supervised only: mask, replace, both",
    )
    parser.add_argument(
        "--unlabelled-examples",
        type=int,
        default=0,
        help="unlabelled questions drawn from the rest of the training file (0: all of it)",
    )
    parser.add_argument("--unlabelled-ratio", type=int, default=3, help="unlabelled per labelled")
    parser.add_argument("--mask-rate", type=float, default=0.15, help="share of wordpieces masked")
    parser.add_argument(
        "--replace-rate", type=float, default=0.1, help="share of wordpieces replaced"
    )
    parser.add_argument("--consistency-weight", type=float, default=1.0, help="UDA's λ")
    parser.add_argument("--confidence-threshold", type=float, default=0.45, help="UDA's β")
    parser.add_argument("--temperature", type=float, default=0.85, help="UDA's τ (sharpening)")
    parser.add_argument(
        "--validation-examples", type=int, default=0, help="held-out questions (0: all)"
    )
    parser.add_argument("--eval-examples", type=int, default=0, help="test questions (0: all)")
    parser.add_argument("--sequence-length", type=int, default=32, help="tokens per question")
    parser.add_argument("--batch-size", type=int, default=16, help="labelled questions a step")
    parser.add_argument("--epochs", type=int, default=3, help="least epochs of each run")
    parser.add_argument("--min-steps", type=int, default=40, help="least steps of each run")
    add_lab_run_arguments(
        parser,
        "runs/lab25_consistency",
        "full",
        seeds_help="runs per label count and arm",
        seed_help="the data splits' seed",
    )
    add_learning_rates_argument(parser, "arm")
    args = parser.parse_args(argv)
    args.perturbations = [name.strip() for name in args.perturbations.split(",") if name.strip()]
    if not args.perturbations or set(args.perturbations) - set(PERTURBATIONS):
        parser.error(
            f"--perturbations must list mask, replace and/or both; received {args.perturbations}"
        )
    for flag, accepts, expected in CHECKS:
        if not accepts(getattr(args, flag)):
            parser.error(
                f"--{flag.replace('_', '-')} must be {expected}; received {getattr(args, flag)}"
            )
    if args.mask_rate + args.replace_rate > 1:
        parser.error("--mask-rate + --replace-rate must be <= 1 (each wordpiece changes once)")
    resolve_learning_rates(parser, args)
    args.dtype = resolve_dtype(args.dtype)  # "auto": what this machine computes fastest
    if args.pooling == "trained":  # how the checkpoint was trained to be read (MiniLM-L6: mean)
        args.pooling = trained_pooling(args.model)
    return args


def main(argv=None):
    args = parse_arguments(argv)
    record = run_lab(args)
    record["settings"] = {key: getattr(args, key) for key in SETTINGS}

    # %% Results table: test accuracy, mean ± sd over seeds; differences in points, seed-paired.
    print(
        f"\n{args.model} ({args.pooling} pooling), peak rates tried {args.learning_rates}, batch "
        f"{args.batch_size} labelled + {args.batch_size * args.unlabelled_ratio} unlabelled, "
        f"{args.sequence_length} tokens, {args.seeds} seed(s)"
    )
    print("labels  arm                        rate     test mean ± sd   vs supervised only")
    for size, rows in record["sizes"].items():
        for arm, row in rows.items():
            label = "supervised only" if arm == "supervised" else f"+ consistency ({arm})"
            spread = "" if row["sd"] is None else f" ± {row['sd']:.4f}"
            rate = record["rate_choices"][size][arm]["chosen"]
            print(
                f"{size:>6}  {label:25s}  {rate:<7g}  {row['mean']:.4f}{spread:9s}  "
                f"{format_difference(row.get('vs_supervised'))}"
            )
    print(
        f"majority class {record['majority_accuracy']:.4f} on {record['test_examples']} test "
        f"questions; epochs kept on {record['validation_examples']} held-out questions"
    )
    finish_lab(args, record)


if __name__ == "__main__":
    main()
