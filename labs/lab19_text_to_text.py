"""Lab 19: text-to-text transfer — a T5-style encoder-decoder against an encoder of the same size.

Reproduces T5 (Raffel et al. 2020; textbook §20.10, J&M §11.4.1): one encoder-decoder,
pretrained by span corruption, then every task written as text in, text out —

    "trec question: How far is it from Denver to Aspen ?"  →  "numeric"
    "sst2 sentence: a charming and funny movie ."          →  "positive"
    "question: Where is Paris ? context: Paris is in …"    →  "France"

— scored with each task's own metric on the generated text (accuracy of label words, SQuAD
exact match and F1). The comparison the issue asks for: on TREC-6, the text-to-text model
against an encoder-only (BERT-style MLM, 80/10/10) model with the same parameter count,
pretrained on the same books with the same vocabulary for the same CPU minutes
(`kbert.train.plan_time_budget` times each on this machine), fine-tuned with a classification
head; and each beside a random initialisation of its own architecture, so the lab also shows
what pretraining is worth to each. Both pretrain with lab01's CPU-hour recipe
(`kbert.models.pretraining_models.RECIPE`): pre-LN blocks, no dropout while pretraining (T5.1.1
turned it off as well) and 0.1 again for fine-tuning, linear decay, and 40% masking for the MLM
(Wettig et al. 2023; `--mask-rate 0.15` is BERT's).

Steps, as cells below: a WordPiece vocabulary with T5's sentinels; the span-corrupted batches
(one printed); the two models sized to one parameter count; pretraining for the budget; what
the pretrained model writes for held-out sentinels; TREC-6 (and SST-2, SQuAD) fine-tuning and
scoring; the fine-tuned TREC-6 model exported with a `generate` signature (tokenizer, beam
search and detokenization in the graph) and reloaded, its answers checked against the Keras
model's.

What it should show: text-to-text fine-tuning works — the model writes valid label words and
its TREC-6 accuracy is that of a classifier; what pretraining adds at this small budget is
measured against the random starts, for both families. Report what you see. Fine-tuning on
a few hundred labels can end at the majority class (Mosbach et al. 2021), so each TREC-6 cell
counts its runs that landed there (`kbert.metrics.majority_class.at_majority`: predictions all
one class, or accuracy within a point of always answering the test's most frequent class),
beside that majority accuracy. SST-2 and SQuAD run the pretrained and the random
encoder-decoder at `--seeds` seeds too (seed i of both on the same training examples), at each
start's rate chosen on TREC-6 validation; the report pairs them seed by seed.

Where the span-corruption start does not beat its random init (docs/results.md#lab19_text_to_text),
`python -m benchmarks.text_to_text_start` measures why, checkpoint by checkpoint: whether the
decoder has learned the output format (sentinels, end token), whether its content predictions
beat the unigram baseline, whether they change when the encoder input is swapped for another
block's (does it read its source?), and how a model fine-tuned from each checkpoint, or from it
with the decoder re-initialised, does on TREC-6 (its section of docs/results.md). T5 pretrains
for 2^19 steps (not-measured); this budget buys a few thousand.

    python labs/lab19_text_to_text.py [--budget-minutes 10] [--record docs/results/lab19_text_to_text.json]

The last line is JSON: `text_to_text_trec_acc`, `encoder_trec_acc` (pretrained, mean over
seeds at the largest labelled size), `majority_accuracy` (TREC-6 test), `curve` (per start and
size: runs, `at_majority` per run, `runs_at_majority`), `other_tasks` (SST-2 / SQuAD per start:
each metric's mean and `_sd` over seeds, per-seed `runs`), `parameters`, `pretrain_seconds`,
and the rest.
"""

import argparse
import json
import shutil
import time
from pathlib import Path

import kbert.quiet  # noqa: F401  (TensorFlow's start-up lines filtered)

import keras
import numpy as np
import tensorflow as tf

