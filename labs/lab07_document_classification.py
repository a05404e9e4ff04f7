"""Lab 7: document classification, ULMFiT style: fine-tune the LM on the task's texts first.

Reproduces §5.A of the NAACL 2019 tutorial "Transfer Learning in NLP" (Howard & Ruder 2018,
ULMFiT) on IMDb movie reviews (SST-2 when IMDb is not in the data directory):

Stage 1, target-task LM fine-tuning: the pretrained model keeps training with its own objective
    (masked LM for a BERT, causal LM for lab01's causal model) on the task's training texts,
    labels unused, so it adapts to the domain's vocabulary and style.
Stage 2, classifier fine-tuning: concat pooling (last + max + mean of the top layer) feeds two
    BatchNorm → Dropout → Dense blocks (ReLU, hidden 50, then the classes), trained on one of
    two schedules (`--schedules`, both by default):
    "ulmfit", the paper's (§3.2–3.3): gradual unfreezing, the head alone in the first epoch and
        one more layer group from the top each epoch after, then all of them; discriminative
        rates, each group's peak the one above's ÷ 2.6; slanted triangular rates (cut_frac 0.1,
        ratio 32) over the whole run (`kbert.train.unfreezing_recipes.discriminative_optimizer`);
    "head_then_all", BERT practice: the head alone with the encoder frozen, then the whole model
        at one rate (warmup, then linear decay).

Each schedule also runs from the encoder without stage 1, so the table shows what target-task
LM fine-tuning adds under the paper's own schedule first, then under the schedule validation
prefers (the mean validation accuracy of both starts at each labelled size; never the test).

ULMFiT reports stage 1's largest gains with few labels (100 labelled IMDb reviews with LM
fine-tuning on unlabelled ones matched training from scratch on 100x more), so the lab runs in
that regime: stage 1 once on `--lm-examples` unlabelled training reviews, then stage 2 from the
LM-fine-tuned and from the plain encoder on each schedule, at each of `--train-examples`
labelled sizes (100 and 500) with `--seeds` seeds (3), each run at least `--min-steps`
whole-model steps (few labels get more epochs) and scored once at the end on validation and
test. Each row counts its runs at the
majority class (all one class, or within a point of it: `kbert.metrics.majority_class`).

What ULMFiT leads one to expect: stage 1's held-out LM loss falls on the target domain, and the
LM-fine-tuned start beats the plain one at 100 labels by more than the seed spread, less at 500.
What the records found: docs/results.md#lab07_document_classification (and the variants beside
it). A pretrained model may already model movie-review English well, so the gain may be small:
report what you see.

The start is lab01's causal model (`saved_models/lab01_causal`, written by
`python labs/lab01_pretraining.py`): an LM pretrained *with* its tied head, the setting ULMFiT's
stage 1 continues, read at its pretraining length (128 tokens), fine-tuned at 3e-4 for every
size and variant (a fixed setting: `benchmarks.adaptation_grid` chooses lab01's rate on TREC-6
questions, not on reviews, so its choice is not read here).
`--model minilm_l6` starts from MiniLM-L6 instead, at a BERT rate and 256 tokens; its stage 1
cannot help the way ULMFiT's does: the checkpoint ships no pretraining (MLM) head, so stage 1
trains a new, random head (its held-out loss before stage 1 sits near the uniform level,
ln 30,522 ≈ 10.3 (not-measured)) and the reviews go mostly into learning that head, not into
adapting the encoder to the domain. Defaults are sized for a 2-core CPU (subsets, bfloat16);
raise `--lm-examples`, `--eval-examples` and `--sequence-length` on a GPU.

    python labs/lab07_document_classification.py [--record docs/results/lab07_document_classification.json]
    python labs/lab07_document_classification.py --lm-examples 12000
    python labs/lab07_document_classification.py --model minilm_l6
    python labs/lab07_document_classification.py --task sst2 --sequence-length 64 --train-examples 2000 --seeds 1

`--sequence-length`, `--learning-rate` and `--lm-learning-rate` default to the start's own
(lab01's causal model: 128 tokens, 3e-4; a BERT such as MiniLM-L6: 256 tokens, 5e-5).
"""

