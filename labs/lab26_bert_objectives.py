"""Lab 26: BERT's pretraining objectives compared at equal steps: MLM, + NSP, + SOP, spans + SBO.

Reproduces the objective comparisons of Jurafsky & Martin ch. 11 (§11.2.3, next sentence
prediction; §11.5.1, SpanBERT) and of the papers behind them: BERT pretrains with masked language
modelling plus next sentence prediction (Devlin et al. 2019: NSP helps pair tasks such as QNLI and
MNLI); RoBERTa (Liu et al. 2019) and SpanBERT (Joshi et al. 2020) found that dropping NSP does
not hurt, or helps; ALBERT (Lan et al. 2020) replaced NSP by sentence-order prediction (SOP),
a harder task that it found more useful downstream; SpanBERT masks spans of whole words and adds
the span boundary objective (SBO), which it found helps span-level tasks most.

Four encoders of one size are pretrained from scratch on the same books (lab01's corpus and its
WordPiece tokenizer), with lab01's recipe (pre-LN, no dropout while pretraining and BERT's 0.1
for fine-tuning, linear decay after warmup, lab01's peak rate; BERT's 15% masking for every
objective, not the recipe's 40%, as SpanBERT's span budget is set for it) and the same
optimizer, schedule, batch size, block length, number of steps and seed: `masked` (MLM alone, on RoBERTa's FULL-SENTENCES blocks), `masked+nsp` (MLM on
`[CLS] A [SEP] B [SEP]` pairs, half of the B segments from another book), `masked+sop` (the
same pairs, half of them swapped) and `span+sbo` (span masking, MLM + SBO). The budget is equal
in steps, not in seconds (a second head costs a little time; equal time would give it fewer
updates, so equal steps isolates what the objective teaches). The library pieces are
`kbert.data.combined_pretraining_inputs` and `kbert.models.combined_pretraining_model`.

Each encoder is then measured three ways: (1) its MLM head's loss and accuracy on one common set
of masked held-out blocks (other authors' books; the same masks for all four, drawn once), an
intrinsic measure; (2) each second head's accuracy on its own held-out batches (SOP is expected
harder than NSP, whose negatives change topic); (3) fine-tuning a new classifier for MRPC
(paraphrase pairs: a pair task, read by accuracy and by F1 of the paraphrase class, GLUE's
metric, beside the F1 of always answering "paraphrase") and TREC-6 (question types: single
sentences): mean ± sd of test scores over the runs (below: one per pretraining seed), the
seed-paired difference of each objective to MLM alone (`kbert.metrics.seed_comparison`), and
the runs that landed at the majority class counted beside the majority's accuracy
(`kbert.metrics.majority_class`: all one class, or within a point of it). Every encoder, under
every pooling, sees the same seeded training subset and the same new head for a given pair of
seeds.

Why two readings (`--pooling cls,mean` by default). BERT, RoBERTa, ALBERT and SpanBERT all
fine-tune on the [CLS] vector, so that reading is kept: it is the sources' comparison. But the
[CLS] output is not neutral ground here: only NSP and SOP put a loss on it while pretraining
(their head reads the pooler on [CLS]). MLM never predicts at [CLS], and SBO reads it at most as
the left boundary of a span that opens a block, so for MLM alone and span + SBO the [CLS] vector
is whatever the layers below make of it, and a new head on it starts behind for a reason that
is the reading, not what the objective taught the encoder. Mean pooling averages every
token's vector, and every position but [CLS] and [SEP] is one that all four MLM losses are put
on some of the time, so it treats the four alike. An objective ahead at [CLS] and not under
mean pooling has trained the [CLS] vector; one ahead under both has trained the encoder. Each
pooling's differences to MLM alone are paired within that pooling. One more difference that is
not the objective: an MRPC pair's second sentence reads segment embedding 1, which NSP and SOP
train (their pairs) and MLM alone and span + SBO never see (their blocks are one segment), so
on MRPC those two start that embedding at its initialisation.

The seeds vary the thing compared: each objective is pretrained three times
(`--pretraining-seeds 3`), each encoder fine-tuned once per task and reading (`--seeds 1`),
so the runs pair by (pretraining seed, fine-tuning seed) and the spread holds pretraining
noise as well as fine-tuning noise: a difference says "this objective", not "this one
pretrained encoder" (with one pretraining per objective the sd would measure fine-tuning noise
only). The fine-tuning cost is that of one pretraining with three fine-tuning seeds; the
pretraining is three times as long. The fine-tuning peak rate is chosen on validation for each
objective, reading and task (`kbert.train.rate_on_validation`): the first pair of seeds tries
each of `--learning-rates` (the two `benchmarks/transfer.py` chooses between for lab01's
from-scratch encoders), the held-out 10% of the training file (lab12, lab21; never trained on)
scores it by the task's metric (MRPC F1, TREC-6 accuracy), and the other pairs train at the
rate chosen, so no objective is read at a rate that suits another. Every other setting is fixed
in advance.

Sizes are cut for a 2-core CPU: a 2-layer, 128-wide encoder, 64-token blocks and pairs, a few
hundred steps per objective on a dozen books, fine-tuning on subsamples. At this size the
encoders are far from BERT's; what the record can show is the direction of each objective's
effect at a tiny scale, with its spread. What the record found:
docs/results.md#lab26_bert_objectives.

    python labs/lab26_bert_objectives.py [--record docs/results/lab26_bert_objectives.json]
    python labs/lab26_bert_objectives.py --objectives masked,masked+sop --seeds 1 --pooling mean
"""