from kbert.arguments import add_dropout_arguments, comma_separated
from kbert.data import (
    full_sentences_blocks,
    load_classification_task,
    load_squad,
    read_pretraining_books,
    span_corruption_blocks,
)
from kbert.data.pretraining_inputs import mask_capacity
from kbert.data.text_to_text import (
    LABEL_WORDS,
    classification_accuracy,
    classification_pairs,
    generate_texts,
    squad_pairs,
    squad_scores,
    text_to_text_dataset,
)
from kbert.export.saved_model_files import load_exported
from kbert.export.text_to_text_export import export_text_to_text
from kbert.metrics.majority_class import at_majority, majority_accuracy
from kbert.metrics.seed_comparison import over_seeds
from kbert.models import Encoder, EncoderDecoder, MaskedLanguageModel, SequenceClassifier
from kbert.models.pretraining_models import RECIPE, encoder_for_fine_tuning
from kbert.run_records import add_record_argument, code_version, record_if_requested
from kbert.tasks import evaluate_classifier
from kbert.text import BertPreprocessor, MaskedLMMasker, corpus_tokenizer
from kbert.text.seq2seq_noising import sentinel_tokens
from kbert.text.text_to_text_packing import texts_from_generated
from kbert.train import (
    LearningRateSchedule,
    ResumableBackup,
    TrainingSettings,
    count_batches,
    fine_tune_classifier,
    fine_tuning_optimizer,
    plan_time_budget,
)
from kbert.train.fused_adamw import FusedAdamW

# %% Settings (`--help` lists them).
parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--data-dir", default=None, help="default: KBERT_DATA_DIR, ../shared/data")
parser.add_argument("--run-dir", default="runs/lab19")
parser.add_argument("--export-dir", default="saved_models")
parser.add_argument("--budget-minutes", type=float, default=10.0, help="pretraining, per family")
parser.add_argument("--max-documents", type=int, default=0, help="0 = all books (smoke: 2)")
parser.add_argument("--vocabulary-size", type=int, default=8000)
parser.add_argument("--sentinels", type=int, default=32, help="<extra_id_N> tokens added")
parser.add_argument("--hidden-dim", type=int, default=256)
parser.add_argument("--num-heads", type=int, default=4)
parser.add_argument("--encoder-layers", type=int, default=4, help="the encoder-only model")
parser.add_argument("--t5-layers", type=int, default=2, help="encoder and decoder layers each")
parser.add_argument("--block-length", type=int, default=128)
parser.add_argument("--batch-size", type=int, default=32)
parser.add_argument("--steps-per-epoch", type=int, default=100, help="checkpoint interval")
parser.add_argument("--peak-learning-rate", type=float, default=1e-3)
add_dropout_arguments(parser)  # both families; random starts fine-tune at the same dropout
parser.add_argument(
    "--mask-rate",
    type=float,
    default=RECIPE["masked_mask_rate"],
    help="the encoder-only model's MLM: share of tokens masked (BERT: 0.15; the recipe's)",
)
parser.add_argument(
    "--sizes", type=comma_separated(int, minimum=1), default=[300, 1000], help="TREC-6 labels"
)
parser.add_argument("--seeds", type=int, default=3)
parser.add_argument(
    "--epochs", type=int, default=8, help="fine-tuning epochs, at least --min-steps"
)
parser.add_argument("--min-steps", type=int, default=150, help="fine-tuning steps at least")
parser.add_argument(
    "--learning-rates",
    type=comma_separated(float, minimum=0.0),
    default=[3e-4, 1e-3],
    help="fine-tuning peak rates, one chosen per start on TREC-6 validation",
)
parser.add_argument(
    "--tasks", type=comma_separated(str), default=["trec", "sst2", "squad"], help="text-to-text"
)
parser.add_argument("--extra-examples", type=int, default=2000, help="SST-2 / SQuAD training")
parser.add_argument("--eval-examples", type=int, default=500, help="SST-2 / SQuAD scored")
parser.add_argument(
    "--trec-eval-examples", type=int, default=0, help="TREC-6 validation/test questions (0: all)"
)
parser.add_argument("--num-beams", type=int, default=4, help="the exported generate signature")
parser.add_argument("--seed", type=int, default=0)
parser.add_argument("--verbose", type=int, default=2)
add_record_argument(parser)
args = parser.parse_args()
if set(args.tasks) - {"trec", "sst2", "squad"} or "trec" not in args.tasks:
    parser.error(f"--tasks must include trec and name only trec, sst2, squad; got {args.tasks}")
