"""Lab 9: dialog generation as transfer — TransferTransfo on PERSONA-CHAT (tutorial hands-on 5.C).

Reproduces hands-on 5.C of the NAACL 2019 tutorial "Transfer Learning in NLP" (Wolf et al.
2019, TransferTransfo, the ConvAI2 winner): a pretrained causal LM becomes a chit-chat agent
that stays in character. Each training sequence is the bot's persona, the last utterances of
the dialog and a candidate reply, built as the slides show:

    <bos> persona … <speaker1> partner <speaker2> bot … <speaker2> reply <eos>

with the five delimiter and speaker tokens added to the vocabulary (`grow_vocabulary`) and
segment (speaker) embeddings added to the encoder (`add_segment_embeddings`, zero-initialised).
`kbert.models.DialogModel` trains two heads on it: the LM loss on the gold reply's tokens (×2)
and a next-utterance classifier that must pick the gold reply among a distractor drawn from
another dialog (×1). The same recipe runs from lab01's pretrained causal model and from a
randomly initialised copy of it, at three seeds each (`--seeds`; a seed draws the random start's
weights, the heads' and the data order): transfer, shown again on generation, as the
seed-paired difference of the two starts (`kbert.metrics.seed_comparison`). Each start has its
own peak rate, chosen on validation (`kbert.train.rate_on_validation`): the first seed tries
each of `--learning-rates`, the gold replies' perplexity on validation dialogs (a tenth of the
training split's personas, held out of training) chooses, and the other seeds train at it; a
random start usually wants a higher rate than a pretrained one, and one shared rate would
favour one of them.

Data: the ConvAI2 validation split of PERSONA-CHAT (`../shared/data/personachat/`, 1,000
dialogs; the training split cannot be had here), split by persona: 90% to train, 10% held out,
so held-out personas were never seen. By default a third of the training dialogs train
(`--train-dialogs 300`; 0 takes all of them), which keeps three seeds of both starts within
the course's time. Measured on the held-out dialogs: perplexity of the gold
replies' tokens, and Hits@1 — how often the gold reply scores highest among 20 candidates (19
distractors, as ConvAI2 ranks). Then replies sampled with nucleus sampling (top-p 0.9) for
held-out personas; `--chat` talks with the trained model in the terminal.

What it should show: the pretrained start reaches lower held-out perplexity and higher Hits@1
than random init under the same recipe and budget (lab01's model was pretrained on the course's
books, not dialog, so expect a modest gap; chance Hits@1 is 1 in 20), each beyond the spread
over seeds; a gap inside it is "no difference". The record: docs/results.md#lab09_dialog.
Report what you see.

    python labs/lab09_dialog.py --lab01-model runs/transfer_starts/causal [--record docs/results/lab09_dialog.json]
    python labs/lab09_dialog.py --chat
"""

import argparse
import json
import math
from pathlib import Path

import kbert.quiet  # noqa: F401  (TensorFlow's start-up lines filtered)

import keras
import numpy as np
import tensorflow as tf

from kbert.checkpoints import load_pretrained
from kbert.data import dialog_inputs, read_personachat, reply_examples, split_dialogs
from kbert.data.personachat import SPECIAL_TOKENS
from kbert.metrics.seed_comparison import format_difference, over_seeds, paired_difference
from kbert.models import (
    DialogModel,
    Encoder,
    add_segment_embeddings,
    grow_vocabulary,
)
from kbert.models.text_generator import TextGenerator
from kbert.run_records import add_record_argument, record_if_requested
from kbert.train import count_batches, fine_tuning_optimizer
from kbert.train.lab_run_arguments import add_learning_rates_argument, resolve_learning_rates
from kbert.train.rate_on_validation import rate_then_seeds