import argparse
import itertools
import json
import time
from pathlib import Path

import kbert.quiet  # noqa: F401  (TensorFlow's start-up lines filtered)

import keras
import numpy as np
import tensorflow as tf

from kbert.data import CLASSIFICATION_TASKS, load_classification_task, read_named_corpus
from kbert.data.combined_pretraining_inputs import combined_pretraining_datasets
from kbert.files import atomic_write_text
from kbert.metrics.classification_metrics import binary_f1
from kbert.metrics.majority_class import at_majority, majority_accuracy
from kbert.metrics.seed_comparison import format_difference, summarize_arms
from kbert.models import SequenceClassifier
from kbert.models.combined_pretraining_model import (
    COMBINED_OBJECTIVES,
    build_combined_pretraining_model,
)
from kbert.models.pretraining_models import (
    RECIPE,
    PretrainingModelSettings,
    pretraining_encoder,
)
from kbert.run_records import add_record_argument, record_if_requested
from kbert.tasks import evaluate_classifier
from kbert.text import BertPreprocessor
from kbert.text.corpus_tokenizers import train_corpus_tokenizer
from kbert.train import TrainingSettings, fine_tune_classifier
from kbert.train.lab_run_arguments import add_learning_rates_argument, resolve_learning_rates
from kbert.train.pretraining_optimizer import compile_for_pretraining
from kbert.train.rate_on_validation import rate_then_seeds

OBJECTIVES = {
    "masked": "MLM alone (RoBERTa)",
    "masked+nsp": "MLM + NSP (BERT)",
    "masked+sop": "MLM + SOP (ALBERT)",
    "span+sbo": "span masking, MLM + SBO (SpanBERT)",
}
TASKS = ("mrpc", "trec")
# How the classifier reads the encoder: the sources' [CLS] vector (trained only by NSP and SOP),
# the mean of the token vectors (trained alike by every objective), or BERT's pooler on [CLS].
POOLINGS = ("cls", "mean", "pooler")
SECOND_HEADS = {"masked+nsp": "nsp", "masked+sop": "sop", "span+sbo": "sbo"}


# lab01's CPU-hour recipe (`kbert.models.pretraining_models.RECIPE`, each choice with its
# source) for every objective alike: pre-LN, no dropout while pretraining (BERT's 0.1 back for
# fine-tuning), linear decay after warmup, lab01's peak rate. Its mask rate is not taken: every
# objective masks BERT's 15% here (SpanBERT's span lengths and budget are set for 15%).
def model_settings(args, seed, fine_tuning=False):
    return PretrainingModelSettings(
        num_layers=args.num_layers,
        hidden_dim=args.hidden_dim,
        num_heads=args.num_heads,
        layer_norm=RECIPE["layer_norm"],
        dropout=RECIPE["fine_tuning_dropout" if fine_tuning else "dropout"],
        block_length=args.block_length,
        seed=seed,
    )


