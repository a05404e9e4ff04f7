"""kbert's BPE, byte-level BPE and unigram tokenizers against the references users know.

Hugging Face `tokenizers` trains a character BPE (Whitespace pre-tokenizer, "</w>" suffix), a
byte-level BPE (GPT-2's pre-tokenizer) and a unigram model (Metaspace), and `sentencepiece`
trains a unigram model (identity normalization), each at `--vocabulary-size` on the training
texts: TREC-6 train and the first half of WikiText-2 valid. kbert loads each reference's own
file (`tokenizer.json`, `.model`) and tokenizes the held-out texts: TREC-6 test, SST-2 dev and
train, the second half of WikiText-2 valid and WikiText-2 test (non-empty lines), `--texts` of
them. A text agrees when its ids (and, for Hugging Face, its character offsets) are identical.

    python -m benchmarks.tokenizer_parity [--record docs/results/tokenizer_parity.json]

In-graph: the two BPE models also run as `GraphBytePairTokenizer` (core TensorFlow ops and
tf-text's `RegexSplitWithOffsets`, what an exported serving graph holds), compared with the
Hugging Face reference by ids and character offsets on the same texts
(`bpe_in_graph_agreement`, `byte_level_bpe_in_graph_agreement`). The unigram models also run as `SentencePieceTokenizer` (tf-text's SentencePiece ops,
what an exported serving graph holds), compared by ids on the same texts:
`sentencepiece_in_graph_agreement` (the sentencepiece-trained model, against `sentencepiece`
itself) and `kbert_unigram_in_graph_agreement` (a unigram model kbert trains on the same texts,
`float32_scores=True`, against kbert's Python tokenizer). tf-text bundles its own copy of
SentencePiece, which breaks exact ties between equally probable segmentations (e.g. "zzzzzzzzz"
as z + 4 × zz or 4 × zz + z) the other way from the `sentencepiece` package; the benchmark
counts how many disagreements are such ties (`<name>_disagreements_that_are_ties`).

The last line is JSON: `texts`, `bpe_agreement`, `byte_level_bpe_agreement`,
`unigram_agreement` (Hugging Face), `sentencepiece_agreement`, the four in-graph agreements,
and the first disagreements.
"""

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from kbert.data import data_dir, load_classification_task
from kbert.run_records import add_record_argument, record_if_requested
from kbert.text import (
    BytePairTokenizer,
    GraphBytePairTokenizer,
    SentencePieceTokenizer,
    UnigramTokenizer,
)


