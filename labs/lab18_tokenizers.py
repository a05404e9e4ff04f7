"""Lab 18: subword tokenizers — BPE, byte-level BPE, SentencePiece unigram and WordPiece, compared.

Reproduces the textbook's §20.3: byte-pair encoding worked by hand (the chapter's
`{"low": 5, "lower": 2, "newest": 6, "widest": 3}` gives the merges `e s`, `es t`, `est </w>`,
`l o`), then the four tokenizers a practitioner meets, each trained on the same Gutenberg books
(`../shared/data/pretrain_corpus/train.jsonl`, 49 books) at equal vocabulary sizes:

- WordPiece (BERT; `kbert.text.train_wordpiece_vocabulary`, cased here like the others),
- BPE over characters with an end-of-word marker (Sennrich et al. 2016; `BytePairTokenizer`),
- byte-level BPE over the 256 bytes with GPT-2's pre-tokenizer (GPT-2, RoBERTa),
- SentencePiece's unigram model trained by EM with pruning (Kudo 2018; T5, ALBERT).

Each is measured on held-out text of three kinds — Gutenberg books it did not see
(`valid.jsonl`), WikiText-2 test (encyclopedic, with numbers and names) and SST-2 dev (short
movie-review sentences, lowercased) — by fertility (subwords per whitespace word), tokens per
text, the share of unknown tokens, and training time. The same hard words are shown segmented
by each, and a PNG plots fertility against vocabulary size.

What it should show: fertility falls as the vocabulary grows, fastest on the training domain;
byte-level BPE never produces an unknown token while character vocabularies do on unseen
characters; unigram and BPE segment rare words differently (unigram prefers likely pieces,
BPE its earliest merges). Report what you see.

    python labs/lab18_tokenizers.py [--record docs/results/lab18_tokenizers.json]
    python labs/lab18_tokenizers.py --vocabulary-sizes 8000 --train-books 5
"""

import argparse
import json
import time
from pathlib import Path

import kbert.quiet  # noqa: F401  (TensorFlow's start-up lines filtered)

import numpy as np
import tensorflow as tf

from kbert.arguments import comma_separated
from kbert.data import data_dir, load_classification_task, read_text_corpus
from kbert.run_records import add_record_argument, record_if_requested
from kbert.text import (
    BytePairTokenizer,
    UnigramTokenizer,
    WordPieceTokenizer,
    learn_merges,
    train_wordpiece_vocabulary,
)

HARD_WORDS = "unbelievably tokenization Zürich COVID-19 naïve antidisestablishmentarianism 1,200"


class WordPiece:
    """`WordPieceTokenizer` (a Keras layer) with the eager tokenizers' `tokenize` and names."""

    def __init__(self, vocabulary):
        self.layer = WordPieceTokenizer(vocabulary, lowercase=False)
        self.vocabulary = vocabulary
        self.unknown_id = vocabulary.index("[UNK]")

    def tokenize_many(self, texts):
        ragged = self.layer.tokenize(tf.constant(texts))
        return [row.tolist() for row in ragged.numpy()]

    def id_to_token(self, token_id):
        return self.vocabulary[token_id]


# %% Settings (`--help` lists them) and the texts.
parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument(
    "--vocabulary-sizes", type=comma_separated(int, minimum=300), default=[8000, 16000, 32000]
)
parser.add_argument("--train-books", type=int, default=49, help="Gutenberg training books used")
parser.add_argument("--held-out-texts", type=int, default=2000, help="texts per held-out set")
parser.add_argument("--data-dir", default=None, help="default: KBERT_DATA_DIR, ../shared/data")
parser.add_argument("--figure", default="docs/results/lab18_tokenizers.png")
add_record_argument(parser)
args = parser.parse_args()
root = data_dir(args.data_dir)
if root is None:
    parser.error("no data directory: pass --data-dir or set KBERT_DATA_DIR")
if args.train_books < 1 or args.held_out_texts < 1:
    parser.error("--train-books and --held-out-texts must be >= 1")
books = read_text_corpus(root / "pretrain_corpus" / "train.jsonl")[: args.train_books]
train = [paragraph for book in books for paragraph in book]
wiki = [
    line.strip()
    for line in (root / "wikitext2" / "wiki.test.raw").read_text(encoding="utf-8").splitlines()
    if line.strip() and not line.strip().startswith("=")
]
held_out = {
    "gutenberg": [
        p for book in read_text_corpus(root / "pretrain_corpus" / "valid.jsonl") for p in book
    ][: args.held_out_texts],
    "wikitext": wiki[: args.held_out_texts],
    "sst2": list(load_classification_task("sst2", "test", data_dir=root).texts)[
        : args.held_out_texts
    ],
}
print(
    f"training text: {len(books)} books, {len(train):,} paragraphs, "
    f"{sum(len(p.split()) for p in train):,} words; held out: "
    + ", ".join(f"{name} {len(texts):,} texts" for name, texts in held_out.items())
)

# %% BPE by hand: the chapter's worked example.
merges, _ = learn_merges({"low": 5, "lower": 2, "newest": 6, "widest": 3}, num_merges=4)
print("the chapter's first four merges:", ", ".join(" ".join(pair) for pair in merges))

