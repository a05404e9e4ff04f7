"""Lab 18b: pretraining-data curation — deduplication, quality rules and perplexity filtering.

Reproduces the textbook's §20.13 on the course's pretraining corpus (the Gutenberg books that
lab01 pretrains on). A web-scale corpus repeats itself and carries junk; these books are clean,
so the lab plants what a crawl would hold — exact copies (re-cased, re-spaced), near copies
(2% of the words changed), and five kinds of noise document (hashtag spam, boilerplate repeated
line after line, navigation fragments, random-letter gibberish, word salad of real words) — and
knows every planted document, so each filter's recall and its false removals are measured:

1. exact duplicates: a hash of the normalized text (`kbert.data.curation.exact_duplicates`);
2. near duplicates: MinHash signatures of 5-word shingles, LSH bands, the exact Jaccard deciding
   (`near_duplicates`);
3. the chapter's quality rules (`quality_filter`: too few words or sentences, symbol ratio,
   repeated lines, ellipses, non-alphabetic words);
4. perplexity under a reference LM trained on clean text of another domain (WikiText-2, as
   CCNet scores the web with a Wikipedia LM), dropping the lowest and highest percentiles
   (`perplexity_filter`).

Then the point of curating: the same causal transformer as lab01, pretrained for the same number
of steps (so the same number of tokens) on the planted corpus and on the curated one, compared
by held-out perplexity on books by other authors and by TREC-6 accuracy after fine-tuning
(1,000 labelled questions, one recipe).

Three seeds, each a whole pipeline: each corpus is pretrained with the seeds `--seed`,
`--seed`+1, `--seed`+2 (`--pretraining-seeds 3`), and each pretrained encoder fine-tuned once
(`--seeds 1` per encoder), so the spread holds pretraining noise as well as fine-tuning's (the
claim is about the corpus, not one pretraining of it). The perplexity gap is paired by
pretraining seed, and the TREC-6 runs pair across the corpora by (pretraining seed,
fine-tuning seed): the same questions, order and head initialization; the record holds each
paired difference, curated against planted ("no difference" when it is inside the spread).
`--pretraining-seeds 1 --seeds 3` is the cheaper reading, with the perplexity gap's spread
unmeasured (the rendered record says so).

What the chapter claims: deduplication finds the repeats, the quality rules and the perplexity
filter the junk, and a curated corpus pretrains a better model for the same tokens. What the
record found is rendered from it at docs/results.md#lab18b_data_curation: what each filter
removed, planted and original, and the two corpora's perplexity and accuracy. Report what you see.

    python labs/lab18b_data_curation.py [--steps 300] [--record docs/results/lab18b_data_curation.json]

The last line is JSON: `filters` (per step: removed counts by reason, planted recall, originals
removed), `recall` per planted kind, `held_out_perplexity` and `trec_acc` per corpus (means),
`pretraining` per corpus (its runs, one per pretraining seed), `perplexity_reduction` (planted
minus curated, paired by pretraining seed), `trec` per corpus (mean, sd, runs in the order of
`trec_run_seeds`; the curated row's `vs_planted` is the paired difference), and the settings.
"""

import argparse
import json
import time
from pathlib import Path

import kbert.quiet  # noqa: F401  (TensorFlow's start-up lines filtered)

import keras
import numpy as np
import tensorflow as tf

from kbert.data import (
    causal_lm_blocks,
    load_classification_task,
    read_pretraining_books,
    read_wikitext,
)
from kbert.data.curation import (
    exact_duplicates,
    near_duplicates,
    perplexity_filter,
    quality_filter,
)
from kbert.metrics.seed_comparison import (
    format_difference,
    mean_sd,
    paired_difference,
    summarize_arms,
)
from kbert.models import CausalLanguageModel, Encoder, SequenceClassifier
from kbert.run_records import add_record_argument, record_if_requested
from kbert.tasks import evaluate_classifier
from kbert.text import BertPreprocessor, corpus_tokenizer
from kbert.train import LearningRateSchedule, TrainingSettings, fine_tune_classifier
from kbert.train.fused_adamw import FusedAdamW

