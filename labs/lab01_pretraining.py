"""Lab 1: pretrain a causal, a masked and an ELECTRA transformer from scratch.

Reproduces hands-on #1 of the NAACL 2019 tutorial "Transfer Learning in NLP" (pretraining a
transformer language model) and the two objectives of Jurafsky & Martin ch. 11: (a) a causal
language model, as in the tutorial, and (b) a masked language model of the same size (BERT's
MLM: masks re-drawn every epoch, 80% [MASK], 10% a random token, 10% kept); plus (c) ELECTRA's
replaced-token detection (Clark et al. 2020; the textbook's ELECTRA section): a generator a
quarter as wide fills the masked positions with samples and the discriminator, the encoder
kept, labels every token original or replaced, so it learns from all tokens.

The defaults are a recipe for pretraining on a CPU in minutes rather than days
(`kbert.models.pretraining_models.RECIPE`, each choice with its source): pre-LN blocks
(Xiong et al. 2020), no dropout while pretraining and BERT's 0.1 saved for fine-tuning, and a
linear decay (Geiping & Goldstein 2022, "Cramming"), 40% of tokens masked for the MLM (Wettig
et al. 2023; BERT masked 15%, ELECTRA keeps its 15%), ELECTRA's generator tied to the
discriminator's embeddings (Clark et al. 2020). `--layer-norm auto --dropout 0.1 --mask-rate
0.15 --schedule cosine` gives the sources' own settings. `benchmarks/pretraining_recipe.py`
sets each choice back at equal minutes and measures what the start is worth fine-tuned
(its record: docs/results.md).

`--budget-minutes M` gives every part the same CPU budget: the lab times a few training steps
of the part's model on this machine, then trains for as many steps as fit in M minutes (the
plan is written to `<run-dir>/<part>/plan.json` and reused when a killed run resumes). This is
how `benchmarks/transfer.py` compares the objectives at equal compute.

What it should show: the losses fall; the causal model's word-level perplexity on held-out books
(by other authors) drops far below the vocabulary size, and its greedy/nucleus continuations
become locally fluent. The causal LM learns from every token, the MLM from the masked share:
per CPU minute the causal model learns fastest, and the masked one leaves its first phase
(predicting frequent words, whatever the context) only with the recipe's settings. What each
start is worth downstream is `benchmarks/transfer.py`'s record. The encoders are saved under
`saved_models/` for the later labs. On GPUs the tutorial's own size (`--preset tutorial_50m`,
WikiText-103, `--block-length 256`) trains in the same code; see the command below.

The training loop is plain `model.fit`: warmup + linear or cosine decay, AdamW, gradient
clipping, gradient accumulation, bfloat16 where this CPU trains faster in it (`--dtype auto`,
timed once and cached) and XLA by flag, a `tf.distribute` strategy by flag, TensorBoard logs,
a learning-curve PNG, and checkpoints every `--steps-per-epoch` steps from which a run killed
with `kill -9` continues when started again with the same arguments.

    python labs/lab01_pretraining.py                      # causal + masked, defaults (CPU-sized)
    python labs/lab01_pretraining.py --part all --budget-minutes 20   # three objectives, equal budget
    python labs/lab01_pretraining.py --part causal --preset tutorial_50m --block-length 256 \\
        --corpus wikitext103 --dtype mixed_bfloat16 --strategy mirrored   # the tutorial, on GPUs
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

from kbert.arguments import add_recipe_arguments
from kbert.data import (
    count_whitespace_words,
    measure_pipeline_throughput,
    read_named_corpus,
    word_level_perplexity,
)
from kbert.data.pretraining_inputs import pretraining_datasets
from kbert.files import replace_directory, restore_interrupted_directory
from kbert.layers import attention_bias
from kbert.metrics import learning_curve_png
from kbert.models.pretraining_models import (
    RECIPE,
    PretrainingModelSettings,
    build_pretraining_model,
    encoder_for_fine_tuning,
    pre_layer_norm,
    pretrained_encoder,
    recipe_mask_rate,
)
from kbert.models.text_generator import TextGenerator
from kbert.run_inputs import pin_outputs
from kbert.run_records import add_record_argument, record_if_requested
from kbert.text import WordPieceTokenizer
from kbert.text.corpus_tokenizers import TOKENIZER_KINDS, train_corpus_tokenizer
from kbert.train import ResumableBackup, make_strategy, plan_time_budget
from kbert.train.precision import DTYPES, resolve_dtype
from kbert.train.pretraining_optimizer import SCHEDULES, compile_for_pretraining

PROMPTS = [
    "It was a dark and stormy night, and",
    "The old man looked at the sea and",
    "She opened the letter and read",
]


# The textbook's four subword tokenizers (lab 18 compares them); the pipelines take any of them.
TOKENIZERS = TOKENIZER_KINDS


def build_tokenizer(train_documents, vocabulary_size, run_dir, kind="wordpiece"):
    """Trains the tokenizer on the training corpus once (later runs reuse its file).

    WordPiece (BERT's, the default) writes `vocab.txt`; BPE over characters, byte-level BPE
    and SentencePiece unigram write their JSON, with BERT's role tokens ([PAD], [CLS], [SEP],
    [MASK]) appended by `with_roles()` so the pipelines can insert them
    (`kbert.text.corpus_tokenizers`).
    """
    return train_corpus_tokenizer(train_documents, kind, vocabulary_size, run_dir)


def encode(tokenizer, text):
    """Token ids of one text, (1, length) int32, from any of the four tokenizers."""
    if isinstance(tokenizer, WordPieceTokenizer):
        return np.asarray(tokenizer(tf.constant([text])).to_tensor(), np.int32)
    return np.asarray([tokenizer.tokenize(text)], np.int32)


def decode(tokenizer, ids):
    """Text of one row of ids."""
    if isinstance(tokenizer, WordPieceTokenizer):
        return tokenizer.detokenize(tf.constant([ids])).numpy()[0].decode()
    return tokenizer.detokenize([int(i) for i in ids])


# %% Models: the same encoder size, causal or bidirectional, with the objective's head
# (`kbert.models.pretraining_models`: ELECTRA's generator is a quarter of the discriminator's
# width), compiled with AdamW on warmup + cosine decay (`kbert.train.pretraining_optimizer`).
def model_settings(args):
    return PretrainingModelSettings(
        preset=args.preset,
        num_layers=args.num_layers,
        hidden_dim=args.hidden_dim,
        num_heads=args.num_heads,
        layer_norm=args.layer_norm,
        dropout=args.dropout,
        block_length=args.block_length,
        dtype=args.dtype,
        seed=args.seed,
        generator_width_factor=args.generator_width_factor,
        discriminator_weight=args.discriminator_weight,
        tie_embeddings=args.tie_embeddings,
    )


def mask_rate(part, args):
    """`--mask-rate`, or the recipe's for the part (masked 40%, ELECTRA 15%)."""
    return args.mask_rate or recipe_mask_rate(part) or 0.15  # causal masks nothing