# %% Settings (`--help` lists them) and the dialogs, split by persona.
parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--lab01-model", default="saved_models/lab01_causal")
parser.add_argument("--data-dir", default=None, help="default: KBERT_DATA_DIR, ../shared/data")
parser.add_argument("--max-history", type=int, default=2, help="utterances before the reply")
parser.add_argument("--sequence-length", type=int, default=128)
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--seeds", type=int, default=3, help="fine-tuning runs per start")
parser.add_argument("--batch-size", type=int, default=16)
add_learning_rates_argument(parser, "start", [3e-4, 1e-3], "3e-4, the lab's rate before, and 1e-3")
parser.add_argument(
    "--validation-examples", type=int, default=200, help="validation replies the rate is chosen on"
)
parser.add_argument(
    "--train-dialogs",
    type=int,
    default=300,
    help="training dialogs (0: all of the split's; 300 keeps three seeds of both starts within "
    "the course's time)",
)
parser.add_argument("--eval-examples", type=int, default=500, help="held-out replies scored")
parser.add_argument("--candidates", type=int, default=20, help="for Hits@1 (ConvAI2: 20)")
parser.add_argument("--samples", type=int, default=3, help="held-out personas to reply for")
parser.add_argument("--starts", default="pretrained,random", help="comma-separated")
parser.add_argument("--chat", action="store_true", help="then chat with the pretrained start")
parser.add_argument("--seed", type=int, default=0)
parser.add_argument("--verbose", type=int, default=2)
add_record_argument(parser)
args = parser.parse_args()
starts = [name.strip() for name in args.starts.split(",") if name.strip()]
if not starts or set(starts) - {"pretrained", "random"}:
    parser.error(f"--starts must name pretrained and/or random; received {args.starts!r}")
if not (Path(args.lab01_model) / "encoder.keras").is_file():
    parser.error(
        f"lab01's causal model is not at {args.lab01_model}: run `python "
        "labs/lab01_pretraining.py` first or pass --lab01-model"
    )
if args.candidates < 2 or args.sequence_length < 16 or args.max_history < 1:
    parser.error("--candidates must be >= 2, --sequence-length >= 16, --max-history >= 1")
if args.seeds < 1 or args.epochs < 1 or args.train_dialogs < 0:
    parser.error(
        "--seeds and --epochs must be positive integers and --train-dialogs >= 0; received "
        f"{args.seeds}, {args.epochs}, {args.train_dialogs}"
    )
resolve_learning_rates(parser, args)
if args.validation_examples < 1:
    parser.error(f"--validation-examples must be >= 1; received {args.validation_examples}")
dialogs = read_personachat(data_dir=args.data_dir)
train_dialogs, held_out_dialogs = split_dialogs(dialogs, held_out=0.1, seed=args.seed)
# Validation: a tenth of the training split's personas, never trained on (the rate's choice).
train_dialogs, validation_dialogs = split_dialogs(train_dialogs, held_out=0.1, seed=args.seed)
if args.train_dialogs:
    train_dialogs = train_dialogs[: args.train_dialogs]
train_examples = reply_examples(train_dialogs, args.max_history, 1, seed=args.seed)
held_out = reply_examples(held_out_dialogs, args.max_history, args.candidates - 1, args.seed)
held_out = held_out[: args.eval_examples]
validation = reply_examples(validation_dialogs, args.max_history, args.candidates - 1, args.seed)
validation = validation[: args.validation_examples]
print(
    f"PERSONA-CHAT: {len(train_dialogs)} training dialogs ({len(train_examples):,} replies), "
    f"{len(held_out_dialogs)} held-out dialogs with unseen personas ({len(held_out)} replies "
    f"scored against {args.candidates - 1} distractors each)"
)

# %% The vocabulary gets the delimiter and speaker tokens; the encoder gets speaker embeddings.
pretrained, tokenizer = load_pretrained(args.lab01_model)
pretrained, tokenizer = grow_vocabulary(pretrained, tokenizer, list(SPECIAL_TOKENS))
special = {token: tokenizer.token_to_id(token) for token in SPECIAL_TOKENS}
length = min(args.sequence_length, pretrained.config.max_sequence_length)
print(f"added {SPECIAL_TOKENS} as ids {list(special.values())}; sequences of {length} tokens")