# %% The technique: what each objective's batch holds. MLM alone reads packed sentences with 15%
# of tokens masked; NSP and SOP read a pair `[CLS] A [SEP] B [SEP]` and label it (NSP: B follows
# A, or comes from another book; SOP: A and B in order, or swapped: same topic either way, so
# only coherence tells them apart); SpanBERT masks whole spans and asks the SBO head to rebuild
# each masked token from the two tokens just outside its span.
def show_example(objective, batch, tokenizer):
    """Prints the first row of a batch: its tokens, segments, and the objective's targets."""
    ids = batch["token_ids"][0]
    length = int(batch["padding_mask"][0].sum())
    tokens = [tokenizer.id_to_token(int(i)) for i in ids[:length]]
    print(f"\n{OBJECTIVES[objective]}: {' '.join(tokens)}")
    if objective in ("masked+nsp", "masked+sop"):
        label = int(batch["next_sentence_labels"][0])
        meaning = {"masked+nsp": ("random B", "B follows A"), "masked+sop": ("swapped", "in order")}
        segments = "".join(str(int(s)) for s in batch["segment_ids"][0][:length])
        print(f"  segments {segments}; label {label} ({meaning[objective][label]})")
    weights = batch["mask_weights"][0] > 0
    targets = [tokenizer.id_to_token(int(i)) for i in batch["mask_ids"][0][weights]]
    print(f"  MLM targets at {batch['mask_positions'][0][weights].tolist()}: {targets}")
    if objective == "span+sbo":
        left = batch["mask_left_boundary"][0][weights].tolist()
        right = batch["mask_right_boundary"][0][weights].tolist()
        spans = sorted(set(zip(left, right, strict=True)))
        print(f"  spans (boundary positions s-1, e+1 the SBO head reads): {spans}")


def numpy_batch(batch):
    return {key: value.numpy() for key, value in batch.items()}


def common_masked_set(valid_documents, tokenizer, args):
    """The held-out MLM set every encoder is scored on: masked once, the same for all four."""
    batches, _ = combined_pretraining_datasets(
        "masked",
        (valid_documents, None),
        tokenizer,
        args.block_length,
        args.batch_size,
        seed=args.seed,
    )
    drawn = [numpy_batch(b) for b in batches.take(args.eval_batches)]
    keys = ("token_ids", "segment_ids", "padding_mask", "mask_positions", "mask_ids")
    arrays = {key: np.concatenate([b[key] for b in drawn]) for key in keys + ("mask_weights",)}
    return tf.data.Dataset.from_tensor_slices(arrays).batch(args.batch_size)


def pretrain(objective, documents, tokenizer, args, seed):
    """One objective's pretraining run; returns the trained model, its held-out batches and
    the training seconds."""
    keras.backend.clear_session()
    keras.utils.set_random_seed(seed)
    train, valid = combined_pretraining_datasets(
        objective, documents, tokenizer, args.block_length, args.batch_size, seed=seed
    )
    model = build_combined_pretraining_model(
        objective, model_settings(args, seed), tokenizer.vocabulary_size()
    )
    compile_for_pretraining(
        model, args.peak_learning_rate, args.steps, args.warmup_steps, schedule=RECIPE["schedule"]
    )
    if seed == args.seed:
        show_example(objective, numpy_batch(next(iter(train))), tokenizer)
    start = time.perf_counter()
    model.fit(train, epochs=1, steps_per_epoch=args.steps, verbose=args.verbose)
    return model, valid, time.perf_counter() - start


def held_out_measures(model, objective, valid, common, args):
    """The MLM head on the common masked set; the second head on the objective's own batches."""
    own = model.evaluate(valid, steps=args.eval_batches, return_dict=True, verbose=0)
    mlm = model.objectives[0]  # every combination's first head: BERT's MLM
    mlm.compile()
    intrinsic = mlm.evaluate(common, return_dict=True, verbose=0)
    run = {
        "mlm_loss": round(float(intrinsic["mlm_loss"]), 4),
        "mlm_accuracy": round(float(intrinsic["mlm_accuracy"]), 4),
    }
    if objective in SECOND_HEADS:
        head = SECOND_HEADS[objective]
        run[f"{head}_accuracy"] = round(float(own[f"{head}_accuracy"]), 4)
    return run