import argparse
import json
import math
from pathlib import Path

import kbert.quiet  # noqa: F401  (TensorFlow's start-up lines filtered)

import keras
import numpy as np

from kbert.arguments import comma_separated
from kbert.checkpoints import load_pretrained
from kbert.data import (
    causal_lm_blocks,
    data_dir,
    full_sentences_blocks,
    load_classification_task,
)
from kbert.files import atomic_write_text
from kbert.metrics import at_majority, format_difference, majority_accuracy, paired_difference
from kbert.models import CausalLanguageModel, MaskedLanguageModel, SequenceClassifier
from kbert.run_records import add_record_argument, record_if_requested
from kbert.tasks import evaluate_classifier
from kbert.text import BertPreprocessor, MaskedLMMasker
from kbert.train import (
    GradualUnfreezing,
    TrainingSettings,
    fine_tune_classifier,
    fine_tuning_optimizer,
)
from kbert.train.precision import DTYPES, resolve_dtype
from kbert.train.unfreezing_recipes import (
    ULMFIT_FACTOR,
    discriminative_optimizer,
    schedule_groups,
    ulmfit_epochs,
)


def choose_task(requested, data_dir_arg):
    if requested != "auto":
        return requested
    root = data_dir(data_dir_arg)
    return "imdb" if root is not None and (root / "imdb" / "train.jsonl").is_file() else "sst2"


# The start's own length and rates (see the docstring): lab01's causal model was pretrained at
# 128 tokens and is fine-tuned at 3e-4, a fixed setting; a BERT at its usual 5e-5.
START_DEFAULTS = {
    "causal": {"sequence_length": 128, "learning_rate": 3e-4, "lm_learning_rate": 3e-4},
    "bidirectional": {"sequence_length": 256, "learning_rate": 5e-5, "lm_learning_rate": 5e-5},
}
LAB01_MODEL = "saved_models/lab01_causal"


def check_start(parser, model):
    """Refuses a start that is not there, saying what makes lab01's model or what else to pass."""
    if model == "minilm_l6" or Path(model).exists():
        return
    parser.error(
        f"--model {model}: no such checkpoint directory. lab01's causal model "
        f"({LAB01_MODEL}) is written by `python labs/lab01_pretraining.py`; run it first, "
        "or pass --model minilm_l6 (or another checkpoint directory)"
    )


def fill_start_defaults(args, causal):
    """`--sequence-length` and the rates left unset take the start's own (`START_DEFAULTS`)."""
    for key, value in START_DEFAULTS["causal" if causal else "bidirectional"].items():
        if getattr(args, key) is None:
            setattr(args, key, value)


def load_data(args):
    data = {
        split: load_classification_task(args.task, split, data_dir=args.data_dir, seed=args.seed)
        for split in ("train", "validation", "test")
    }
    rng = np.random.default_rng(args.seed)
    for split, size in (
        ("train", args.train_examples),
        ("validation", args.eval_examples),
        ("test", args.eval_examples),
    ):
        if size and len(data[split]) > size:
            data[split] = data[split].subset(np.sort(rng.permutation(len(data[split]))[:size]))
    return data