texts = sorted(
    {
        text
        for example in train_examples + held_out + validation
        for text in [*example.persona, *example.history, example.reply, *example.distractors]
    }
)
ids_of = dict(
    zip(
        texts, [row.tolist() for row in tokenizer.tokenize(tf.constant(texts)).numpy()], strict=True
    )
)


def candidate_inputs(example, reply, with_eos=True):
    """`dialog_inputs` cut to `length`: the oldest history, then persona sentences, go first."""
    persona, history = list(example.persona), list(example.history)
    while True:
        inputs = dialog_inputs(persona, history, reply, ids_of.__getitem__, special, with_eos)
        if len(inputs["token_ids"]) <= length:
            return inputs
        if len(history) > 1:
            history.pop(0)
        elif persona:
            persona.pop(0)
        else:  # a reply too long on its own: keep its beginning
            for key in ("token_ids", "segment_ids", "labels"):
                inputs[key] = inputs[key][:length]
            inputs["classify_at"] = length - 1
            return inputs


def arrays(examples, rng):
    """Padded `(examples, candidates, length)` inputs, LM labels on the gold reply, its index."""
    count = 1 + len(examples[0].distractors)
    x = {
        "token_ids": np.full((len(examples), count, length), special["<pad>"], "int32"),
        "segment_ids": np.zeros((len(examples), count, length), "int32"),
        "padding_mask": np.zeros((len(examples), count, length), "int32"),
        "classify_at": np.zeros((len(examples), count), "int32"),
    }
    labels = np.full((len(examples), count, length), -100, "int32")
    choice = rng.integers(0, count, len(examples)).astype("int32")
    for row, example in enumerate(examples):
        others = iter(example.distractors)
        for column in range(count):
            gold = column == choice[row]
            inputs = candidate_inputs(example, example.reply if gold else next(others))
            size = len(inputs["token_ids"])
            x["token_ids"][row, column, :size] = inputs["token_ids"]
            x["segment_ids"][row, column, :size] = inputs["segment_ids"]
            x["padding_mask"][row, column, :size] = 1
            x["classify_at"][row, column] = inputs["classify_at"]
            if gold:  # the LM is scored on the gold reply only
                labels[row, column, :size] = inputs["labels"]
    return x, {"labels": labels, "choice": choice}


rng = np.random.default_rng(args.seed)
train_x, train_y = arrays(train_examples, rng)
eval_x, eval_y = arrays(held_out, rng)
validation_x, validation_y = arrays(validation, rng)


# %% Train both starts with the same recipe, at --seeds seeds (seed s: the random start's
# weights, the head's, the data order); score perplexity and Hits@1 on held-out personas.
def fresh_encoder(name, seed):
    """lab01's encoder, or one of its shape with random weights, plus speaker embeddings."""
    if name == "pretrained":
        return add_segment_embeddings(pretrained)  # a copy: `pretrained` stays as loaded
    keras.utils.set_random_seed(seed)
    return add_segment_embeddings(Encoder.from_config(pretrained.get_config()))


def evaluate(model, split="held_out"):
    """Perplexity of the gold replies and Hits@1 on the held-out replies (test), or on the
    validation replies (`split="validation"`, where the rate is chosen)."""
    inputs, targets = (eval_x, eval_y) if split == "held_out" else (validation_x, validation_y)
    count = len(targets["choice"])
    # 8 examples x 20 candidates a call: the LM logits of 160 sequences fit in memory.
    nll, tokens, correct = 0.0, 0, 0
    for start in range(0, count, 8):
        x = {key: value[start : start + 8] for key, value in inputs.items()}
        y = {key: value[start : start + 8] for key, value in targets.items()}
        outputs = model(x, training=False)
        lm_loss, _, hits = model.losses_of(y, outputs)
        scored = int(np.sum(y["labels"][:, :, 1:] != -100))
        nll += float(lm_loss) * scored
        tokens += scored
        correct += int(np.sum(np.asarray(hits)))
    return {"perplexity": float(np.exp(nll / tokens)), "hits_at_1": correct / count}


