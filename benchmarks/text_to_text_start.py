"""What does lab19's span-corruption pretraining give a fine-tuned model? Evidence per checkpoint.

`labs/lab19_text_to_text.py` compares its pretrained T5-style model on TREC-6 with a random init
of the same shape; in its record of 2026-11-26 (before the CPU-hour recipe) pretraining did not
just fail to help, it hurt. This benchmark repeats lab19's pretraining (same sizes, corpus,
vocabulary rule, optimizer, and lab01's CPU-hour recipe: no dropout while pretraining, 0.1 for
fine-tuning, linear decay) and keeps checkpoints along the way; for each checkpoint (step 0 is
the random init) it measures:

- **what span corruption has learnt**: held-out token accuracy split into the tokens the format
  gives away (sentinels, the end token) and the hidden content tokens, beside the content
  accuracy of always writing the most frequent content token (the unigram plateau);
- **whether the decoder reads its source**: held-out loss on content tokens with each block's
  own encoder input, and with the encoder inputs of other blocks (rolled by one in the batch).
  A model that ignores its encoder scores both the same;
- **where the harm sits**: the last checkpoint fine-tuned again with its decoder stack put back
  to the random init (the pretrained encoder and shared embedding kept);
- **how it fine-tunes**: TREC-6 as text to text (lab19's recipe: 1,000 labelled questions,
  max(8 epochs, 150 steps), AdamW warmup + linear decay) at each peak rate of `--rates`; validation
  accuracy of the generated label words, the share of the most generated label, and the same
  source test on the fine-tuned model's label tokens.

    python -m benchmarks.text_to_text_start [--steps 1500] [--checkpoints 0,300,1500] \\
        [--record docs/results/text_to_text_start.json]

The last line is JSON: per checkpoint `span_corruption` (accuracies and losses) and `trec`
(rate → validation accuracy, majority share, source dependence), `decoder_reset` (the last
checkpoint with a random decoder: `trec` per rate), and the settings.
"""

import argparse
import json
import time
from pathlib import Path

import kbert.quiet  # noqa: F401  (TensorFlow's start-up lines filtered)

import keras
import numpy as np

from kbert.arguments import comma_separated
from kbert.data import (
    load_classification_task,
    read_pretraining_books,
    span_corruption_blocks,
)
from kbert.data.text_to_text import (
    classification_accuracy,
    classification_pairs,
    generate_texts,
    text_to_text_dataset,
)
from kbert.models import EncoderDecoder
from kbert.models.pretraining_models import RECIPE
from kbert.run_records import add_record_argument, code_version, record_if_requested
from kbert.text import corpus_tokenizer
from kbert.text.seq2seq_noising import sentinel_tokens
from kbert.train import LearningRateSchedule, count_batches, fine_tuning_optimizer
from kbert.train.fused_adamw import FusedAdamW

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--data-dir", default=None, help="default: KBERT_DATA_DIR, ../shared/data")
parser.add_argument("--run-dir", default="runs/text_to_text_start")
parser.add_argument("--max-documents", type=int, default=0, help="0 = all books (smoke: 2)")
parser.add_argument("--steps", type=int, default=1500, help="pretraining steps (lab19's 10 min)")
parser.add_argument(
    "--checkpoints",
    type=comma_separated(int, minimum=0),
    default=[0, 300, 1500],
    help="steps whose weights are measured (0 = the random init)",
)
parser.add_argument("--rates", type=comma_separated(float, minimum=0.0), default=[3e-4, 1e-3, 3e-3])
parser.add_argument("--labelled", type=int, default=1000, help="TREC-6 training questions")
parser.add_argument("--held-out-batches", type=int, default=10)
parser.add_argument("--vocabulary-size", type=int, default=8000)
parser.add_argument("--sentinels", type=int, default=32)
parser.add_argument("--hidden-dim", type=int, default=256)
parser.add_argument("--num-heads", type=int, default=4)
parser.add_argument("--layers", type=int, default=2, help="encoder and decoder layers each")
parser.add_argument("--intermediate-dim", type=int, default=832, help="lab19's matched width")
parser.add_argument("--block-length", type=int, default=128)
parser.add_argument("--batch-size", type=int, default=32)
parser.add_argument("--peak-learning-rate", type=float, default=1e-3)
parser.add_argument("--epochs", type=int, default=8)
parser.add_argument("--min-steps", type=int, default=150)
parser.add_argument("--seed", type=int, default=0)
add_record_argument(parser)
args = parser.parse_args()
if max(args.checkpoints) > args.steps:
    parser.error(f"--checkpoints must be <= --steps ({args.steps}); got {args.checkpoints}")