def build_model(part, args, vocabulary_size):
    return build_pretraining_model(part, model_settings(args), vocabulary_size)


def compile_model(model, args, total_steps):
    compile_for_pretraining(
        model,
        args.peak_learning_rate,
        total_steps,
        args.warmup_steps,
        args.gradient_accumulation,
        jit_compile=args.jit,
        schedule=args.schedule,
    )


def plan_epochs(part, args, vocabulary_size, train, part_dir):
    """Checkpoint intervals that fit `--budget-minutes` of training, timed on this machine.

    A throw-away copy of the part's model trains 15 steps in one `fit`; steps 4-15 are timed
    (`kbert.train.plan_time_budget`). The plan is kept in `plan.json`, so a resumed run trains
    to the same end as the run it continues.
    """
    path = part_dir / "plan.json"
    probe = None
    if not path.exists():
        probe = build_model(part, args, vocabulary_size)
        compile_model(probe, args, total_steps=1000)
    return plan_time_budget(probe, train, args.budget_minutes, args.steps_per_epoch, path=path)


class EncoderSnapshots(keras.callbacks.Callback):
    """Saves the encoder after checkpoint intervals 1, 2, 4, 8, … (for the transfer benchmark)."""

    def __init__(self, directory, steps_per_epoch, fine_tuning_dropout):
        super().__init__()
        self.directory = Path(directory)
        self.steps_per_epoch = steps_per_epoch
        self.fine_tuning_dropout = fine_tuning_dropout

    def on_epoch_end(self, epoch, logs=None):
        done = epoch + 1
        if done & (done - 1) == 0:  # a power of two
            self.directory.mkdir(parents=True, exist_ok=True)
            encoder = pretrained_encoder(self.model)
            encoder_for_fine_tuning(encoder, self.fine_tuning_dropout).save(
                self.directory / f"step_{done * self.steps_per_epoch}.keras"
            )