def train(name, seed, score_before, learning_rate, validate):
    """One start fine-tuned at one seed and peak rate: its scores (its validation perplexity
    too when `validate`; those before training when asked) and model."""
    keras.utils.set_random_seed(seed)
    model = DialogModel(fresh_encoder(name, seed))
    batches = (
        tf.data.Dataset.from_tensor_slices((train_x, train_y))
        .shuffle(len(train_examples), seed=seed)
        .batch(args.batch_size)
    )
    steps = count_batches(batches) * args.epochs
    model.compile(optimizer=fine_tuning_optimizer(steps, learning_rate))
    before = evaluate(model) if score_before else None
    history = model.fit(batches, epochs=args.epochs, verbose=args.verbose).history
    run = {
        "seed": seed,
        "learning_rate": learning_rate,
        **evaluate(model),
        "train_choice_accuracy": round(history["choice_accuracy"][-1], 4),
        "train_lm_loss": round(history["lm_loss"][-1], 4),
    }
    if validate:  # the rate's choice maximises this: the lower perplexity, the higher
        perplexity = evaluate(model, "validation")["perplexity"]
        run["validation_perplexity"] = perplexity
        run["validation_neg_log_perplexity"] = -math.log(perplexity)
    print(
        f"{name} seed {seed}, lr {learning_rate:g}: held-out perplexity {run['perplexity']:.1f}"
        + (f" (before {before['perplexity']:.1f})" if before else "")
        + (f", validation perplexity {run['validation_perplexity']:.1f}" if validate else "")
        + f", Hits@1 {run['hits_at_1']:.3f} of {args.candidates} (chance "
        f"{1 / args.candidates:.3f})",
        flush=True,
    )
    return run, before, model


models, runs, results, choices = {}, {}, {}, {}
seeds = [args.seed + offset for offset in range(args.seeds)]
for name in starts:
    first_seed = {}  # rate → the first seed's model (the chosen one writes the samples below)

    def run_at(rate, seed, name=name, first_seed=first_seed):
        first = seed == seeds[0]
        score_before = first and rate == args.learning_rates[0]  # once: training has not begun
        validate = first and len(args.learning_rates) > 1
        run, before, model = train(name, seed, score_before, rate, validate)
        if before is not None:
            results[name] = {"before": before}
        if first:
            first_seed[rate] = model
        return run

    runs[name], choices[name] = rate_then_seeds(
        args.learning_rates,
        seeds,
        run_at,
        "validation_neg_log_perplexity",
        shown=("validation_perplexity", "perplexity", "hits_at_1"),
    )
    models[name] = first_seed[choices[name]["chosen"]]
    first_seed.clear()  # the other rates' models are dropped
    print(f"{name}: peak rate {choices[name]['chosen']:g} chosen on validation perplexity")
for name in starts:
    results[name] |= over_seeds(runs[name], ("perplexity", "hits_at_1"))
    results[name] |= over_seeds(
        runs[name], ("train_choice_accuracy", "train_lm_loss"), spread=(), digits=4
    )
    results[name]["runs"] = runs[name]
    print(
        f"{name}: held-out perplexity {results[name]['perplexity']:.1f} ± "
        f"{results[name]['perplexity_sd'] or 0:.1f}, Hits@1 {results[name]['hits_at_1']:.3f} ± "
        f"{results[name]['hits_at_1_sd'] or 0:.3f} over {len(seeds)} seed(s)"
    )