run_dir = Path(args.run_dir)
# Checkpoints and a tokenizer kept by this code (the same commit) are reused; any made by other
# code are made anew, so the record names the code behind them.
code, stamp = code_version(), run_dir / "code.json"
same_code = code["commit"] and stamp.exists()
if run_dir.exists() and not (same_code and json.loads(stamp.read_text()) == code):
    for kept in [*run_dir.glob("step_*.weights.h5"), run_dir / "vocab.txt"]:
        kept.unlink(missing_ok=True)
    (run_dir / "pretraining.json").unlink(missing_ok=True)
run_dir.mkdir(parents=True, exist_ok=True)
stamp.write_text(json.dumps(code))
keras.utils.set_random_seed(args.seed)
started = time.perf_counter()

# %% lab19's corpus, vocabulary (WordPiece on the books' lines, then T5's sentinels) and batches.
books = {
    "train": read_pretraining_books("train", args.data_dir, args.max_documents),
    "valid": read_pretraining_books("valid", args.data_dir, 1 if args.max_documents else 0),
}
tokenizer = corpus_tokenizer(
    books["train"], args.vocabulary_size, run_dir / "vocab.txt", sentinel_tokens(args.sentinels)
)
sentinel_ids = [tokenizer.token_to_id(token) for token in sentinel_tokens(args.sentinels)]
format_ids = np.asarray(sentinel_ids + [tokenizer.sep_token_id])
batches = {
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


def new_model(dropout=RECIPE["fine_tuning_dropout"]):
    """lab19's encoder-decoder; fine-tuned at the recipe's fine-tuning dropout by default."""
    model = EncoderDecoder(
        vocabulary_size=tokenizer.vocabulary_size(),
        hidden_dim=args.hidden_dim,
        num_heads=args.num_heads,
        intermediate_dim=args.intermediate_dim,
        num_encoder_layers=args.layers,
        num_decoder_layers=args.layers,
        dropout=dropout,
    )
    model.ensure_built()
    return model


def checkpoint_path(step):
    return run_dir / f"step_{step}.weights.h5"


# %% Pretraining with lab19's optimizer and schedule, weights kept at each checkpoint step.
class KeepCheckpoints(keras.callbacks.Callback):
    def on_train_batch_end(self, batch, logs=None):
        step = int(self.model.optimizer.iterations.numpy())
        if step in args.checkpoints and not checkpoint_path(step).exists():
            self.model.save_weights(checkpoint_path(step))


pretrain_seconds = None
if not all(checkpoint_path(step).exists() for step in args.checkpoints):
    model = new_model(RECIPE["dropout"])  # pretraining without dropout, as lab19's
    model.save_weights(checkpoint_path(0))
    schedule = LearningRateSchedule(
        f"warmup_{RECIPE['schedule']}_decay",
        peak_learning_rate=args.peak_learning_rate,
        total_steps=args.steps,
        warmup_steps=min(200, args.steps),
    )
    model.compile(optimizer=FusedAdamW(schedule, weight_decay=0.01, global_clipnorm=1.0))
    start = time.perf_counter()
    if args.steps:
        model.fit(
            batches["train"].repeat(),
            epochs=1,
            steps_per_epoch=args.steps,
            callbacks=[KeepCheckpoints()],
            verbose=2,
        )
    pretrain_seconds = round(time.perf_counter() - start, 1)
    (run_dir / "pretraining.json").write_text(json.dumps({"seconds": pretrain_seconds}))
elif (run_dir / "pretraining.json").exists():  # checkpoints kept from an earlier run
    pretrain_seconds = json.loads((run_dir / "pretraining.json").read_text())["seconds"]

# %% Held-out span corruption: format tokens vs content tokens, with own and others' sources.
held_out = list(batches["valid"].take(args.held_out_batches))
train_targets = np.concatenate([np.asarray(y) for _, y in batches["train"].take(50)]).ravel()
content = train_targets[~np.isin(train_targets, format_ids) & (train_targets >= 0)]
most_frequent = int(np.bincount(content).argmax())


def token_losses(model, x, y):
    """(per-token negative log-likelihood, per-token correct), both `(batch, target)`."""
    logits = np.asarray(model(x, training=False), "float64")
    logits -= logits.max(-1, keepdims=True)
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    y = np.asarray(y)
    safe = np.maximum(y, 0)
    nll = -np.take_along_axis(log_probs, safe[..., None], -1)[..., 0]
    return nll, logits.argmax(-1) == safe


def rolled(x):
    """The same batch with every row's encoder input taken from the next row."""
    return {
        **x,
        "encoder_token_ids": np.roll(np.asarray(x["encoder_token_ids"]), 1, axis=0),
        "encoder_padding_mask": np.roll(np.asarray(x["encoder_padding_mask"]), 1, axis=0),
    }


def span_corruption_scores(model):
    sums = {key: [] for key in ("format_correct", "content_correct", "content_nll", "rolled_nll")}
    unigram = []
    for x, y in held_out:
        y = np.asarray(y)
        scored = y >= 0
        is_format = np.isin(y, format_ids) & scored
        is_content = ~np.isin(y, format_ids) & scored
        nll, correct = token_losses(model, x, y)
        rolled_nll, _ = token_losses(model, rolled(x), y)
        sums["format_correct"].append(correct[is_format])
        sums["content_correct"].append(correct[is_content])
        sums["content_nll"].append(nll[is_content])
        sums["rolled_nll"].append(rolled_nll[is_content])
        unigram.append(y[is_content] == most_frequent)
    mean = {key: float(np.mean(np.concatenate(values))) for key, values in sums.items()}
    return {
        "format_token_accuracy": round(mean["format_correct"], 4),
        "content_token_accuracy": round(mean["content_correct"], 4),
        "unigram_content_accuracy": round(float(np.mean(np.concatenate(unigram))), 4),
        "content_loss": round(mean["content_nll"], 4),
        "content_loss_other_sources": round(mean["rolled_nll"], 4),
        "source_gain_nats": round(mean["rolled_nll"] - mean["content_nll"], 4),
    }


# %% TREC-6 as text to text, lab19's recipe, from each checkpoint at each rate.
trec_train = load_classification_task("trec", "train", data_dir=args.data_dir)
trec_valid = load_classification_task("trec", "validation", data_dir=args.data_dir)
rows = np.random.default_rng(0).permutation(len(trec_train))[: args.labelled]
train_inputs, train_targets_text = classification_pairs("trec", trec_train.subset(rows))
valid_inputs, valid_targets_text = classification_pairs("trec", trec_valid)
valid_batches = list(
    text_to_text_dataset(
        valid_inputs, valid_targets_text, tokenizer, 64, target_length=8, shuffle=False
    )
)


def label_source_gain(model):
    """Loss on the label words with other questions as sources, minus with their own (nats)."""
    own, other = [], []
    for x, y in valid_batches:
        scored = np.asarray(y) >= 0
        nll, _ = token_losses(model, x, y)
        rolled_nll, _ = token_losses(model, rolled(x), y)
        own.append(nll[scored])
        other.append(rolled_nll[scored])
    return float(np.mean(np.concatenate(other)) - np.mean(np.concatenate(own)))


def start_model(step, random_decoder=False):
    """The checkpoint's weights; with `random_decoder`, its decoder stack (blocks, position
    bias, final norm) put back to the random init of step 0, the shared embedding and the
    encoder kept: is what hurts in the pretrained decoder?"""
    model = new_model()
    model.load_weights(checkpoint_path(step))
    if random_decoder:
        initial = new_model()
        initial.load_weights(checkpoint_path(0))
        for variable, start in zip(model.weights, initial.weights, strict=True):
            # Paths such as "encoder_decoder/decoder_0_cross_attention/query/kernel": the
            # decoder's own layers are the path parts named decoder_* (not the model's name).
            if any(part.startswith("decoder_") for part in variable.path.split("/")):
                variable.assign(start)
    return model


def fine_tune(step, rate, random_decoder=False):
    keras.utils.set_random_seed(args.seed)
    model = start_model(step, random_decoder)
    train = text_to_text_dataset(
        train_inputs,
        train_targets_text,
        tokenizer,
        args.batch_size,
        target_length=8,
        seed=args.seed,
    )
    epochs = max(args.epochs, -(-args.min_steps // count_batches(train)))
    model.compile(optimizer=fine_tuning_optimizer(count_batches(train) * epochs, rate))
    history = model.fit(train, epochs=epochs, verbose=0)
    generated = generate_texts(model, tokenizer, valid_inputs, max_new_tokens=6)
    scores = classification_accuracy("trec", generated, trec_valid)
    _, counts = np.unique(generated, return_counts=True)
    return {
        "validation_accuracy": round(scores["accuracy"], 4),
        "invalid": round(scores["invalid"], 4),
        "most_generated_share": round(float(counts.max() / counts.sum()), 4),
        "final_train_loss": round(float(history.history["loss"][-1]), 4),
        "label_source_gain_nats": round(label_source_gain(model), 4),
    }


results, decoder_reset = {}, {}
for step in args.checkpoints:
    results[str(step)] = {"span_corruption": span_corruption_scores(start_model(step)), "trec": {}}
    print(f"step {step}: {json.dumps(results[str(step)]['span_corruption'])}", flush=True)
    for rate in args.rates:
        results[str(step)]["trec"][str(rate)] = fine_tune(step, rate)
        print(f"step {step}, rate {rate}: {results[str(step)]['trec'][str(rate)]}", flush=True)
# The last checkpoint again, its decoder re-initialised: the pretrained encoder alone.
last = max(args.checkpoints)
if last > 0:
    decoder_reset[str(last)] = {"trec": {}}
    for rate in args.rates:
        decoder_reset[str(last)]["trec"][str(rate)] = fine_tune(last, rate, random_decoder=True)
        print(
            f"step {last} with a random decoder, rate {rate}: {decoder_reset[str(last)]['trec'][str(rate)]}",
            flush=True,
        )

# %% The table, then the last line.
majority = float(np.bincount(trec_valid.labels).max() / len(trec_valid.labels))
print(f"\nTREC-6 validation accuracy by pretraining step and rate (majority class {majority:.3f})")
print(
    f"{'step':>6} {'content acc':>12} {'source gain':>12}" + "".join(f"{r:>10}" for r in args.rates)
)
for step, row in results.items():
    cells = "".join(f"{row['trec'][str(r)]['validation_accuracy']:>10.3f}" for r in args.rates)
    span = row["span_corruption"]
    print(
        f"{step:>6} {span['content_token_accuracy']:>12.3f} {span['source_gain_nats']:>12.3f}{cells}"
    )
report = {
    "checkpoints": results,
    "decoder_reset": decoder_reset,
    "steps": args.steps,
    "pretrain_seconds": pretrain_seconds,
    "most_frequent_content_token": tokenizer.id_to_token(most_frequent),
    "majority_class_validation": round(majority, 4),
    "labelled": args.labelled,
    "rates": args.rates,
    "wall_seconds": round(time.perf_counter() - started, 1),
}
record_if_requested(args, report)
print(json.dumps(report))