if args.seeds < 1 or args.budget_minutes <= 0:
    parser.error("--seeds must be >= 1 and --budget-minutes > 0")
run_dir = Path(args.run_dir)
run_dir.mkdir(parents=True, exist_ok=True)
keras.utils.set_random_seed(args.seed)
started = time.perf_counter()

# %% Corpus and vocabulary: lab01's books and WordPiece size, plus T5's sentinel tokens.
books = {
    "train": read_pretraining_books("train", args.data_dir, args.max_documents),
    "valid": read_pretraining_books("valid", args.data_dir, 1 if args.max_documents else 0),
}
tokenizer = corpus_tokenizer(
    books["train"], args.vocabulary_size, run_dir / "vocab.txt", sentinel_tokens(args.sentinels)
)
vocabulary_size = tokenizer.vocabulary_size()
sentinel_ids = [tokenizer.token_to_id(token) for token in sentinel_tokens(args.sentinels)]
end_id = tokenizer.sep_token_id
print(f"vocabulary: {vocabulary_size} tokens ({args.sentinels} sentinels), end token [SEP]")

# %% Span corruption: 15% of each block in spans of mean length 3, each span one sentinel.
span_batches = {
    split: span_corruption_blocks(
        books[split],
        tokenizer,
        args.block_length,
        args.batch_size,
        sentinel_ids,
        shuffle=split == "train",
        seed=args.seed,
        drop_remainder=split == "train",
    )
    for split in ("train", "valid")
}
x, y = next(iter(span_batches["valid"]))
show = lambda ids: tokenizer.detokenize(ids).numpy().decode()  # noqa: E731
print("encoder reads: ", show(x["encoder_token_ids"][0])[:300])
print("decoder writes:", show(y[0]))


# %% Two model families at one parameter count: T5's encoder-decoder and BERT's encoder.
# Both follow lab01's CPU-hour recipe (`kbert.models.pretraining_models.RECIPE`): pre-LN (T5's
# blocks are pre-norm already), no dropout while pretraining, back to `--fine-tuning-dropout`
# for fine-tuning.
def encoder_only(dropout):
    return Encoder.from_preset(
        "tiny",
        vocabulary_size=vocabulary_size,
        num_layers=args.encoder_layers,
        hidden_dim=args.hidden_dim,
        num_heads=args.num_heads,
        intermediate_dim=4 * args.hidden_dim,
        max_sequence_length=args.block_length,
        num_segments=2,
        norm_first=RECIPE["layer_norm"] == "pre",
        dropout=dropout,
        attention_dropout=dropout,
        skip_padding=False,
    )


def encoder_decoder(intermediate_dim, dropout):
    model = EncoderDecoder(
        vocabulary_size=vocabulary_size,
        hidden_dim=args.hidden_dim,
        num_heads=args.num_heads,
        intermediate_dim=intermediate_dim,
        num_encoder_layers=args.t5_layers,
        num_decoder_layers=args.t5_layers,
        dropout=dropout,
    )
    model.ensure_built()  # weights exist before `fit` (checkpoints, parameter counts)
    return model


def encoder_decoder_for_fine_tuning(model):
    """The pretrained encoder-decoder with the fine-tuning dropout (same weights)."""
    copy = encoder_decoder(t5_intermediate, args.fine_tuning_dropout)
    copy.set_weights(model.get_weights())
    return copy


# The encoder-decoder's size grows by 2 × hidden × layers weights per feed-forward unit: choose
# the feed-forward width (a multiple of 64) that matches the encoder's parameter count.
target = encoder_only(args.fine_tuning_dropout).count_params()
base = encoder_decoder(64, args.fine_tuning_dropout).count_params()
per_unit = 2 * args.hidden_dim * 2 * args.t5_layers
t5_intermediate = max(64, 64 * round((64 + (target - base) / per_unit) / 64))
parameters = {
    "encoder": target,
    "encoder_decoder": encoder_decoder(t5_intermediate, args.fine_tuning_dropout).count_params(),
    "encoder_decoder_intermediate_dim": t5_intermediate,
}
print(f"parameters: {parameters}")