def save_for_later_labs(encoder, tokenizer_path, save_dir, name, overwrite):
    """Writes encoder + tokenizer file (`vocab.txt` or `tokenizer.json`) to save_dir/name
    atomically; never replaces silently."""
    target = Path(save_dir) / name
    restore_interrupted_directory(target)
    if target.exists() and not overwrite:
        raise ValueError(f"{target} exists; pass --overwrite to replace it")
    staging = Path(save_dir) / f".{name}.partial"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    encoder.save(staging / "encoder.keras")
    shutil.copy(tokenizer_path, staging / Path(tokenizer_path).name)
    return replace_directory(staging, target)


# %% What the causal model's attention may see, written out: position i attends to keys j <= i
# (the causal mask) that are real tokens (the padding mask); attention allows a pair only where
# both are 1. kbert merges every mask in one place, `kbert.layers.attention_bias` (0 where
# allowed, a large negative number added to the score elsewhere).
def show_attention_masks(length=5, padding=2):
    """Prints the causal, padding and combined 0/1 masks of a batch whose second row is
    padded, checked equal to `attention_bias`; returns the combined `(batch, query, key)`."""
    padding_mask = np.array([[1] * length, [1] * (length - padding) + [0] * padding])  # (2, seq)
    causal = np.tril(np.ones((length, length), "int32"))  # (query, key)
    by_hand = causal[None, :, :] * padding_mask[:, None, :]  # (batch, query, key)
    bias = attention_bias(padding_mask=padding_mask, causal=True)  # (batch, 1, query, key)
    allowed = (keras.ops.convert_to_numpy(bias)[:, 0] == 0).astype("int32")
    assert (allowed == by_hand).all(), (allowed, by_hand)
    print(f"Causal mask (query × key):\n{causal}\nPadding masks (one row per sequence):")
    print(padding_mask)
    print(f"Combined for the padded sequence, as attention_bias allows it:\n{allowed[1]}")
    return allowed


# %% The tied output layer, written out: the causal model's logits are the last hidden states
# times the input embedding table, transposed, plus a per-token bias (Press & Wolf 2017), so the
# one table both reads tokens in and scores them out.
def check_tied_output(model, token_ids):
    """Prints and returns max |hidden @ table^T + bias − the model's logits| on `token_ids`."""
    ones = np.ones_like(token_ids)
    x = {"token_ids": token_ids, "segment_ids": 0 * ones, "padding_mask": ones}
    logits = keras.ops.convert_to_numpy(keras.ops.cast(model(x)["logits"], "float32"))
    hidden = model.encoder(x)["sequence_output"]  # (batch, seq, hidden)
    if model.output_projection is not None:  # ALBERT-factorized: hidden → embedding width first
        hidden = model.output_projection(hidden)
    hidden = keras.ops.convert_to_numpy(keras.ops.cast(hidden, "float32"))
    table = keras.ops.convert_to_numpy(model.encoder.embeddings.token_embedding.embeddings)
    bias = keras.ops.convert_to_numpy(model.decoder.bias)  # (vocab,)
    by_hand = hidden @ table.astype("float32").T + bias  # (batch, seq, vocab)
    difference = float(np.max(np.abs(by_hand - logits)))
    scale = max(1.0, float(np.max(np.abs(logits))))
    exact = model.decoder.compute_dtype == "float32"
    print(
        f"Tied output: logits = hidden @ embedding table {table.shape}^T + bias; max |Δ| "
        f"against the model's logits {difference:.1e}"
    )
    assert difference < (1e-4 if exact else 3e-2) * scale, difference
    return difference