# %% Train the four tokenizers at each size.
tokenizers, train_seconds = {}, {}
for size in args.vocabulary_sizes:
    started = time.perf_counter()
    vocabulary = train_wordpiece_vocabulary(
        tf.data.Dataset.from_tensor_slices(train), size, lowercase=False
    )
    tokenizers["wordpiece", size] = WordPiece(vocabulary)
    train_seconds["wordpiece", size] = time.perf_counter() - started
    for name, make in (
        ("bpe", lambda size=size: BytePairTokenizer.train(train, size)),
        ("byte_level_bpe", lambda size=size: BytePairTokenizer.train(train, size, byte_level=True)),
        ("unigram", lambda size=size: UnigramTokenizer.train(train, size)),
    ):
        started = time.perf_counter()
        tokenizers[name, size] = make()
        train_seconds[name, size] = time.perf_counter() - started
    print(
        f"vocabulary {size:,}: trained in "
        + ", ".join(
            f"{name} {train_seconds[name, size]:.0f} s" for name, s in tokenizers if s == size
        ),
        flush=True,
    )


# %% Measure on held-out text: fertility, tokens per text, unknown tokens.
def token_ids(tokenizer, texts):
    if isinstance(tokenizer, WordPiece):
        return tokenizer.tokenize_many(texts)
    return [tokenizer.tokenize(text) for text in texts]


def unknown_id(tokenizer):
    if isinstance(tokenizer, WordPiece):
        return tokenizer.unknown_id
    if isinstance(tokenizer, UnigramTokenizer):
        return tokenizer.unknown_id
    return (
        None if tokenizer.unknown_token is None else tokenizer.token_to_id(tokenizer.unknown_token)
    )


results = {}
for (name, size), tokenizer in tokenizers.items():
    for set_name, texts in held_out.items():
        ids = token_ids(tokenizer, texts)
        tokens = sum(len(row) for row in ids)
        words = sum(len(text.split()) for text in texts)
        unknown = unknown_id(tokenizer)
        unknowns = 0 if unknown is None else sum(row.count(unknown) for row in ids)
        results.setdefault(name, {}).setdefault(str(size), {})[set_name] = {
            "fertility": round(tokens / words, 4),
            "tokens_per_text": round(tokens / len(texts), 2),
            "unknown_pct": round(100 * unknowns / max(tokens, 1), 4),
        }
    results[name][str(size)]["train_seconds"] = round(train_seconds[name, size], 1)
    results[name][str(size)]["vocabulary"] = (
        len(tokenizer.vocabulary)
        if not isinstance(tokenizer, UnigramTokenizer)
        else tokenizer.vocabulary_size()
    )

print("\nfertility (subwords per word) | unknown % on held-out text")
print(f"{'tokenizer':16s} {'size':>6s} " + " ".join(f"{s:>22s}" for s in held_out))
for name, by_size in results.items():
    for size, row in by_size.items():
        cells = " ".join(
            f"{row[s]['fertility']:>12.3f} | {row[s]['unknown_pct']:6.3f}%" for s in held_out
        )
        print(f"{name:16s} {int(size):>6,} {cells}  ({row['train_seconds']:.0f} s)")

# %% The same words, segmented by each tokenizer (the middle vocabulary size).
middle = args.vocabulary_sizes[len(args.vocabulary_sizes) // 2]
segmented = {}
for name in ("wordpiece", "bpe", "byte_level_bpe", "unigram"):
    tokenizer = tokenizers[name, middle]
    pieces = [tokenizer.id_to_token(i) for i in token_ids(tokenizer, [HARD_WORDS])[0]]
    segmented[name] = pieces
    print(f"{name} ({middle:,}): {' '.join(pieces)}")

# %% The tradeoff as a figure: fertility against vocabulary size.
# This cell's own imports: matplotlib's file backend must be chosen before pyplot is imported.
import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

figure, axes = plt.subplots(1, len(held_out), figsize=(4 * len(held_out), 3.4), sharey=True)
for axis, set_name in zip(np.atleast_1d(axes), held_out, strict=True):
    for name, by_size in results.items():
        axis.plot(
            [int(size) for size in by_size],
            [row[set_name]["fertility"] for row in by_size.values()],
            marker="o",
            label=name,
        )
    axis.set_xscale("log")
    axis.set_title(f"held out: {set_name}")
    axis.set_xlabel("vocabulary size")
np.atleast_1d(axes)[0].set_ylabel("subwords per word")
np.atleast_1d(axes)[0].legend()
figure.tight_layout()
Path(args.figure).parent.mkdir(parents=True, exist_ok=True)
figure.savefig(args.figure, dpi=120)
print(f"wrote {args.figure}")

report = {
    "train_books": len(books),
    "train_words": sum(len(p.split()) for p in train),
    "held_out_texts": {name: len(texts) for name, texts in held_out.items()},
    "results": results,
    "segmented": {"text": HARD_WORDS, "vocabulary_size": middle, **segmented},
    "figure": args.figure,
}
record_if_requested(args, report)
print(json.dumps(report, ensure_ascii=False))