# %% Pretraining for the same CPU minutes: plan (timed here), then fit with checkpoints.
def compile_for(model, total_steps):
    schedule = LearningRateSchedule(
        f"warmup_{RECIPE['schedule']}_decay",
        peak_learning_rate=args.peak_learning_rate,
        total_steps=total_steps,
        warmup_steps=min(200, total_steps),
    )
    model.compile(optimizer=FusedAdamW(schedule, weight_decay=0.01, global_clipnorm=1.0))
    return model


masker = MaskedLMMasker(
    vocabulary_size,
    tokenizer.mask_token_id,
    [tokenizer.token_to_id(t) for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]")] + sentinel_ids,
    max_selections=mask_capacity(args.block_length, args.mask_rate),
    selection_rate=args.mask_rate,
    seed=args.seed,
)
mlm_batches = {
    split: full_sentences_blocks(
        books[split],
        tokenizer,
        args.block_length,
        args.batch_size,
        shuffle=split == "train",
        seed=args.seed,
        map_fn=lambda batch: {**batch, **masker(batch["token_ids"], batch["padding_mask"])},
        drop_remainder=split == "train",
    )
    for split in ("train", "valid")
}
families = {
    "encoder_decoder": (
        lambda: encoder_decoder(t5_intermediate, args.dropout),
        span_batches,
        encoder_decoder_for_fine_tuning,
    ),
    "encoder": (
        lambda: MaskedLanguageModel(encoder_only(args.dropout)),
        mlm_batches,
        lambda model: encoder_for_fine_tuning(model.encoder, args.fine_tuning_dropout),
    ),
}
pretrained, pretraining = {}, {}
for family, (build, batches, kept) in families.items():
    family_dir = run_dir / family
    saved = family_dir / "pretrained.keras"
    # A family begun by this code (the same commit) resumes, or is not trained again once
    # finished; one begun by other code is trained anew, so the record's commit names the code
    # that pretrained it.
    code, stamp = code_version(), family_dir / "code.json"
    same_code = code["commit"] and stamp.exists()
    if family_dir.exists() and not (same_code and json.loads(stamp.read_text()) == code):
        shutil.rmtree(family_dir)
    family_dir.mkdir(parents=True, exist_ok=True)
    stamp.write_text(json.dumps(code))
    if saved.exists():
        pretrained[family] = keras.models.load_model(saved)
        pretraining[family] = json.loads((family_dir / "pretraining.json").read_text())
        continue
    train = batches["train"].repeat()
    plan = plan_time_budget(
        compile_for(build(), 1000),
        train,
        args.budget_minutes,
        args.steps_per_epoch,
        path=family_dir / "plan.json",
    )
    print(f"{family}: {plan['seconds_per_step']:.3f} s/step → {plan['steps']} steps", flush=True)
    model = compile_for(build(), plan["steps"])
    start = time.perf_counter()
    model.fit(
        train,
        epochs=plan["epochs"],
        steps_per_epoch=args.steps_per_epoch,
        validation_data=batches["valid"],
        validation_steps=10,
        callbacks=[ResumableBackup(family_dir / "backup")],
        verbose=args.verbose,
    )
    seconds = time.perf_counter() - start
    held_out = model.evaluate(batches["valid"], return_dict=True, verbose=0)
    pretraining[family] = {
        "steps": plan["steps"],
        "seconds": round(seconds, 1),
        "held_out": {key: round(float(value), 4) for key, value in held_out.items()},
    }
    pretrained[family] = kept(model)
    pretrained[family].save(saved)
    (family_dir / "pretraining.json").write_text(json.dumps(pretraining[family]))
print(json.dumps(pretraining))

# %% What the pretrained encoder-decoder writes for held-out sentinels (greedy).
t5 = pretrained["encoder_decoder"]
written = texts_from_generated(
    tokenizer, t5.generate(np.asarray(x["encoder_token_ids"][:3]), 24, end_id=end_id), end_id
)
span_samples = [
    {
        "reads": show(x["encoder_token_ids"][i])[:200],
        "truth": show(y[i][:-1]),  # without the end token
        "writes": text.decode(),
    }
    for i, text in enumerate(written.numpy())
]
for sample in span_samples:
    print(json.dumps(sample))