def run_part(part, args, train_documents, valid_documents, tokenizer, run_dir, strategy):
    part_dir = run_dir / part
    part_dir.mkdir(parents=True, exist_ok=True)

    # %% Input pipelines (`kbert.data.pretraining_inputs`): causal blocks of the token stream,
    # or FULL-SENTENCES blocks masked after the cache, so every epoch gets new masks.
    train, valid = pretraining_datasets(
        part,
        train_documents,
        valid_documents,
        tokenizer,
        args.block_length,
        args.batch_size,
        seed=args.seed,
        mask_rate=mask_rate(part, args),
    )

    # %% Model and optimizer under the strategy's scope; an equal time budget sets the steps.
    epochs, plan = args.epochs, None
    with strategy.scope():
        if args.budget_minutes:
            plan = plan_epochs(part, args, tokenizer.vocabulary_size(), train, part_dir)
            epochs = plan["epochs"]
            print(
                f"{part}: {plan['seconds_per_step']:.3f} s/step → {epochs} intervals of "
                f"{args.steps_per_epoch} steps in {args.budget_minutes} min",
                flush=True,
            )
        total_steps = epochs * args.steps_per_epoch
        model = build_model(part, args, tokenizer.vocabulary_size())
        compile_model(model, args, total_steps)
    if part == "causal":  # the masks it attends under and its tied output layer, by hand
        show_attention_masks()
        check_tied_output(model, np.arange(2 * 6, dtype="int32").reshape(2, 6) + 5)

    # %% Train: ResumableBackup resumes a killed run at its last checkpoint interval (its saves
    # are atomic, unlike keras.callbacks.BackupAndRestore, so a kill mid-save loses nothing).
    callbacks = [
        ResumableBackup(part_dir / "backup"),
        keras.callbacks.TensorBoard(str(part_dir / "tensorboard")),
        keras.callbacks.CSVLogger(str(part_dir / "history.csv"), append=True),
        EncoderSnapshots(part_dir / "snapshots", args.steps_per_epoch, args.fine_tuning_dropout),
    ]
    # The input pipeline must outpace training: compare its examples/s with the step's below.
    pipeline_examples_per_s = measure_pipeline_throughput(train, steps=20)
    start = time.perf_counter()
    model.fit(
        train,
        epochs=epochs,
        steps_per_epoch=args.steps_per_epoch,
        validation_data=valid,
        validation_steps=args.validation_steps,
        callbacks=callbacks,
        verbose=args.verbose,
    )
    train_seconds = time.perf_counter() - start
    if part == "electra":
        learning_curve_png(
            part_dir / "history.csv",
            part_dir / "learning_curve.png",
            title="lab01 ELECTRA (replaced-token detection)",
            metrics=["rtd_loss", "rtd_accuracy", "generator_accuracy"],
            xlabel="checkpoint interval (--steps-per-epoch steps)",
            ylabels={
                "rtd_loss": "discriminator cross-entropy (nats / token)",
                "rtd_accuracy": "replaced-or-original accuracy",
                "generator_accuracy": "generator masked-token accuracy",
            },
        )
    else:
        prefix = "clm" if part == "causal" else "mlm"
        learning_curve_png(
            part_dir / "history.csv",
            part_dir / "learning_curve.png",
            title=f"lab01 {part} language model",
            metrics=[f"{prefix}_loss", f"{prefix}_perplexity", f"{prefix}_accuracy"],
            xlabel="checkpoint interval (--steps-per-epoch steps)",
            ylabels={
                f"{prefix}_loss": "cross-entropy (nats / sub-word)",
                f"{prefix}_perplexity": "sub-word perplexity (log scale)",
                f"{prefix}_accuracy": "next-token accuracy"
                if part == "causal"
                else "masked-token accuracy",
            },
            log_scale=(f"{prefix}_perplexity",),
        )

    # %% Evaluate on the held-out documents.
    examples = epochs * args.steps_per_epoch * args.batch_size
    results = {
        "part": part,
        "train_s": round(train_seconds, 1),
        "steps": total_steps,
        "budget_minutes": args.budget_minutes or None,
        "layer_norm": "pre" if pre_layer_norm(part, args.layer_norm) else "post",
        "dropout": args.dropout,
        "mask_rate": None if part == "causal" else mask_rate(part, args),
        "schedule": args.schedule,
        "dtype": args.dtype,
        "parameters": pretrained_encoder(model).count_params(),
        "train_examples_per_s": round(examples / train_seconds, 1),
        "pipeline_examples_per_s": round(pipeline_examples_per_s, 1),
    }
    metrics = model.evaluate(valid, steps=args.eval_steps, return_dict=True, verbose=0)
    results.update({k: round(float(v), 4) for k, v in metrics.items()})
    if part == "causal" and args.eval_steps is None:
        # The tutorial's word-level perplexity: exp(total NLL over the held-out tokens / words).
        total_nll = 0.0
        for batch in valid:
            total_nll += float(np.sum(model.negative_log_likelihood(batch)["total_nll"]))
        words = int(np.sum(count_whitespace_words(valid_documents)))
        results["word_perplexity"] = round(float(word_level_perplexity(total_nll, words)), 2)

    # %% Generation with a key/value cache: greedy, top-k and nucleus sampling.
    if part == "causal":

        def logits(hidden):
            return model.call_head({"sequence_output": hidden[:, None, :]}, None)["logits"][:, 0]

        generator = TextGenerator(
            model.encoder, logits_fn=logits, end_token_id=tokenizer.sep_token_id
        )
        samples = []
        for prompt in PROMPTS:
            ids = encode(tokenizer, prompt)
            for strategy_name in ("greedy", "top_k", "top_p"):
                out = generator.generate(
                    ids,
                    args.generate_tokens,
                    strategy=strategy_name,
                    top_k=40,
                    top_p=0.9,
                    temperature=0.8,
                    seed=args.seed,
                )
                text = decode(tokenizer, out[0, ids.shape[1] :])
                samples.append((prompt, strategy_name, text))
        results["samples"] = samples
    # Later labs start from the WordPiece models (`lab01_causal`, ...); the other tokenizers'
    # models are saved beside them under their own names, never over them.
    suffix = "" if args.tokenizer == "wordpiece" else f"_{args.tokenizer}"
    saved = save_for_later_labs(
        encoder_for_fine_tuning(pretrained_encoder(model), args.fine_tuning_dropout),
        run_dir / ("vocab.txt" if args.tokenizer == "wordpiece" else "tokenizer.json"),
        args.save_dir,
        f"lab01_{part}{suffix}",
        args.overwrite,
    )
    results["tokenizer"] = args.tokenizer
    results["vocabulary_size"] = tokenizer.vocabulary_size()
    results["saved_to"] = str(saved)
    # What it wrote, by content: a later lab's record pins the same hashes for what it read.
    results["saved_files"] = pin_outputs(saved)
    return results