def fine_tune(weights, tokenizer, data, args, arm):
    """A new classifier on the encoder from `weights`, reading it by `arm["pooling"]`, trained
    on `data["train"]` at `arm["learning_rate"]` with `arm`'s pretraining and fine-tuning
    seeds; its test accuracy (and `test_f1` of `data["positive_label"]` where not None),
    whether it landed at the majority class, and (where `data` holds "validation") the
    validation score the rate is chosen by (`validation_f1` with a positive label, else
    `validation_accuracy`)."""
    train, test, positive_label = data["train"], data["test"], data["positive_label"]
    keras.backend.clear_session()
    # The same new head for every encoder and pooling of this seed.
    keras.utils.set_random_seed(arm["seed"])
    encoder = pretraining_encoder(
        "masked",
        model_settings(args, arm["pretraining_seed"], fine_tuning=True),
        tokenizer.vocabulary_size(),
    )
    encoder.set_weights(weights)
    preprocessor = BertPreprocessor(tokenizer, sequence_length=args.sequence_length)
    classifier = SequenceClassifier(encoder, len(train.label_names), pooling=arm["pooling"])
    settings = TrainingSettings(
        epochs=args.epochs,
        batch_size=args.fine_tune_batch_size,
        learning_rate=arm["learning_rate"],
        seed=arm["seed"],
        verbose=args.verbose,
    )
    _, seconds = fine_tune_classifier(classifier, preprocessor, train, settings=settings)
    report = evaluate_classifier(classifier, preprocessor, test, positive_label=positive_label)
    run = {"test_accuracy": round(float(report["accuracy"]), 4)}
    if positive_label is not None:
        run["test_f1"] = round(float(report["f1"]), 4)
    if "validation" in data:
        held = evaluate_classifier(
            classifier, preprocessor, data["validation"], positive_label=positive_label
        )
        metric = "f1" if positive_label is not None else "accuracy"
        run[f"validation_{metric}"] = round(float(held[metric]), 4)
    return run | {
        "at_majority": bool(at_majority(report["predictions"], test.labels)),
        "train_s": round(seconds, 1),
    }


def positive_class(task):
    """The class whose F1 is `task`'s headline metric (MRPC's "paraphrase"), else None."""
    about = CLASSIFICATION_TASKS[task]
    return about.positive_label if about.metric == "f1" else None


def seed_pairs(args):
    """Every (pretraining seed, fine-tuning seed) the lab fine-tunes with, in the order every
    arm's runs are kept (so the runs of two arms pair by position)."""
    pretraining = range(args.seed, args.seed + args.pretraining_seeds)
    return list(itertools.product(pretraining, range(args.seed, args.seed + args.seeds)))