# What pretraining buys, seed by seed: Hits@1 gained, log-perplexity lost (a ratio of
# perplexities, so one bad seed's large perplexity does not dominate); "no difference" when the
# mean lies inside the spread (`kbert.metrics.seed_comparison`).
differences = {}
if {"pretrained", "random"} <= set(starts):
    differences = {
        "hits_at_1": paired_difference(
            [run["hits_at_1"] for run in runs["pretrained"]],
            [run["hits_at_1"] for run in runs["random"]],
        ),
        "log_perplexity_reduction": paired_difference(
            [math.log(run["perplexity"]) for run in runs["random"]],
            [math.log(run["perplexity"]) for run in runs["pretrained"]],
        ),
    }
    print(
        "pretrained − random, paired by seed: Hits@1 "
        f"{format_difference(differences['hits_at_1'])}; perplexity ÷ "
        f"{math.exp(differences['log_perplexity_reduction']['mean']):.2f} (log "
        f"{format_difference(differences['log_perplexity_reduction'], scale=1.0)})"
    )


# %% Replies sampled for held-out personas (nucleus sampling, top-p 0.9).
def sample_reply(model, persona, history, seed):
    inputs = dialog_inputs(
        persona, history[-args.max_history :], "", ids_of_text, special, with_eos=False
    )
    prompt = np.array([inputs["token_ids"]], "int32")[:, -(length - 24) :]
    segments = np.array([inputs["segment_ids"]], "int32")[:, -(length - 24) :]
    head = model.language_model

    def logits(hidden):
        table = model.encoder.embeddings.token_embedding.embeddings
        return head.decoder(hidden[:, None, :], embedding_table=table)[:, 0, :]

    generator = TextGenerator(model.encoder, logits_fn=logits, end_token_id=special["<eos>"])
    output = generator.generate(
        prompt,
        max_new_tokens=24,
        strategy="top_p",
        top_p=0.9,
        temperature=0.7,
        seed=seed,
        prompt_segment_ids=segments,
        segment_id=0,
    )[0, prompt.shape[1] :]
    words = [int(i) for i in output if i != special["<eos>"]]
    if not words:
        return ""
    text = tokenizer.detokenize(np.array(words, "int32"))
    return text.numpy().decode("utf-8") if hasattr(text, "numpy") else str(text)


def ids_of_text(text):
    if text not in ids_of:
        ids_of[text] = tokenizer.tokenize(tf.constant([text])).numpy()[0].tolist()
    return ids_of[text]


samples = []
for index, dialog in enumerate(held_out_dialogs[: args.samples]):
    history = dialog.utterances[:1]
    print(f"\npersona: {' '.join(dialog.persona)}\npartner: {history[0]}")
    sample = {"persona": dialog.persona, "partner": history[0]}
    for name, model in models.items():
        reply = sample_reply(model, dialog.persona, history, seed=index)
        sample[name] = reply
        print(f"  {name}: {sample[name]}")
    samples.append(sample)

report = {
    "hits_at_1": {name: round(r["hits_at_1"], 4) for name, r in results.items()},
    "perplexity": {name: round(r["perplexity"], 2) for name, r in results.items()},
    "results": results,
    "candidates": args.candidates,
    "train_replies": len(train_examples),
    "held_out_replies": len(held_out),
    "differences": differences,
    "validation_replies": len(validation),
    "rate_choices": {
        name: {
            **choice,
            "tried": [
                {key: value for key, value in row.items() if key != "validation_neg_log_perplexity"}
                for row in choice["tried"]
            ],
        }
        for name, choice in choices.items()
    },
    "settings": {
        key: getattr(args, key)
        for key in ("epochs", "batch_size", "learning_rates", "max_history", "seed", "seeds")
    }
    | {"sequence_length": length, "lab01_model": args.lab01_model},
    "samples": samples,
}
record_if_requested(args, report)

# %% Chat with the pretrained start (--chat): type a line, empty to stop.
if args.chat:
    model = models.get("pretrained") or next(iter(models.values()))
    persona = held_out_dialogs[0].persona
    print(f"\nThe bot's persona: {' '.join(persona)}")
    history = []
    while True:
        line = input("you> ").strip().lower()
        if not line:
            break
        history.append(line)
        reply = sample_reply(model, persona, history, seed=len(history))
        history.append(reply)
        print(f"bot> {reply}")

print(json.dumps({key: report[key] for key in ("hits_at_1", "perplexity", "candidates")}))