def corpora(root, texts):
    """`(train, held_out)` lists of real texts."""
    wiki_valid = [
        line
        for line in (root / "wikitext2" / "wiki.valid.raw").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    wiki_test = [
        line
        for line in (root / "wikitext2" / "wiki.test.raw").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    half = len(wiki_valid) // 2

    def task(name, split):
        return list(load_classification_task(name, split, data_dir=root).texts)

    train = task("trec", "train") + wiki_valid[:half]
    held_out = (
        task("trec", "test")
        + task("sst2", "validation")
        + task("sst2", "test")
        + wiki_valid[half:]
        + wiki_test
        + task("sst2", "train")
    )
    return train, held_out[:texts]


def references(train, vocabulary_size, directory):
    """The four references, trained; `{name: (encode(text) → (ids, offsets or None), kbert)}`."""
    import sentencepiece
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    made = {}
    char = Tokenizer(models.BPE(unk_token="[UNK]", end_of_word_suffix="</w>"))
    char.pre_tokenizer = pre_tokenizers.Whitespace()
    char.train_from_iterator(
        train,
        trainers.BpeTrainer(
            vocab_size=vocabulary_size, special_tokens=["[UNK]"], end_of_word_suffix="</w>"
        ),
    )
    byte = Tokenizer(models.BPE())
    byte.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    byte.train_from_iterator(
        train,
        trainers.BpeTrainer(
            vocab_size=vocabulary_size, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
        ),
    )
    unigram = Tokenizer(models.Unigram())
    unigram.pre_tokenizer = pre_tokenizers.Metaspace()
    unigram.train_from_iterator(
        train,
        trainers.UnigramTrainer(
            vocab_size=vocabulary_size, special_tokens=["<unk>"], unk_token="<unk>"
        ),
    )
    for name, reference, kind in (
        ("bpe", char, BytePairTokenizer),
        ("byte_level_bpe", byte, BytePairTokenizer),
        ("unigram", unigram, UnigramTokenizer),
    ):
        path = directory / f"{name}.json"
        reference.save(str(path))

        def encode(text, reference=reference):
            encoding = reference.encode(text)
            return encoding.ids, [tuple(offset) for offset in encoding.offsets]

        made[name] = (encode, kind.from_huggingface(path))
    corpus = directory / "train.txt"
    corpus.write_text("\n".join(train), encoding="utf-8")
    sentencepiece.SentencePieceTrainer.train(
        input=str(corpus),
        model_prefix=str(directory / "sp"),
        vocab_size=vocabulary_size,
        model_type="unigram",
        normalization_rule_name="identity",
        minloglevel=2,
    )
    processor = sentencepiece.SentencePieceProcessor(model_file=str(directory / "sp.model"))
    made["sentencepiece"] = (
        lambda text: (processor.encode(text), None),
        UnigramTokenizer.from_sentencepiece(directory / "sp.model"),
    )
    return made


def agreement(encode, tokenizer, texts):
    """Share of `texts` with identical ids (and offsets, when the reference gives them)."""
    disagreements = []
    for text in texts:
        ids, offsets = encode(text)
        mine, starts, ends = tokenizer.tokenize_with_offsets(text)
        if ids != mine or (offsets is not None and offsets != list(zip(starts, ends, strict=True))):
            disagreements.append(text)
    return 1 - len(disagreements) / len(texts), disagreements[:3]


def _path_score(scores, path):
    """A segmentation's log probability summed left to right in float32, as the Viterbi
    accumulates it (np.sum's pairwise order can differ by an ulp on long texts)."""
    return np.cumsum(scores[path], dtype=np.float32)[-1] if len(path) else np.float32(0)


def graph_agreement(encode, unigram, texts, batch_size=1024):
    """Share of `texts` whose ids from `SentencePieceTokenizer(unigram)` (the graph ops) equal
    `encode(text)`; the first disagreements; and how many disagreements are exact ties (both
    segmentations score the same sum of float32 piece log probabilities, so either is a most
    probable one and only the tie-breaking differs)."""
    layer = SentencePieceTokenizer(unigram)
    scores = np.asarray([score for _, score in unigram.pieces], np.float32)
    disagreements, ties = [], 0
    for start in range(0, len(texts), batch_size):
        batch = texts[start : start + batch_size]
        for text, ids in zip(batch, layer(batch).to_list(), strict=True):
            expected = encode(text)
            if ids != expected:
                disagreements.append(text)
                ties += bool(_path_score(scores, ids) == _path_score(scores, expected))
    return 1 - len(disagreements) / len(texts), disagreements[:3], ties


def bpe_graph_agreement(encode, bpe, texts, batch_size=1024):
    """Share of `texts` whose ids and character offsets from `GraphBytePairTokenizer(bpe)`
    (the graph ops) equal the reference's `encode(text)`, and the first disagreements."""
    layer = GraphBytePairTokenizer(bpe)
    disagreements = []
    for start in range(0, len(texts), batch_size):
        batch = texts[start : start + batch_size]
        ids, starts, ends = (t.to_list() for t in layer.tokenize_with_offsets(batch))
        for text, mine, first, last in zip(batch, ids, starts, ends, strict=True):
            expected, offsets = encode(text)
            if mine != expected or list(zip(first, last, strict=True)) != offsets:
                disagreements.append(text)
    return 1 - len(disagreements) / len(texts), disagreements[:3]


def measure(results, name, compare, *arguments):
    """Runs `compare(*arguments)` → `(share, first disagreements, *more)`, stores the share, the
    seconds and the disagreements under `name` in `results`, prints a line; returns `more`."""
    started = time.perf_counter()
    share, first, *more = compare(*arguments)
    seconds = time.perf_counter() - started
    results[f"{name}_agreement"] = round(share, 6)
    results[f"{name}_seconds"] = round(seconds, 1)
    results[f"{name}_first_disagreements"] = first
    print(f"{name}: {100 * share:.2f}% of {results['texts']:,} texts agree ({seconds:.1f} s)")
    return more


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", default=None, help="default: KBERT_DATA_DIR, ../shared/data")
    parser.add_argument("--vocabulary-size", type=int, default=8000)
    parser.add_argument("--texts", type=int, default=20000, help="held-out texts compared")
    add_record_argument(parser)
    args = parser.parse_args(argv)
    root = data_dir(args.data_dir)
    if root is None:
        parser.error("no data directory: pass --data-dir or set KBERT_DATA_DIR")
    if args.vocabulary_size < 300 or args.texts < 1:
        parser.error(
            f"--vocabulary-size must be >= 300 and --texts >= 1; received "
            f"{args.vocabulary_size}, {args.texts}"
        )
    train, held_out = corpora(root, args.texts)
    results = {"texts": len(held_out), "train_texts": len(train)}
    results["vocabulary_size"] = args.vocabulary_size
    in_graph = []  # (name, reference encode → ids, unigram model) run through the graph ops
    with tempfile.TemporaryDirectory() as directory:
        for name, (encode, tokenizer) in references(
            train, args.vocabulary_size, Path(directory)
        ).items():
            measure(results, name, agreement, encode, tokenizer, held_out)
            if name == "sentencepiece":
                in_graph.append(("sentencepiece_in_graph", lambda t, e=encode: e(t)[0], tokenizer))
            if isinstance(tokenizer, BytePairTokenizer):
                measure(
                    results, f"{name}_in_graph", bpe_graph_agreement, encode, tokenizer, held_out
                )
        started = time.perf_counter()
        kbert_unigram = UnigramTokenizer.train(train, args.vocabulary_size, float32_scores=True)
        results["kbert_unigram_train_seconds"] = round(time.perf_counter() - started, 1)
        in_graph.append(("kbert_unigram_in_graph", kbert_unigram.tokenize, kbert_unigram))
        for name, encode, unigram in in_graph:
            ties = measure(results, name, graph_agreement, encode, unigram, held_out)
            results[f"{name}_disagreements_that_are_ties"] = ties[0]
    record_if_requested(args, results)
    print(json.dumps(results, ensure_ascii=False))
    return results


if __name__ == "__main__":
    main()