# %% TREC-6: 300 and 1,000 labelled questions × seeds, from each start, one recipe per family.
trec = {
    split: load_classification_task("trec", split, data_dir=args.data_dir)
    for split in ("train", "validation", "test")
}
if args.trec_eval_examples:  # smoke runs
    for split in ("validation", "test"):
        trec[split] = trec[split].subset(np.arange(min(args.trec_eval_examples, len(trec[split]))))
# Always answering the most frequent test class: the floor each cell's runs are counted against.
majority = round(majority_accuracy(trec["test"].labels), 4)


def fresh(family, start, seed):
    """A new copy of a start: the pretrained weights, or a random init of the same shape drawn
    from `seed` (Keras draws each initializer's seed when the layer is built)."""
    keras.utils.set_random_seed(seed)
    if start == "pretrained":
        source = run_dir / family / "pretrained.keras"
        return keras.models.load_model(source)
    if family == "encoder_decoder":
        return encoder_decoder(t5_intermediate, args.fine_tuning_dropout)
    return encoder_only(args.fine_tuning_dropout)


def fine_tune_text_to_text(model, inputs, targets, learning_rate, seed, target_length=8):
    keras.utils.set_random_seed(seed)
    batches = text_to_text_dataset(
        inputs, targets, tokenizer, args.batch_size, target_length=target_length, seed=seed
    )
    epochs = max(args.epochs, -(-args.min_steps // count_batches(batches)))
    model.compile(optimizer=fine_tuning_optimizer(count_batches(batches) * epochs, learning_rate))
    model.fit(batches, epochs=epochs, verbose=0)
    return model


def generated_classes(generated, examples):
    """Class ids of generated TREC-6 label words, each text normalized as
    `classification_accuracy` does; a text that is no label word gets the id one past the last
    class, which no gold label has (wrong, as `classification_accuracy` scores it)."""
    names = examples.label_names.names
    ids = {LABEL_WORDS["trec"][name]: index for index, name in enumerate(names)}
    return [ids.get(" ".join(text.lower().split()), len(names)) for text in generated]


def trec_accuracy(family, model, examples):
    """`({"accuracy", "invalid", "predictions"}, generated)`: the scores of `model` on
    `examples`, its predicted class ids, and the generated texts (None for the encoder)."""
    if family == "encoder_decoder":
        inputs, _ = classification_pairs("trec", examples)
        generated = generate_texts(model, tokenizer, inputs, max_new_tokens=6)
        scores = classification_accuracy("trec", generated, examples)
        return {**scores, "predictions": generated_classes(generated, examples)}, generated
    report = evaluate_classifier(model, trec_preprocessor, examples)
    scores = {"accuracy": report["accuracy"], "invalid": 0.0}
    return {**scores, "predictions": report["predictions"]}, None


trec_preprocessor = BertPreprocessor(tokenizer, sequence_length=64)


def run_trec(family, start, examples, learning_rate, seed, evaluate_on):
    model = fresh(family, start, seed)
    if family == "encoder_decoder":
        inputs, targets = classification_pairs("trec", examples)
        model = fine_tune_text_to_text(model, inputs, targets, learning_rate, seed)
    else:
        keras.utils.set_random_seed(seed)
        model = SequenceClassifier(model, len(LABEL_WORDS["trec"]), pooling="mean")
        steps_per_epoch = -(-len(examples) // args.batch_size)
        fine_tune_classifier(
            model,
            trec_preprocessor,
            examples,
            settings=TrainingSettings(
                epochs=max(args.epochs, -(-args.min_steps // steps_per_epoch)),
                batch_size=args.batch_size,
                learning_rate=learning_rate,
                seed=seed,
                verbose=0,
            ),
        )
    return model, {name: trec_accuracy(family, model, trec[name]) for name in evaluate_on}


def labelled(size, seed):
    rows = np.random.default_rng(seed).permutation(len(trec["train"]))[:size]
    return trec["train"].subset(rows)


def curve_cell(runs, invalid, landed):
    """One start's record at one labelled size: test accuracy per seed with mean ± sd, the mean
    share of outputs that are no label word, and whether each run landed at the majority class
    (`landed`, list of bool in seed order) with their count."""
    return {
        "mean": round(float(np.mean(runs)), 4),
        "sd": round(float(np.std(runs, ddof=1)), 4) if len(runs) > 1 else 0.0,
        "runs": [round(r, 4) for r in runs],
        "invalid": round(float(np.mean(invalid)), 4),
        "at_majority": landed,
        "runs_at_majority": sum(landed),
    }


starts = [(f, s) for f in families for s in ("pretrained", "random")]
chosen_rates, curve, trec_samples = {}, {}, {}
for family, start in starts:
    name = f"{family}_{start}"
    # The peak rate: chosen on the validation questions at the largest size, seed 0.
    if len(args.learning_rates) == 1:  # nothing to choose: no validation runs
        chosen_rates[name] = args.learning_rates[0]
        print(f"{name}: the one learning rate given, {chosen_rates[name]}", flush=True)
    else:
        scores, labels = {}, labelled(max(args.sizes), 0)
        for rate in args.learning_rates:
            _, result = run_trec(family, start, labels, rate, 0, ["validation"])
            scores[rate] = result["validation"][0]["accuracy"]
        chosen_rates[name] = max(scores, key=scores.get)
        print(f"{name}: validation accuracy per rate {scores} → {chosen_rates[name]}", flush=True)
    curve[name] = {}
    for size in args.sizes:
        runs, invalid, landed = [], [], []
        for seed in range(args.seeds):
            model, result = run_trec(
                family, start, labelled(size, seed), chosen_rates[name], seed, ["test"]
            )
            (scores_, generated) = result["test"]
            runs.append(scores_["accuracy"])
            invalid.append(scores_["invalid"])
            landed.append(bool(at_majority(scores_["predictions"], trec["test"].labels)))
            if generated is not None and size == max(args.sizes) and seed == 0:
                trec_samples[name] = list(zip(trec["test"].texts[:5], generated[:5], strict=True))
                if start == "pretrained":
                    trec_model = model
        curve[name][str(size)] = curve_cell(runs, invalid, landed)
        print(f"{name} at {size} labels: {curve[name][str(size)]}", flush=True)


# %% SST-2 and SQuAD as text to text: pretrained and random encoder-decoder, `--seeds` seeds
# each (seed i of both starts trains on the same examples in the same order), each at its
# start's peak rate chosen on TREC-6 validation above.
def other_task_row(per_seed, metrics, extra=None):
    """A start's scores on one task: each metric's mean and sd over seeds, and the per-seed
    values under `runs` (what the report pairs seed by seed)."""
    row = over_seeds(per_seed, metrics, digits=4)
    row["runs"] = {metric: [round(run[metric], 4) for run in per_seed] for metric in metrics}
    return {**row, **(extra or {})}


def fine_tune_squad(start, inputs, targets, seed):
    model = fresh("encoder_decoder", start, seed)
    keras.utils.set_random_seed(seed)
    batches = text_to_text_dataset(
        inputs, targets, tokenizer, args.batch_size, source_length=192, target_length=16, seed=seed
    )
    epochs = max(min(3, args.epochs), -(-args.min_steps // count_batches(batches)))
    rate = chosen_rates[f"encoder_decoder_{start}"]
    model.compile(optimizer=fine_tuning_optimizer(count_batches(batches) * epochs, rate))
    model.fit(batches, epochs=epochs, verbose=0)
    return model


other_tasks = {}
if "sst2" in args.tasks:
    sst2_pool = load_classification_task("sst2", "train", data_dir=args.data_dir)
    sst2_test = load_classification_task("sst2", "test", data_dir=args.data_dir)
    sst2_test = sst2_test.subset(np.arange(min(args.eval_examples, len(sst2_test))))
    test_inputs, _ = classification_pairs("sst2", sst2_test)
    for start in ("pretrained", "random"):
        per_seed = []
        for seed in range(args.seeds):
            # As TREC-6's `labelled`: seed i draws the i-th sample of training sentences.
            rows = np.random.default_rng(seed).permutation(len(sst2_pool))[: args.extra_examples]
            inputs, targets = classification_pairs("sst2", sst2_pool.subset(rows))
            model = fine_tune_text_to_text(
                fresh("encoder_decoder", start, seed),
                inputs,
                targets,
                chosen_rates[f"encoder_decoder_{start}"],
                seed,
            )
            generated = generate_texts(model, tokenizer, test_inputs, max_new_tokens=4)
            per_seed.append(classification_accuracy("sst2", generated, sst2_test))
        other_tasks[f"sst2_{start}"] = other_task_row(per_seed, ["accuracy", "invalid"])
        print(f"SST-2 {start}: {other_tasks[f'sst2_{start}']}", flush=True)
if "squad" in args.tasks:
    squad_train, squad_source = load_squad("train", data_dir=args.data_dir)
    squad_test, _ = load_squad("validation", data_dir=args.data_dir)
    squad_train, squad_test = squad_train[: args.extra_examples], squad_test[: args.eval_examples]
    inputs, targets = squad_pairs(squad_train)
    test_inputs, _ = squad_pairs(squad_test)
    for start in ("pretrained", "random"):
        per_seed = []
        for seed in range(args.seeds):  # the same questions; the seed draws init and order
            model = fine_tune_squad(start, inputs, targets, seed)
            generated = generate_texts(model, tokenizer, test_inputs, 16, source_length=192)
            per_seed.append(squad_scores(generated, squad_test))
        other_tasks[f"squad_{start}"] = other_task_row(
            per_seed,
            ["exact_match", "f1"],
            {
                "split": squad_source,
                "train_questions": len(squad_train),
                "test_questions": len(squad_test),
            },
        )
        print(f"SQuAD {start}: {other_tasks[f'squad_{start}']}", flush=True)

# %% Serving: the fine-tuned TREC-6 model with tokenizer, beam search and detokenization in the
# graph; reloaded, it must answer exactly as the Keras model does.
questions = trec["test"].texts[:16]
inputs, _ = classification_pairs("trec", trec["test"].subset(np.arange(16)))
export_path = export_text_to_text(
    trec_model,
    tokenizer,
    args.export_dir,
    "trec_text_to_text",
    max_new_tokens=6,
    num_beams=args.num_beams,
)
served = load_exported(export_path).signatures["generate"](text=tf.constant(inputs))
served = [text.decode() for text in served["text"].numpy()]
keras_beam = generate_texts(
    trec_model, tokenizer, inputs, 6, strategy="beam", num_beams=args.num_beams
)
export = {
    "path": export_path,
    "num_beams": args.num_beams,
    "served_equals_keras": served == keras_beam,
    "examples": list(zip(questions[:5], served[:5], strict=True)),
}
print(f"export: {json.dumps(export)}")

# %% Results: the table, then the last line.
largest = str(max(args.sizes))
print(
    f"\nTREC-6 test accuracy (mean ± sd of {args.seeds} seeds, then how many of them landed at "
    f"the majority class; majority class {majority:.3f})"
)
print(f"{'start':<28}" + "".join(f"{size:>27}" for size in args.sizes))
for name, row in curve.items():
    cells = "".join(
        f"{row[str(s)]['mean']:>10.3f} ± {row[str(s)]['sd']:.3f} "
        f"({row[str(s)]['runs_at_majority']} of {args.seeds})"
        for s in args.sizes
    )
    print(f"{name:<28}{cells}")
report = {
    "text_to_text_trec_acc": curve["encoder_decoder_pretrained"][largest]["mean"],
    "encoder_trec_acc": curve["encoder_pretrained"][largest]["mean"],
    "random_text_to_text_trec_acc": curve["encoder_decoder_random"][largest]["mean"],
    "random_encoder_trec_acc": curve["encoder_random"][largest]["mean"],
    "labelled": int(largest),
    "seeds": args.seeds,
    "majority_accuracy": majority,
    "parameters": parameters,
    "pretrain_seconds": {family: p["seconds"] for family, p in pretraining.items()},
    "pretraining": pretraining,
    "budget_minutes": args.budget_minutes,
    "learning_rates": chosen_rates,
    "curve": curve,
    "other_tasks": other_tasks,
    "span_samples": span_samples,
    "trec_samples": trec_samples,
    "export": export,
    "wall_seconds": round(time.perf_counter() - started, 1),
}
record_if_requested(args, report)
print(json.dumps(report))