# %% Stage 1: the pretrained objective, continued on the task's own texts.
def fine_tune_language_model(encoder, tokenizer, texts, args):
    held_out = max(len(texts) // 20, 1)
    train_texts, valid_texts = texts[held_out:], texts[:held_out]
    if encoder.config.causal:

        def blocks(documents, shuffle):
            return causal_lm_blocks(
                documents,
                tokenizer,
                args.sequence_length,
                args.batch_size,
                seed=args.seed,
                shuffle=shuffle,
                last_block="pad",
            )

        model = CausalLanguageModel(encoder)
    else:
        special = [tokenizer.token_to_id(t) for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]")]
        masker = MaskedLMMasker(
            tokenizer.vocabulary_size(),
            tokenizer.mask_token_id,
            special,
            max_selections=int(args.sequence_length * 0.2) + 1,
            seed=args.seed,
        )

        def mask(batch):
            return {**batch, **masker(batch["token_ids"], batch["padding_mask"])}

        def blocks(documents, shuffle):
            return full_sentences_blocks(
                documents,
                tokenizer,
                args.sequence_length,
                args.batch_size,
                seed=args.seed,
                shuffle=shuffle,
                map_fn=mask,
            )

        model = MaskedLanguageModel(encoder)
    train, valid = blocks(train_texts, True), blocks(valid_texts, False)
    steps = sum(1 for _ in train) * args.lm_epochs
    model.compile(optimizer=fine_tuning_optimizer(steps, args.lm_learning_rate))
    before = model.evaluate(valid, verbose=0, return_dict=True)
    model.fit(train, epochs=args.lm_epochs, verbose=args.verbose)
    after = model.evaluate(valid, verbose=0, return_dict=True)
    loss_key = next(key for key in after if key.endswith("_loss"))
    return {
        "lm_examples": len(train_texts),
        "lm_loss_before": round(before[loss_key], 4),
        "lm_loss_after": round(after[loss_key], 4),
    }


# %% Stage 2: ULMFiT's classifier on one of two schedules (the docstring's "ulmfit" and
# "head_then_all"), each giving at least `--min-steps` whole-model steps (few labels get more
# epochs).
SCHEDULES = {
    "ulmfit": "ULMFiT's: one more group per epoch, rates ÷2.6 per group, slanted triangular",
    "head_then_all": "head alone, then the whole model at one rate",
}


def settings(args, epochs, learning_rate, callbacks=()):
    """One stage-2 fit's `TrainingSettings`: the lab's batch size, seed and verbosity."""
    return TrainingSettings(
        epochs=epochs,
        batch_size=args.batch_size,
        learning_rate=learning_rate,
        seed=args.seed,
        callbacks=callbacks,
        verbose=args.verbose,
    )


def fit_ulmfit_schedule(classifier, preprocessor, train, args, steps_per_epoch):
    """ULMFiT's stage 2: the head's epoch first, one more layer group from the top per epoch,
    then every group to the end, on discriminative slanted triangular rates peaking at
    `--learning-rate` for the head. Returns `(epochs, seconds)`."""
    groups = schedule_groups(classifier, GradualUnfreezing, pooling="concat")  # head first
    # The whole model trains from epoch len(groups) − 1 on: at least `--min-steps` steps
    # from there, and at least ULMFiT's one epoch with every group (`ulmfit_epochs`).
    epochs = max(
        ulmfit_epochs(len(groups), args.epochs),
        len(groups) - 1 + math.ceil(args.min_steps / steps_per_epoch),
    )

    def optimizer(total_steps):
        return discriminative_optimizer(classifier, args.learning_rate, total_steps, ULMFIT_FACTOR)

    unfreezing = GradualUnfreezing(groups, every="epoch", epochs=epochs)
    _, seconds = fine_tune_classifier(
        classifier,
        preprocessor,
        train,
        settings=settings(args, epochs, args.learning_rate, (unfreezing,)),
        optimizer=optimizer,
    )
    return [epochs], seconds


def fit_head_then_all(classifier, preprocessor, train, args, steps_per_epoch):
    """The head alone (encoder frozen) at `--head-learning-rate` for a quarter of
    `--min-steps`, then the whole model at `--learning-rate` for `--min-steps` steps and at
    least `--epochs` epochs. Returns `([head epochs, whole-model epochs], seconds)`."""
    head_epochs = max(1, math.ceil(args.min_steps / 4 / steps_per_epoch))
    epochs = max(args.epochs, math.ceil(args.min_steps / steps_per_epoch))
    encoder = classifier.encoder
    encoder.trainable = False
    _, head_seconds = fine_tune_classifier(
        classifier,
        preprocessor,
        train,
        settings=settings(args, head_epochs, args.head_learning_rate),
    )
    encoder.trainable = True
    _, all_seconds = fine_tune_classifier(
        classifier, preprocessor, train, settings=settings(args, epochs, args.learning_rate)
    )
    return [head_epochs, epochs], head_seconds + all_seconds


def train_classifier(encoder, tokenizer, data, args, schedule):
    preprocessor = BertPreprocessor(tokenizer, sequence_length=args.sequence_length)
    classifier = SequenceClassifier(
        encoder,
        len(data["train"].label_names),
        pooling="concat",
        hidden_units=(50,),
        batch_norm=True,
        dropout=args.dropout,
    )
    steps_per_epoch = math.ceil(len(data["train"]) / args.batch_size)
    fit = fit_ulmfit_schedule if schedule == "ulmfit" else fit_head_then_all
    epochs, seconds = fit(classifier, preprocessor, data["train"], args, steps_per_epoch)
    validation = evaluate_classifier(classifier, preprocessor, data["validation"])
    test = evaluate_classifier(classifier, preprocessor, data["test"])
    return {
        "epochs": epochs,
        "val_accuracy": round(validation["accuracy"], 4),
        "test_accuracy": round(test["accuracy"], 4),
        "test_macro_f1": round(test["macro_f1"], 4),
        # All one class, or within a point of always answering the test subset's most frequent
        # label: IMDb is balanced, so a run that learned little from 100 labels lands here.
        "at_majority": at_majority(test["predictions"], data["test"].labels),
        "train_s": round(seconds, 1),
    }


def summary(runs):
    accuracies = np.array([run["test_accuracy"] for run in runs])
    return {
        "test_mean": round(float(accuracies.mean()), 4),
        "test_sd": round(float(accuracies.std(ddof=1)), 4) if len(runs) > 1 else None,
        "val_mean": round(float(np.mean([run["val_accuracy"] for run in runs])), 4),
        "train_s": round(float(np.mean([run["train_s"] for run in runs])), 1),
        "seeds": len(runs),
        # Fine-tuning's known failure on few labels (Mosbach et al. 2021), counted so a mean
        # near the majority class is read for what it is.
        "runs_at_majority": int(sum(run["at_majority"] for run in runs)),
    }


# %% Settings (`--help` lists them).
parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument(
    "--task",
    default="auto",
    choices=("auto", "imdb", "sst2"),
    help="auto: IMDb when the data directory has it, else SST-2",
)
parser.add_argument(
    "--model",
    default=LAB01_MODEL,
    help="a kbert directory such as lab01's causal model (the default: stage 1 is causal LM "
    "with its pretrained head), minilm_l6 or a Hugging Face BERT directory (masked LM from a "
    "new head: MiniLM-L6 ships none)",
)
parser.add_argument(
    "--train-examples",
    type=comma_separated(int, minimum=1),
    default=[100, 500],
    help="labelled training documents per run, comma-separated sizes",
)
parser.add_argument(
    "--schedules",
    default=",".join(SCHEDULES),
    help="stage 2's schedules, comma-separated: ulmfit (the paper's), head_then_all "
    "(default: both)",
)
parser.add_argument(
    "--seeds", type=int, default=3, help="classifier runs per size, schedule and start"
)
parser.add_argument(
    "--lm-examples",
    type=int,
    default=4000,
    help="unlabelled training texts for stage 1 (0 = all of train)",
)
parser.add_argument(
    "--eval-examples",
    type=int,
    default=1000,
    help="validation and test documents scored (0 = all)",
)
parser.add_argument(
    "--sequence-length", type=int, default=None, help="default: 128 from a causal start, else 256"
)
parser.add_argument("--batch-size", type=int, default=16)
parser.add_argument("--lm-epochs", type=int, default=1)
parser.add_argument(
    "--lm-learning-rate",
    type=float,
    default=None,
    help="default: 3e-4 from a causal start, else 5e-5",
)
parser.add_argument(
    "--epochs",
    type=int,
    default=2,
    help="least whole-model epochs of stage 2 (the ulmfit schedule: least epochs in all)",
)
parser.add_argument("--min-steps", type=int, default=100, help="least whole-model steps")
parser.add_argument(
    "--head-learning-rate",
    type=float,
    default=1e-3,
    help="the head-alone phase's rate (head_then_all; the ulmfit schedule's head trains at "
    "--learning-rate)",
)
parser.add_argument(
    "--learning-rate",
    type=float,
    default=None,
    help="the peak rate (the ulmfit schedule: the head's, ÷2.6 per group below); default: 3e-4 "
    "from a causal start, else 5e-5",
)
parser.add_argument("--dropout", type=float, default=0.1)
parser.add_argument(
    "--dtype",
    default="auto",
    choices=DTYPES,
    help="auto: mixed_bfloat16 where the CPU/GPU computes bfloat16 and trains faster here",
)
parser.add_argument(
    "--skip-baseline", action="store_true", help="do not train the classifier without stage 1"
)
parser.add_argument("--data-dir", default=None)
parser.add_argument("--run-dir", default="runs/lab07_document_classification")
parser.add_argument("--seed", type=int, default=0, help="the data subsets' and stage 1's seed")
add_record_argument(parser)
parser.add_argument("--verbose", type=int, default=2)
args = parser.parse_args()
args.dtype = resolve_dtype(args.dtype)  # "auto": what this machine computes fastest
schedules = [name.strip() for name in args.schedules.split(",") if name.strip()]
if not schedules or any(name not in SCHEDULES for name in schedules):
    parser.error(f"--schedules must name some of {tuple(SCHEDULES)}; received {args.schedules!r}")
args.schedules = list(dict.fromkeys(schedules))
if args.seeds < 1 or args.min_steps < 0:
    parser.error(
        f"--seeds must be >= 1 and --min-steps >= 0; received {args.seeds}, {args.min_steps}"
    )
for flag, value in (
    ("--sequence-length", args.sequence_length),
    ("--learning-rate", args.learning_rate),
    ("--lm-learning-rate", args.lm_learning_rate),
):
    if value is not None and value <= 0:
        parser.error(f"{flag} must be > 0 (or left out for the start's own); received {value}")
check_start(parser, args.model)
args.task = choose_task(args.task, args.data_dir)
sizes, args.train_examples = args.train_examples, max(args.train_examples)
data = load_data(args)  # the largest training subset; smaller sizes are its seeded subsets
lm_texts = load_classification_task(
    args.task, "train", data_dir=args.data_dir, seed=args.seed
).texts  # never validation or test texts
lm_texts = lm_texts[: args.lm_examples or None]

# %% Stage 1 once: the encoder's weights after LM fine-tuning on the unlabelled texts.
keras.utils.set_random_seed(args.seed)
encoder, tokenizer = load_pretrained(args.model, dtype=args.dtype)
fill_start_defaults(args, encoder.config.causal)
language_model = fine_tune_language_model(encoder, tokenizer, lm_texts, args)
lm_weights = encoder.get_weights()
print(
    f"stage 1 on {language_model['lm_examples']} unlabelled texts: held-out LM loss "
    f"{language_model['lm_loss_before']:.3f} → {language_model['lm_loss_after']:.3f}"
)

# %% Stage 2 at each labelled size, seed and schedule, from the LM-fine-tuned and the plain
# encoder: both starts of a seed train on the same labelled subset with the same seed.
variants = {
    "lm_fine_tuned": "LM fine-tuned, then classifier",
    "plain": "classifier only (no stage 1)",
}
if args.skip_baseline:
    del variants["plain"]
runs = {
    schedule: {size: {name: [] for name in variants} for size in sizes}
    for schedule in args.schedules
}
for size in sizes:
    for seed in range(args.seeds):
        rng = np.random.default_rng(1000 * size + seed)
        chosen = np.sort(rng.permutation(len(data["train"]))[:size])
        subset = {**data, "train": data["train"].subset(chosen)}
        for schedule in args.schedules:
            for name in variants:
                keras.utils.set_random_seed(seed)
                encoder, tokenizer = load_pretrained(args.model, dtype=args.dtype)
                if name == "lm_fine_tuned":
                    encoder.set_weights(lm_weights)
                seed_args = argparse.Namespace(**{**vars(args), "seed": seed})
                run = train_classifier(encoder, tokenizer, subset, seed_args, schedule)
                runs[schedule][size][name].append(run)
                print(
                    f"{size} labelled, seed {seed}, {schedule} schedule, {name}: test "
                    f"{run['test_accuracy']:.4f} (val {run['val_accuracy']:.4f}, epochs "
                    f"{run['epochs']}, {run['train_s']:.0f} s"
                    f"{', at the majority class' if run['at_majority'] else ''})",
                    flush=True,
                )


# %% The schedule validation prefers at each size: the higher mean validation accuracy over
# both starts' runs (so the choice favours neither), never the test.
def preferred_schedule(by_schedule, size):
    def validation(schedule):
        return np.mean([row["val_mean"] for row in by_schedule[schedule][str(size)].values()])

    return max(by_schedule, key=validation)


# %% Results table: test accuracy, mean ± sd over seeds, and the runs at the majority class.
print(
    f"\n{args.task}: {', '.join(map(str, sizes))} labelled training documents, "
    f"{len(data['validation'])} validation, {len(data['test'])} test; {args.model}, "
    f"{args.sequence_length} tokens, {args.seeds} seed(s)"
)
print(
    "labelled  schedule       start                            val mean   test mean ± sd   "
    "train s  at majority"
)
results = {}
for schedule in args.schedules:
    results[schedule] = {}
    for size in sizes:
        results[schedule][str(size)] = {
            name: summary(runs[schedule][size][name]) for name in variants
        }
        for name, label in variants.items():
            row = results[schedule][str(size)][name]
            spread = "" if row["test_sd"] is None else f" ± {row['test_sd']:.4f}"
            print(
                f"{size:8d}  {schedule:13s}  {label:32s} {row['val_mean']:8.4f}   "
                f"{row['test_mean']:.4f}{spread:9s}  {row['train_s']:7.0f}  "
                f"{row['runs_at_majority']} of {row['seeds']}"
            )
report = {
    "task": args.task,
    "model": args.model,
    "language_model": language_model,
    "schedules": args.schedules,
    "results": results,
    "gain_points": {
        schedule: {
            size: round(100 * (row["lm_fine_tuned"]["test_mean"] - row["plain"]["test_mean"]), 2)
            for size, row in by_size.items()
            if "plain" in row
        }
        for schedule, by_size in results.items()
    },
    # Stage 1's gain, seed by seed: the spread of the differences, not of each mean, says
    # whether the gain is more than noise.
    "difference": {
        schedule: {
            str(size): paired_difference(
                [run["test_accuracy"] for run in runs[schedule][size]["lm_fine_tuned"]],
                [run["test_accuracy"] for run in runs[schedule][size]["plain"]],
            )
            for size in sizes
        }
        for schedule in args.schedules
        if "plain" in variants
    },
    "preferred_schedule": {str(size): preferred_schedule(results, size) for size in sizes},
    "majority_test_accuracy": round(majority_accuracy(data["test"].labels), 4),
    "settings": {
        key: getattr(args, key)
        for key in (
            "sequence_length",
            "batch_size",
            "lm_epochs",
            "epochs",
            "min_steps",
            "seeds",
            "dtype",
            "lm_learning_rate",
            "head_learning_rate",
            "learning_rate",
        )
    }
    | {
        "ulmfit_factor": ULMFIT_FACTOR,
        "validation_examples": len(data["validation"]),
        "test_examples": len(data["test"]),
    },
}
for schedule, by_size in report["difference"].items():
    for size, difference in by_size.items():
        print(
            f"stage 1's gain at {size} labels on the {schedule} schedule, seed by seed: "
            f"{format_difference(difference)}"
        )
for size, schedule in report["preferred_schedule"].items():
    print(f"schedule validation prefers at {size} labels: {schedule}")
print(
    f"majority class of the {len(data['test'])} test documents: {report['majority_test_accuracy']:.4f}"
)
run_dir = Path(args.run_dir)
run_dir.mkdir(parents=True, exist_ok=True)
atomic_write_text(run_dir / "results.json", json.dumps({**report, "runs": runs}, indent=1))
record_if_requested(args, report)
print(json.dumps(report))