def run_task(task, encoders, tokenizer, args):
    """Every pooling and encoder on one task, each at its peak rate chosen on validation at the
    first pair of seeds (`rate_then_seeds`), then every other (pretraining seed, fine-tuning
    seed); its part of the record, the runs in seed order."""
    pool = load_classification_task(task, "train", data_dir=args.data_dir, seed=args.seed)
    validation = load_classification_task(
        task, "validation", data_dir=args.data_dir, seed=args.seed
    ).sample(args.eval_examples, args.seed)
    test = load_classification_task(task, "test", data_dir=args.data_dir).sample(
        args.eval_examples, args.seed
    )
    positive = positive_class(task)
    metric = "validation_f1" if positive is not None else "validation_accuracy"
    pairs = seed_pairs(args)
    # One subset per pair of seeds, for every pooling and encoder.
    subsets = {pair: pool.sample(args.train_examples, 1000 * pair[0] + pair[1]) for pair in pairs}
    runs, choices = [], {}
    for pooling, objective in itertools.product(args.poolings, args.objectives):

        def train(rate, pair, pooling=pooling, objective=objective):
            p_seed, seed = pair
            arm = {
                "objective": objective,
                "pooling": pooling,
                "pretraining_seed": p_seed,
                "seed": seed,
                "learning_rate": rate,
            }
            data = {"train": subsets[pair], "test": test, "positive_label": positive}
            if pair == pairs[0] and len(args.learning_rates) > 1:  # the rate is chosen here
                data["validation"] = validation
            run = {
                **arm,
                **fine_tune(encoders[objective, p_seed], tokenizer, data, args, arm),
            }
            landed = ", at the majority class" if run["at_majority"] else ""
            f1 = f", F1 {run['test_f1']:.4f}" if "test_f1" in run else ""
            held = f", {metric} {run[metric]:.4f}" if metric in run else ""
            print(
                f"{task} seed {p_seed}/{seed}, {pooling} pooling, {objective}, lr {rate:g}: "
                f"test {run['test_accuracy']:.4f}{f1}{held}{landed} ({run['train_s']:.0f} s)",
                flush=True,
            )
            return run

        kept, choice = rate_then_seeds(
            args.learning_rates, pairs, train, metric, shown=("test_accuracy", "test_f1")
        )
        choices.setdefault(pooling, {})[objective] = choice
        runs += kept
    # Seed-major, as before: each pair's runs together, poolings and objectives in order.
    order = {pair: index for index, pair in enumerate(pairs)}
    runs.sort(key=lambda run: order[run["pretraining_seed"], run["seed"]])
    train = subsets[pairs[-1]]
    study = {
        "train_examples": len(train),
        "test_examples": len(test),
        "majority_accuracy": round(majority_accuracy(test.labels), 4),
    }
    if positive is not None:  # the F1 a classifier gets by always answering the positive class
        index = test.label_names.names.index(positive)
        always = np.full(len(test.labels), index)
        study["majority_f1"] = round(binary_f1(test.labels, always, index), 4)
    study["validation_examples"] = len(validation)
    study["rate_choices"] = choices
    return study | {"poolings": summarize(runs, args), "runs": runs}


def summarize(runs, args):
    """Per pooling: each objective's mean ± sd of test accuracy, its seed-paired difference to
    MLM alone within that pooling (`vs_masked`), and its runs at the majority class."""
    summary = {}
    for pooling in args.poolings:
        arms = {
            objective: [r for r in runs if (r["pooling"], r["objective"]) == (pooling, objective)]
            for objective in args.objectives
        }
        accuracies = {
            objective: [r["test_accuracy"] for r in arm] for objective, arm in arms.items()
        }
        rows = summarize_arms(accuracies, "masked")
        for objective, arm in arms.items():
            rows[objective]["runs_at_majority"] = sum(r["at_majority"] for r in arm)
        summary[pooling] = {"objectives": rows}
        if all("test_f1" in r for arm in arms.values() for r in arm):
            f1s = {objective: [r["test_f1"] for r in arm] for objective, arm in arms.items()}
            summary[pooling]["f1_objectives"] = summarize_arms(f1s, "masked")
    return summary


def print_intrinsic(intrinsic, args):
    print(
        f"\n{args.num_layers} layers × {args.hidden_dim}, {args.steps} steps of "
        f"{args.batch_size} × {args.block_length} tokens per objective, "
        f"{args.pretraining_seeds} pretraining seed(s) × {args.seeds} fine-tuning seed(s)"
    )
    print("objective                             MLM loss  MLM acc  second head's accuracy")
    for objective, row in intrinsic.items():
        second = SECOND_HEADS.get(objective)
        own = f"{second} {row[f'{second}_accuracy']:.4f}" if second else "–"
        print(
            f"{OBJECTIVES[objective]:36s}  {row['mlm_loss']:8.4f}  {row['mlm_accuracy']:7.4f}  "
            f"{own}"
        )


def print_task(task, study):
    """One task's test accuracy per pooling and objective, paired to MLM alone within the
    pooling, with the runs at the majority class."""
    for pooling, reading in study["poolings"].items():
        for objective, row in reading["objectives"].items():
            spread = "" if row["sd"] is None else f" ± {row['sd']:.4f}"
            print(
                f"{task:4s}  {pooling:7s}  {OBJECTIVES[objective]:36s}  {row['mean']:.4f}"
                f"{spread:9s}  {format_difference(row.get('vs_masked')):30s}  "
                f"{row['runs_at_majority']} of {len(row['runs'])}"
            )
        for objective, row in reading.get("f1_objectives", {}).items():
            spread = "" if row["sd"] is None else f" ± {row['sd']:.4f}"
            print(
                f"{task + ' F1':8s}  {pooling:7s}  {OBJECTIVES[objective]:32s}  "
                f"{row['mean']:.4f}{spread:9s}  {format_difference(row.get('vs_masked'))}"
            )
    always = (
        f", F1 of always the positive class {study['majority_f1']:.4f}"
        if "majority_f1" in study
        else ""
    )
    print(
        f"{task:4s}  majority class {study['majority_accuracy']:.4f}{always} on "
        f"{study['test_examples']} test examples; {study['train_examples']} training"
    )