# %% Settings (`--help` lists them).
parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--data-dir", default=None, help="default: KBERT_DATA_DIR, ../shared/data")
parser.add_argument("--run-dir", default="runs/lab18b")
parser.add_argument("--max-books", type=int, default=0, help="0 = all 49 (smoke: 2)")
parser.add_argument("--words-per-document", type=int, default=200, help="paragraphs grouped")
parser.add_argument("--duplicate-share", type=float, default=0.12, help="planted copies")
parser.add_argument("--noise-share", type=float, default=0.15, help="planted noise documents")
parser.add_argument("--near-duplicate-threshold", type=float, default=0.7)
parser.add_argument("--shingle-size", type=int, default=5)
parser.add_argument("--low-percentile", type=float, default=2.0)
parser.add_argument("--high-percentile", type=float, default=95.0)
parser.add_argument("--vocabulary-size", type=int, default=8000)
parser.add_argument("--reference-steps", type=int, default=300, help="the reference LM")
parser.add_argument("--steps", type=int, default=300, help="pretraining steps per corpus")
parser.add_argument("--block-length", type=int, default=128)
parser.add_argument("--batch-size", type=int, default=32)
parser.add_argument("--eval-batches", type=int, default=60, help="held-out batches scored")
parser.add_argument("--labelled", type=int, default=1000, help="TREC-6 training questions")
parser.add_argument("--seeds", type=int, default=1, help="fine-tuning seeds per encoder")
parser.add_argument(
    "--pretraining-seeds",
    type=int,
    default=3,
    help="pretrainings per corpus (seeds --seed, --seed+1, ...); 1 leaves the perplexity "
    "gap's spread unmeasured",
)
parser.add_argument("--min-steps", type=int, default=150, help="fine-tuning steps at least")
parser.add_argument("--fine-tuning-rate", type=float, default=1e-3)
parser.add_argument("--seed", type=int, default=0)
parser.add_argument("--verbose", type=int, default=2)
add_record_argument(parser)
args = parser.parse_args()
for name in ("duplicate_share", "noise_share"):
    if not 0 <= getattr(args, name) < 0.5:
        parser.error(f"--{name.replace('_', '-')} must be in [0, 0.5); got {getattr(args, name)}")
if args.steps < 1 or args.reference_steps < 1 or args.seeds < 1:
    parser.error("--steps, --reference-steps and --seeds must be >= 1")
if args.pretraining_seeds < 1:
    parser.error(f"--pretraining-seeds must be >= 1; received {args.pretraining_seeds}")
run_dir = Path(args.run_dir)
run_dir.mkdir(parents=True, exist_ok=True)
keras.utils.set_random_seed(args.seed)
rng = np.random.default_rng(args.seed)
started = time.perf_counter()


# %% The corpus as documents: each book's paragraphs grouped into ~200-word documents.
def book_documents(books, words_per_document):
    documents = []
    for book in books:
        current, words = [], 0
        for paragraph in [book] if isinstance(book, str) else book:
            current.append(paragraph)
            words += len(paragraph.split())
            if words >= words_per_document:
                documents.append("\n\n".join(current))
                current, words = [], 0
        if words >= words_per_document // 2:  # a short tail of a book stays only if long enough
            documents.append("\n\n".join(current))
    return documents


originals = book_documents(
    read_pretraining_books("train", args.data_dir, args.max_books), args.words_per_document
)
held_out_books = read_pretraining_books("valid", args.data_dir, 1 if args.max_books else 0)
print(f"{len(originals)} original documents from the training books")

# %% Planted copies and noise, each labelled with its kind (None: an original).
vocabulary_words = sorted({w for text in originals[:2000] for w in text.split() if w.isalpha()})


def exact_copy(text):
    variant = rng.integers(3)
    if variant == 0:
        return text.upper()
    if variant == 1:
        return "  ".join(text.split())  # re-spaced, paragraphs joined
    return text.replace(",", " ,")


def near_copy(text, share=0.02):
    words = text.split()
    for position in rng.choice(len(words), max(1, int(share * len(words))), replace=False):
        words[position] = vocabulary_words[rng.integers(len(vocabulary_words))]
    return " ".join(words)