def check_arguments(parser, args):
    """Exits with a usage error naming the first flag out of its range."""
    for flag, minimum in (("gradient_accumulation", 1), ("generator_width_factor", 1)):
        if getattr(args, flag) < minimum:
            parser.error(
                f"--{flag.replace('_', '-')} must be an int >= {minimum}; received "
                f"{getattr(args, flag)}"
            )
    if not args.discriminator_weight > 0:
        parser.error(
            f"--discriminator-weight must be a number > 0; received {args.discriminator_weight}"
        )
    for flag in ("dropout", "fine_tuning_dropout"):
        if not 0 <= getattr(args, flag) < 1:
            parser.error(
                f"--{flag.replace('_', '-')} must be in [0, 1); received {getattr(args, flag)}"
            )
    if args.mask_rate is not None and not 0 < args.mask_rate < 1:
        parser.error(f"--mask-rate must be a number in (0, 1); received {args.mask_rate}")


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--part",
        choices=["causal", "masked", "electra", "both", "all"],
        default="both",
        help="both = causal + masked; all = the three",
    )
    parser.add_argument(
        "--corpus",
        choices=["pretrain_corpus", "wikitext2", "wikitext103"],
        default="pretrain_corpus",
    )
    parser.add_argument("--data-dir", default=None, help="default: KBERT_DATA_DIR, ../shared/data")
    parser.add_argument("--max-documents", type=int, default=0, help="0 = all (smoke tests: 2)")
    parser.add_argument(
        "--vocabulary-size",
        type=int,
        default=8000,
        help="vocabulary of the tokenizer trained on the training corpus",
    )
    parser.add_argument(
        "--tokenizer",
        choices=TOKENIZERS,
        default="wordpiece",
        help="wordpiece (BERT's), bpe (characters + </w>), byte_level_bpe (GPT-2's) or unigram "
        "(SentencePiece's); runs other than wordpiece live in <run-dir>/<tokenizer>/",
    )
    parser.add_argument(
        "--preset",
        default="lab01",
        help="'lab01' (sized by the flags below) or an encoder preset, e.g. "
        "tutorial_50m (16 layers, 410 wide)",
    )
    parser.add_argument("--num-layers", type=int, default=4)
    parser.add_argument("--hidden-dim", type=int, default=256)
    parser.add_argument("--num-heads", type=int, default=4)
    # The defaults are the CPU-hour recipe (`kbert.models.pretraining_models.RECIPE`, each
    # choice with its source; benchmarks/pretraining_recipe.py sets each back to BERT's).
    add_recipe_arguments(parser)
    parser.add_argument("--block-length", type=int, default=RECIPE["block_length"])
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument(
        "--gradient-accumulation",
        type=int,
        default=1,
        help="batches averaged per update (batch-size x N sequences per update)",
    )
    parser.add_argument("--peak-learning-rate", type=float, default=1e-3)
    parser.add_argument("--warmup-steps", type=int, default=200)
    parser.add_argument(
        "--schedule",
        choices=sorted(SCHEDULES),
        default=RECIPE["schedule"],
        help="decay after warmup: cosine (the tutorial's) or linear (BERT's, Cramming's)",
    )
    parser.add_argument(
        "--epochs",
        type=int,
        default=6,
        help="checkpoint intervals; total steps = epochs × steps-per-epoch",
    )
    parser.add_argument("--steps-per-epoch", type=int, default=150)
    parser.add_argument(
        "--budget-minutes",
        type=float,
        default=0,
        help="train each part for the steps that fit in this many minutes "
        "(timed here; replaces --epochs); 0 = use --epochs",
    )
    parser.add_argument(
        "--validation-steps",
        type=int,
        default=20,
        help="held-out batches checked after each interval (0 = all)",
    )
    parser.add_argument(
        "--eval-steps",
        type=int,
        default=0,
        help="held-out batches in the final evaluation (0 = all, which word perplexity needs)",
    )
    parser.add_argument(
        "--dtype",
        choices=DTYPES,
        default="auto",
        help="auto = mixed_bfloat16 where this machine trains faster in it (timed once, cached)",
    )
    parser.add_argument("--jit", action="store_true", help="XLA (jit_compile=True)")
    parser.add_argument(
        "--strategy", default="default", choices=["default", "mirrored", "multi_worker"]
    )
    parser.add_argument("--generate-tokens", type=int, default=20)
    parser.add_argument("--run-dir", default="runs/lab01")
    parser.add_argument("--save-dir", default="saved_models")
    parser.add_argument(
        "--overwrite", action="store_true", help="replace saved_models/lab01_<part> if it exists"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--verbose", type=int, default=2)
    add_record_argument(parser)  # also pins the files the run reads
    args = parser.parse_args()
    check_arguments(parser, args)
    args.validation_steps = args.validation_steps or None
    args.eval_steps = args.eval_steps or None
    args.dtype = resolve_dtype(args.dtype)  # "auto": what this machine trains fastest

    keras.utils.set_random_seed(args.seed)
    run_dir = Path(args.run_dir)
    if args.tokenizer != "wordpiece":  # its own vocabulary, so its own checkpoints
        run_dir = run_dir / args.tokenizer
    run_dir.mkdir(parents=True, exist_ok=True)
    strategy = make_strategy(args.strategy)
    # Books (or WikiText) as documents; the held-out books are by other authors.
    train_documents, valid_documents = read_named_corpus(
        args.corpus, args.data_dir, args.max_documents
    )
    tokenizer, _ = build_tokenizer(train_documents, args.vocabulary_size, run_dir, args.tokenizer)
    parts = {"both": ["causal", "masked"], "all": ["causal", "masked", "electra"]}.get(
        args.part, [args.part]
    )
    results = [
        run_part(p, args, train_documents, valid_documents, tokenizer, run_dir, strategy)
        for p in parts
    ]

    # %% Results table.
    print(
        "\npart    params   train s  pipeline ex/s  train ex/s  held-out loss  sub-word ppl"
        "  word ppl  accuracy"
    )
    for r in results:
        prefix = {"causal": "clm", "masked": "mlm", "electra": "rtd"}[r["part"]]
        print(
            f"{r['part']:7s} {r['parameters'] / 1e6:6.1f}M {r['train_s']:8.0f}  "
            f"{r['pipeline_examples_per_s']:13.0f}  {r['train_examples_per_s']:10.1f}  "
            f"{r.get(f'{prefix}_loss', float('nan')):13.3f}  "
            f"{r.get(f'{prefix}_perplexity', float('nan')):12.1f}  "
            f"{r.get('word_perplexity', float('nan')):8.1f}  "
            f"{r.get(f'{prefix}_accuracy', float('nan')):8.3f}"
        )
    for r in results:
        for prompt, strategy_name, text in r.get("samples", []):
            print(f"[{strategy_name:6s}] {prompt} … {text}")
    (run_dir / "results.json").write_text(json.dumps(results, indent=1))
    record_if_requested(args, {r["part"]: r for r in results})
    print(json.dumps({r["part"]: {k: v for k, v in r.items() if k != "samples"} for r in results}))


if __name__ == "__main__":
    main()