def print_tables(intrinsic, tasks, args):
    print_intrinsic(intrinsic, args)
    print(
        "\ntask  pooling  objective                             test mean ± sd   "
        "vs MLM alone                    at majority"
    )
    for task, study in tasks.items():
        print_task(task, study)


def listed(parser, flag, text, choices, expected):
    """The comma-separated names `text` of `flag`, each one of `choices` and each once; a
    parser error naming the flag otherwise."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names or set(names) - set(choices) or len(set(names)) < len(names):
        parser.error(f"{flag} must list {expected}, each once; received {text!r}")
    return names


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--objectives",
        default=",".join(OBJECTIVES),
        help="comma-separated: masked, masked+nsp, masked+sop, span+sbo (masked first: the "
        "baseline of every difference)",
    )
    parser.add_argument("--tasks", default=",".join(TASKS), help="mrpc and/or trec")
    parser.add_argument(
        "--corpus", choices=["pretrain_corpus", "wikitext2"], default="pretrain_corpus"
    )
    parser.add_argument("--max-documents", type=int, default=12, help="training books (0: all)")
    parser.add_argument("--vocabulary-size", type=int, default=8000)
    parser.add_argument("--num-layers", type=int, default=2)
    parser.add_argument("--hidden-dim", type=int, default=128)
    parser.add_argument("--num-heads", type=int, default=2)
    parser.add_argument("--block-length", type=int, default=64, help="tokens per block or pair")
    parser.add_argument("--batch-size", type=int, default=32, help="pretraining batch")
    parser.add_argument("--steps", type=int, default=250, help="pretraining steps per objective")
    parser.add_argument("--warmup-steps", type=int, default=25)
    parser.add_argument("--peak-learning-rate", type=float, default=1e-3)
    parser.add_argument(
        "--eval-batches", type=int, default=20, help="held-out batches scored per encoder"
    )
    parser.add_argument("--train-examples", type=int, default=800, help="per task (0: all)")
    parser.add_argument("--eval-examples", type=int, default=400, help="test examples (0: all)")
    parser.add_argument("--sequence-length", type=int, default=64, help="fine-tuning tokens")
    parser.add_argument("--fine-tune-batch-size", type=int, default=16)
    parser.add_argument("--epochs", type=int, default=2)
    add_learning_rates_argument(
        parser,
        "objective, reading and task",
        [3e-4, 1e-3],
        "benchmarks/transfer.py's two for lab01's encoders",
    )
    parser.add_argument(
        "--pooling",
        dest="poolings",
        default="cls,mean",
        help="comma-separated: cls, mean, pooler; every encoder is fine-tuned under each (cls: "
        "the sources' reading, trained only by NSP and SOP; mean: every objective alike)",
    )
    parser.add_argument(
        "--seeds", type=int, default=1, help="fine-tuning seeds per pretrained encoder"
    )
    parser.add_argument(
        "--pretraining-seeds",
        type=int,
        default=3,
        help="pretraining runs per objective (the spread then holds pretraining noise)",
    )
    parser.add_argument("--seed", type=int, default=0, help="the first seed of each kind")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--run-dir", default="runs/lab26_bert_objectives")
    parser.add_argument("--verbose", type=int, default=0)
    add_record_argument(parser)
    args = parser.parse_args()
    args.objectives = listed(
        parser,
        "--objectives",
        args.objectives,
        COMBINED_OBJECTIVES,
        f"some of {', '.join(COMBINED_OBJECTIVES)}",
    )
    args.tasks = listed(parser, "--tasks", args.tasks, TASKS, "mrpc and/or trec")
    args.poolings = listed(
        parser, "--pooling", args.poolings, POOLINGS, f"some of {', '.join(POOLINGS)}"
    )
    positive = (
        "num_layers", "hidden_dim", "num_heads", "batch_size", "steps", "eval_batches",
        "fine_tune_batch_size", "epochs", "seeds", "pretraining_seeds",
    )  # fmt: skip
    for flag in positive:
        if getattr(args, flag) < 1:
            parser.error(f"--{flag.replace('_', '-')} must be >= 1; received {getattr(args, flag)}")
    for flag in ("max_documents", "train_examples", "eval_examples", "warmup_steps", "seed"):
        if getattr(args, flag) < 0:
            parser.error(f"--{flag.replace('_', '-')} must be >= 0; received {getattr(args, flag)}")
    if args.block_length < 8 or not 8 <= args.sequence_length <= args.block_length:
        parser.error(
            "--block-length must be >= 8 and --sequence-length in [8, --block-length] (the "
            f"encoder's positions); received {args.block_length} and {args.sequence_length}"
        )
    if not args.peak_learning_rate > 0:
        parser.error(f"--peak-learning-rate must be > 0; received {args.peak_learning_rate}")
    resolve_learning_rates(parser, args)
    return args


def main():
    args = parse_arguments()
    run_dir = Path(args.run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)

    # %% The corpus and tokenizer (lab01's): books, the held-out ones by other authors.
    documents = read_named_corpus(args.corpus, args.data_dir, args.max_documents)
    tokenizer, _ = train_corpus_tokenizer(documents[0], "wordpiece", args.vocabulary_size, run_dir)
    common = common_masked_set(documents[1], tokenizer, args)

    # %% Pretraining: each objective, the same encoder size, steps, schedule and seed.
    pretraining_seeds = range(args.seed, args.seed + args.pretraining_seeds)
    encoders, pretraining = {}, {objective: [] for objective in args.objectives}
    for p_seed in pretraining_seeds:
        for objective in args.objectives:
            model, valid, seconds = pretrain(objective, documents, tokenizer, args, p_seed)
            run = {"pretraining_seed": p_seed, "train_s": round(seconds, 1)}
            run.update(held_out_measures(model, objective, valid, common, args))
            print(
                f"{objective}: {args.steps} steps in {seconds:.0f} s; held-out "
                + ", ".join(
                    f"{k} {v:.3f}" for k, v in run.items() if k.endswith(("_loss", "_accuracy"))
                ),
                flush=True,
            )
            encoders[objective, p_seed] = model.encoder.get_weights()
            pretraining[objective].append(run)

    # %% Fine-tuning: per task and seed, one subset and one new head for every encoder, each
    # read at [CLS] (the sources' way) and by mean pooling (every objective's tokens alike).
    tasks = {task: run_task(task, encoders, tokenizer, args) for task in args.tasks}

    # %% Results: the intrinsic measure, then test accuracy, mean ± sd, paired differences.
    intrinsic = {}
    for objective, runs in pretraining.items():
        intrinsic[objective] = {
            key: round(float(np.mean([run[key] for run in runs])), 4)
            for key in runs[0]
            if key.endswith(("_loss", "_accuracy"))
        }
        intrinsic[objective]["train_s"] = round(float(np.mean([r["train_s"] for r in runs])), 1)
    print_tables(intrinsic, tasks, args)
    report = {
        "pretraining": {"intrinsic": intrinsic, "runs": pretraining},
        "tasks": tasks,
        "settings": {
            key: getattr(args, key)
            for key in (
                "corpus",
                "max_documents",
                "vocabulary_size",
                "num_layers",
                "hidden_dim",
                "block_length",
                "batch_size",
                "steps",
                "peak_learning_rate",
                "sequence_length",
                "epochs",
                "learning_rates",
                "poolings",
                "seeds",
                "pretraining_seeds",
            )
        }
        | {
            "layer_norm": RECIPE["layer_norm"],
            "pretraining_dropout": RECIPE["dropout"],
            "fine_tuning_dropout": RECIPE["fine_tuning_dropout"],
            "schedule": RECIPE["schedule"],
        },
    }
    atomic_write_text(run_dir / "results.json", json.dumps(report, indent=1))
    record_if_requested(args, report)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