def hashtag_spam(length):
    tags = [f"#{vocabulary_words[i].lower()}" for i in rng.integers(len(vocabulary_words), size=8)]
    return " ".join(f"Buy now {rng.choice(tags)} {rng.choice(tags)}!" for _ in range(length // 5))


def repeated_boilerplate(length):
    line = "Click here to subscribe to our newsletter and never miss an offer."
    return "\n".join([line] * (length // 11))


def navigation_fragment(length):
    items = ["Home", "About", "Contact", "Login", "Cart", "Privacy", "Terms", "Help"]
    return " | ".join(rng.choice(items, size=min(length, 30)))


def gibberish(length):
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    words = ["".join(rng.choice(letters, size=rng.integers(2, 9))) for _ in range(length)]
    return " ".join(w + ("." if i % 12 == 11 else "") for i, w in enumerate(words))


def word_salad(length):
    words = [vocabulary_words[i] for i in rng.integers(len(vocabulary_words), size=length)]
    return " ".join(w + ("." if i % 15 == 14 else "") for i, w in enumerate(words))


NOISE = {
    "hashtag_spam": hashtag_spam,
    "repeated_boilerplate": repeated_boilerplate,
    "navigation_fragment": navigation_fragment,
    "gibberish": gibberish,
    "word_salad": word_salad,
}
documents, kinds, source = list(originals), [None] * len(originals), list(range(len(originals)))
copies = int(args.duplicate_share * len(originals))
for index in rng.choice(len(originals), copies, replace=False):
    kind = "exact_copy" if rng.random() < 0.5 else "near_copy"
    copy = exact_copy if kind == "exact_copy" else near_copy
    documents.append(copy(originals[index]))
    kinds.append(kind)
    source.append(int(index))
noise = int(args.noise_share * len(originals))
for number in range(noise):
    kind = list(NOISE)[number % len(NOISE)]
    documents.append(NOISE[kind](args.words_per_document))
    kinds.append(kind)
    source.append(len(source))
# Planted documents anywhere in the stream, but each copy after its original: deduplication
# keeps the first of a group, so the copy is the one a correct filter removes.
order = rng.permutation(len(documents))
position = np.empty_like(order)
position[order] = np.arange(len(order))
for index, original in enumerate(source):
    if kinds[index] in ("exact_copy", "near_copy") and position[index] < position[original]:
        position[index], position[original] = position[original], position[index]
order = np.argsort(position)
documents, kinds = [documents[i] for i in order], [kinds[i] for i in order]
print(f"planted: {copies} copies, {noise} noise documents → {len(documents)} documents")
for kind in ["near_copy", *NOISE]:
    example = documents[kinds.index(kind)]
    print(f"  {kind}: {example[:110]!r}")

# %% A WordPiece vocabulary trained once on the original books (shared by every model here).
tokenizer = corpus_tokenizer(originals, args.vocabulary_size, run_dir / "vocab.txt")


def causal_model(num_layers=4, hidden_dim=256):
    """lab01's causal transformer (pre-LN, GPT-style), sized by the arguments."""
    return CausalLanguageModel(
        Encoder.from_preset(
            "tiny",
            vocabulary_size=tokenizer.vocabulary_size(),
            max_sequence_length=args.block_length,
            causal=True,
            norm_first=True,
            num_layers=num_layers,
            hidden_dim=hidden_dim,
            num_heads=4,
            intermediate_dim=4 * hidden_dim,
            num_segments=0,
            skip_padding=False,
        )
    )


def pretrain(model, corpus, steps, seed):
    keras.utils.set_random_seed(seed)
    schedule = LearningRateSchedule(
        "warmup_cosine_decay", peak_learning_rate=1e-3, total_steps=steps, warmup_steps=steps // 10
    )
    model.compile(optimizer=FusedAdamW(schedule, weight_decay=0.01, global_clipnorm=1.0))
    blocks = causal_lm_blocks(
        corpus, tokenizer, args.block_length, args.batch_size, seed=seed, drop_remainder=True
    )
    start = time.perf_counter()
    model.fit(blocks.repeat(), epochs=1, steps_per_epoch=steps, verbose=args.verbose)
    return round(time.perf_counter() - start, 1)


# %% Steps 1-3: exact duplicates, near duplicates, the quality rules (each on what is left).
def apply(step, filter_fn, kept):
    """Runs `filter_fn` on the documents still kept; returns the new kept indices and a row."""
    result = filter_fn([documents[i] for i in kept])
    removed = {kept[local]: reason for local, reason in result.removed.items()}
    by_reason = {key: count for key, count in result.summary().items() if key != "kept"}
    removed_kinds = [kinds[i] for i in removed]
    row = {
        "removed": len(removed),
        "by_reason": by_reason,
        "planted_removed": {k: removed_kinds.count(k) for k in sorted(set(removed_kinds) - {None})},
        "originals_removed": removed_kinds.count(None),
        "examples_of_originals_removed": [
            (removed[i], documents[i][:120]) for i in removed if kinds[i] is None
        ][:3],
    }
    print(
        f"{step}: removed {row['removed']} {by_reason}; originals among them: {row['originals_removed']}"
    )
    return [kept[local] for local in result.kept], row


filters, kept = {}, list(range(len(documents)))
seconds = time.perf_counter()
kept, filters["exact_duplicates"] = apply("exact duplicates", exact_duplicates, kept)
kept, filters["near_duplicates"] = apply(
    "near duplicates",
    lambda docs: near_duplicates(docs, args.near_duplicate_threshold, args.shingle_size),
    kept,
)
kept, filters["quality_rules"] = apply("quality rules", quality_filter, kept)
dedup_and_rules_seconds = round(time.perf_counter() - seconds, 1)

# %% Step 4: perplexity under a reference LM trained on clean text of another domain.
reference = causal_model(num_layers=2, hidden_dim=128)
reference_text = read_wikitext("valid", data_dir=args.data_dir) + read_wikitext(
    "test", data_dir=args.data_dir
)
reference_seconds = pretrain(reference, reference_text, args.reference_steps, args.seed)


def document_perplexities(model, texts, words=30, batch_size=64):
    """Word-level perplexity of each text's first `words` words under a causal LM.

    exp(total NLL / words): per word, not per sub-word token, so gibberish that WordPiece
    splits into many short, individually likely pieces still scores as what it is. Thirty
    words fit the model's window even as gibberish (about 3.5 pieces a word).
    """
    values = []
    for start in range(0, len(texts), batch_size):
        heads = [" ".join(text.split()[:words]) for text in texts[start : start + batch_size]]
        ids = tokenizer(heads)[:, : args.block_length]
        x = {
            "token_ids": ids.to_tensor(default_value=0),  # (batch, longest) padded with 0
            "padding_mask": tf.ones_like(ids).to_tensor(default_value=0),
        }
        total_nll = np.asarray(model.negative_log_likelihood(x)["total_nll"])
        counts = np.array([max(1, len(head.split()) - 1) for head in heads])  # first is context
        values.extend(np.exp(total_nll / counts).tolist())
    return values


scored = list(kept)
perplexities = document_perplexities(reference, [documents[i] for i in scored])
kept, filters["perplexity"] = apply(
    "perplexity",
    lambda docs: perplexity_filter(perplexities, args.low_percentile, args.high_percentile),
    kept,
)
# The reference LM's median perplexity per kind of document that reached this step.
median_perplexity = {
    str(kind): round(
        float(
            np.median([p for i, p in zip(scored, perplexities, strict=True) if kinds[i] == kind])
        ),
        1,
    )
    for kind in sorted({kinds[i] for i in scored}, key=str)
}
print(f"median perplexity per kind: {median_perplexity}")

# %% Recall per planted kind, and what the curated corpus holds.
kept_set = set(kept)
planted_kinds = sorted({k for k in kinds if k is not None})
recall = {
    kind: round(
        sum(1 for i, k in enumerate(kinds) if k == kind and i not in kept_set)
        / max(1, kinds.count(kind)),
        4,
    )
    for kind in planted_kinds
}
originals_kept = sum(1 for i in kept if kinds[i] is None)
print(f"recall per planted kind: {recall}")
print(f"curated: {len(kept)} documents, {originals_kept} of {len(originals)} originals kept")

# %% Pretraining on each corpus for the same steps (the same tokens), then held-out perplexity:
# once per pretraining seed (`--pretraining-seeds`).
corpora = {"planted": documents, "curated": [documents[i] for i in kept]}
held_out = causal_lm_blocks(
    held_out_books, tokenizer, args.block_length, args.batch_size, last_block="pad", shuffle=False
).take(args.eval_batches)
pretraining_seeds = [args.seed + offset for offset in range(args.pretraining_seeds)]


def encoder_path(name, pretraining_seed):
    return run_dir / f"{name}_encoder_seed{pretraining_seed}.keras"


def pretrain_and_score(name, pretraining_seed):
    """One pretraining of the causal model on corpus `name`: its encoder is saved for TREC-6,
    its held-out loss and perplexity returned as a run."""
    # Keras draws each initializer's seed when the layer is built: seed first, so the corpora
    # of one pretraining seed start from the same weights.
    keras.utils.set_random_seed(pretraining_seed)
    model = causal_model()
    seconds = pretrain(model, corpora[name], args.steps, pretraining_seed)
    loss = float(model.evaluate(held_out, return_dict=True, verbose=0)["clm_loss"])
    model.encoder.save(encoder_path(name, pretraining_seed))
    run = {
        "seed": pretraining_seed,
        "train_seconds": seconds,
        "held_out_loss": round(loss, 4),
        "held_out_perplexity": round(float(np.exp(loss)), 2),
    }
    print(f"{name}, pretraining seed {pretraining_seed}: {run}", flush=True)
    return run


def pretraining_row(name, runs):
    """A corpus's row: means over its pretraining runs (one run's own values when there is one,
    as in records made before `--pretraining-seeds`), the perplexity's sd, and the runs."""
    perplexity, perplexity_sd = mean_sd([run["held_out_perplexity"] for run in runs])
    return {
        "documents": len(corpora[name]),
        "train_seconds": round(float(np.mean([run["train_seconds"] for run in runs])), 1),
        "held_out_loss": round(float(np.mean([run["held_out_loss"] for run in runs])), 4),
        "held_out_perplexity": round(perplexity, 2),
        "held_out_perplexity_sd": None if perplexity_sd is None else round(perplexity_sd, 2),
        "runs": runs,
    }


pretraining = {
    name: pretraining_row(name, [pretrain_and_score(name, seed) for seed in pretraining_seeds])
    for name in corpora
}
# Planted minus curated perplexity, paired by pretraining seed: positive ("better" beyond the
# spread) when curating lowered it. With one pretraining per corpus there is no spread, and the
# verdict is "no difference" by the project's rule.
perplexity_reduction = paired_difference(
    [run["held_out_perplexity"] for run in pretraining["planted"]["runs"]],
    [run["held_out_perplexity"] for run in pretraining["curated"]["runs"]],
)

# %% TREC-6 transfer: 1,000 labelled questions × seeds, one recipe for both starts, each causal
# encoder read at its last real token (the one position that sees the whole question).
trec_train = load_classification_task("trec", "train", data_dir=args.data_dir)
trec_test = load_classification_task("trec", "test", data_dir=args.data_dir)
preprocessor = BertPreprocessor(tokenizer, sequence_length=64)


def fine_tune_trec(name, pretraining_seed, seed):
    """TREC-6 test accuracy of corpus `name`'s encoder from `pretraining_seed`, fine-tuned on the
    `args.labelled` questions that `seed` draws (and in its order, its head initialized by it)."""
    keras.utils.set_random_seed(seed)
    rows = np.random.default_rng(seed).permutation(len(trec_train))[: args.labelled]
    classifier = SequenceClassifier(
        keras.models.load_model(encoder_path(name, pretraining_seed)), 6, pooling="last"
    )
    steps_per_epoch = -(-args.labelled // args.batch_size)
    fine_tune_classifier(
        classifier,
        preprocessor,
        trec_train.subset(rows),
        settings=TrainingSettings(
            epochs=max(3, -(-args.min_steps // steps_per_epoch)),
            batch_size=args.batch_size,
            learning_rate=args.fine_tuning_rate,
            seed=seed,
            verbose=0,
        ),
    )
    return round(float(evaluate_classifier(classifier, preprocessor, trec_test)["accuracy"]), 4)


# Runs pair across the corpora by (pretraining seed, fine-tuning seed), in this order; the curated
# row's `vs_planted` is the paired difference, curated minus planted.
# Each pair gets its own fine-tuning seed (its questions, order and head).
trec_run_seeds = [
    [p, offset * args.seeds + s]
    for offset, p in enumerate(pretraining_seeds)
    for s in range(args.seeds)
]
accuracies = {name: [fine_tune_trec(name, p, s) for p, s in trec_run_seeds] for name in corpora}
trec = summarize_arms(accuracies, baseline="planted")
for name, row in trec.items():
    print(f"TREC-6 from the {name} corpus: {row}", flush=True)


# %% Results: the tables, the paired differences, then the last line.
def spread(sd, digits):
    return "" if sd is None else f" ± {sd:.{digits}f}"


def print_corpora():
    """Each corpus's documents, held-out perplexity and TREC-6 accuracy (mean ± sd)."""
    print("\ncorpus     documents  held-out perplexity  TREC-6 (mean ± sd)")
    for name in corpora:
        p, t = pretraining[name], trec[name]
        perplexity = f"{p['held_out_perplexity']:.2f}{spread(p['held_out_perplexity_sd'], 2)}"
        accuracy = f"{t['mean']:.3f}{spread(t['sd'], 3)}"
        print(f"{name:<10} {p['documents']:>9}  {perplexity:>19}  {accuracy}")


def print_differences():
    """The paired differences, each with its verdict ("no difference" inside the spread)."""
    pairing = "(pretraining seed, fine-tuning seed)" if args.pretraining_seeds > 1 else "seed"
    print(
        f"\nTREC-6 curated − planted, points, paired by {pairing} ({len(trec_run_seeds)} pairs): "
        f"{format_difference(trec['curated']['vs_planted'])}"
    )
    gap = format_difference(perplexity_reduction, scale=1.0, digits=2)
    if args.pretraining_seeds == 1:
        print(
            f"held-out perplexity planted − curated: {gap}; one pretraining per corpus, so the "
            "gap's spread is unmeasured (--pretraining-seeds 3 measures it)"
        )
    else:
        print(
            f"held-out perplexity planted − curated, paired by pretraining seed "
            f"({args.pretraining_seeds} pairs): {gap}"
        )


print("\nfilter               removed  planted removed                          originals removed")
for step, row in filters.items():
    print(
        f"{step:<20} {row['removed']:>7}  {json.dumps(row['planted_removed']):<40} {row['originals_removed']:>6}"
    )
print_corpora()
print_differences()
report = {
    "documents": {"originals": len(originals), "copies": copies, "noise": noise},
    "filters": filters,
    "recall": recall,
    "median_perplexity": median_perplexity,
    "originals_kept": originals_kept,
    "held_out_perplexity": {name: p["held_out_perplexity"] for name, p in pretraining.items()},
    "trec_acc": {name: t["mean"] for name, t in trec.items()},
    "pretraining": pretraining,
    "perplexity_reduction": perplexity_reduction,
    "trec": trec,
    "trec_run_seeds": trec_run_seeds,
    "steps": args.steps,
    "tokens_per_corpus": args.steps * args.batch_size * args.block_length,
    "reference_lm": {
        "corpus": "wikitext-2 valid+test",
        "steps": args.reference_steps,
        "train_seconds": reference_seconds,
    },
    "dedup_and_rules_seconds": dedup_and_rules_seconds,
    "labelled": args.labelled,
    "seeds": args.seeds,
    "pretraining_seeds": args.pretraining_seeds,
    "wall_seconds": round(time.perf_counter() - started, 1),
}
record_if_requested(args, report)
print(json.dumps(report))
