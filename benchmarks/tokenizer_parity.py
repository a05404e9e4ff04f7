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

Whole pipelines (`PIPELINES`): tokenizer.json files built the way real models' are, one per
family: a normalizer (NFKC + Lowercase; NFD + StripAccents; Replace + Strip + Prepend; Nmt +
NFKC; T5's and ALBERT's sequences around SentencePiece's `Precompiled` nmt_nfkc charsmap, from
a model the `sentencepiece` package trains), a pre-tokenizer (ByteLevel with a prefix space,
Whitespace, Punctuation + Digits, Split, Metaspace) and a post-processor (RoBERTa's, BERT's, a
template). Each is trained on its own corpus (IMDb train, PERSONA-CHAT, Gutenberg train
books) and compared by ids and offsets, special tokens added where the file has a
post-processor, on `--pipeline-texts` held-out texts from six sources in equal shares: IMDb
test and SST-2 reviews, PERSONA-CHAT and DailyDialog turns, held-out Gutenberg paragraphs, and
held-out sentences rewritten with accents (some decomposed into combining marks), full-width
forms, ligatures, emoji and case pairs such as "ẞ" and "İ" (`stress_variant`).
`refusals` records the error each loader gives for a component still unsupported. Each
pipeline the graph layers accept also runs through `GraphBytePairTokenizer` or
`SentencePieceTokenizer` (`<name>_in_graph_agreement`, no special tokens: packing adds them in
graphs): by ids and offsets where the layer gives offsets (no normalizer or Metaspace rewrites
the text), by ids elsewhere (`<name>_in_graph_compares`; the offsets refusals in
`pipeline_in_graph_offsets_refusals`; `<name>_in_graph_disagreements_as_python_reference`
counts the disagreements where the graph gives what the layer's Python reference gives, for a
unigram model its float32 scores; `..._same_pieces_reordered` counts those whose ids are the
reference's pieces in another order, an exact tie in a unigram model's score);
`pipeline_in_graph_refusals` holds the errors of the
pipelines the graph layers refuse (SentencePiece's `Precompiled` charsmap).

The last line is JSON: `texts`, `bpe_agreement`, `byte_level_bpe_agreement`,
`unigram_agreement` (Hugging Face), `sentencepiece_agreement`, the four in-graph agreements,
the pipelines' `<name>_agreement`, and the first disagreements.
"""

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

import numpy as np

from kbert.data import (
    data_dir,
    load_classification_task,
    read_imdb,
    read_personachat,
    read_pretraining_books,
)
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


def pipeline_graph_agreement(encode, tokenizer, texts, batch_size=1024):
    """Share of `texts` whose ids from the graph layer of `tokenizer` (`GraphBytePairTokenizer`
    or `SentencePieceTokenizer`) equal the reference's `encode(text)`, and their character
    offsets too where the layer gives offsets; the first disagreements; the layer's refusal of
    offsets (None where they were compared); and how many disagreements give the ids of the
    layer's Python reference (for a unigram model: float32 scores, SentencePiece's convention,
    where `tokenizers` sums in float64)."""
    layer = (
        SentencePieceTokenizer
        if isinstance(tokenizer, UnigramTokenizer)
        else GraphBytePairTokenizer
    )(tokenizer)
    try:
        layer.tokenize_with_offsets(texts[:1])
        offsets_refusal = None
    except (AttributeError, ValueError) as error:  # no offsets for this pipeline in the graph
        offsets_refusal = str(error) if isinstance(error, ValueError) else "ids only"
    disagreements, as_reference, reordered = [], 0, 0
    for start in range(0, len(texts), batch_size):
        batch = texts[start : start + batch_size]
        if offsets_refusal is None:
            ids, starts, ends = (t.to_list() for t in layer.tokenize_with_offsets(batch))
        else:
            ids = layer(batch).to_list()
            starts = ends = [None] * len(batch)
        for text, mine, first, last in zip(batch, ids, starts, ends, strict=True):
            expected, offsets = encode(text)
            agree = mine == expected and (
                first is None or list(zip(first, last, strict=True)) == offsets
            )
            if not agree:
                disagreements.append(text)
                as_reference += mine == layer.reference.tokenize(text)
                # The same pieces in another order score the same under a unigram model: an
                # exact tie, broken one way by SentencePiece's op and another by `tokenizers`.
                reordered += mine != expected and sorted(mine) == sorted(expected)
    return (
        1 - len(disagreements) / len(texts),
        disagreements[:3],
        offsets_refusal,
        (as_reference, reordered),
    )


# Characters the stress texts bring in: accented letters (precomposed), combining marks,
# full-width forms, ligatures, emoji (with skin tones and joiners) and special case pairs.
_ACCENTED = dict(zip("aeiouncAEIOU", "àéîõüñçÀÉÎÕÜ", strict=True))
_MARKS = ["\u0301", "\u0300", "\u0308", "\u0323", "\u0302\u0323"]
_EMOJI = ["😀", "👍🏽", "🇫🇷", "👩\u200d💻", "❤️", "🎬"]
_EXTRAS = ["ﬁ", "ﬂ", "ẞ", "İ", "Σ", "½", "①", "…", "\u3000", "“", "”", "–"]


def stress_variant(text, seed):
    """`text` rewritten with the characters normalizers change: accents (precomposed or as
    combining marks), full-width words, ligatures, emoji and case pairs, chosen by `seed`."""
    draw = random.Random(seed)
    words = []
    for word in text.split(" "):
        roll = draw.random()
        if roll < 0.15:
            word = "".join(_ACCENTED.get(c, c) for c in word)
        elif roll < 0.25:
            word = "".join(c + draw.choice(_MARKS) if c.isalpha() else c for c in word)
        elif roll < 0.33:
            word = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in word)
        elif roll < 0.40:
            word += draw.choice(_EMOJI)
        elif roll < 0.46:
            word = draw.choice(_EXTRAS) + word
        words.append(word)
    return " ".join(words)


def pipeline_corpora(root, texts):
    """`(train, held_out)` for the pipelines: reviews, dialogue, books and stress texts."""
    imdb_train = read_imdb("train", data_dir=root)[0][:4000]
    imdb_test = read_imdb("test", data_dir=root)[0]
    dialogs = read_personachat(data_dir=root)
    turns = [u for d in dialogs for u in d.utterances]
    half = len(turns) // 2
    daily = root / "dailydialog" / "ijcnlp_dailydialog" / "test" / "dialogues_test.txt"
    daily_turns = [
        turn.strip()
        for line in daily.read_text(encoding="utf-8").splitlines()
        for turn in line.split("__eou__")
        if turn.strip()
    ]

    def paragraphs(split):
        return [p for book in read_pretraining_books(split, data_dir=root) for p in book if p]

    books_train, books_held_out = paragraphs("train")[:6000], paragraphs("valid")
    reviews = list(load_classification_task("sst2", "validation", data_dir=root).texts)
    share = max(1, texts // 6)
    sources = [
        imdb_test[: share // 2] + reviews[: share - share // 2],
        turns[half:][:share],
        daily_turns[:share],
        books_held_out[:share],
    ]
    stress_base = imdb_test[share // 2 :][: share // 2] + daily_turns[share:][: share // 2]
    sources.append([stress_variant(t, i) for i, t in enumerate(stress_base)])
    sources.append(books_held_out[share:][:share])
    held_out = [t for source in sources for t in source][:texts]
    return imdb_train + turns[:half] + books_train, held_out


def _spec(component):
    return json.loads(component.__getstate__())


def pipelines(train, vocabulary_size, directory):
    """The pipeline references, built and saved; `{name: (reference, kbert tokenizer,
    special)}` where `special` says whether to add the post-processor's special tokens."""
    import sentencepiece
    from tokenizers import Regex, Tokenizer, models, processors, trainers
    from tokenizers import normalizers as n
    from tokenizers import pre_tokenizers as p

    corpus = directory / "pipeline_train.txt"
    corpus.write_text("\n".join(t.replace("\n", " ") for t in train), encoding="utf-8")
    sentencepiece.SentencePieceTrainer.train(
        input=str(corpus),
        model_prefix=str(directory / "nmt_nfkc"),
        vocab_size=vocabulary_size,
        model_type="unigram",
        normalization_rule_name="nmt_nfkc",
        input_sentence_size=200000,
        shuffle_input_sentence=False,
        minloglevel=2,
    )
    processor = sentencepiece.SentencePieceProcessor(model_file=str(directory / "nmt_nfkc.model"))
    spm_pieces = [(processor.id_to_piece(i), processor.get_score(i)) for i in range(len(processor))]
    charsmap = _charsmap(directory / "nmt_nfkc.model")
    spaces = n.Replace(Regex(" {2,}"), " ")
    bpe_specials, unigram_specials = ["<s>", "<pad>", "</s>", "<unk>"], ["<unk>", "<s>", "</s>"]
    byte_alphabet = {"initial_alphabet": p.ByteLevel.alphabet()}
    template = processors.TemplateProcessing(
        single="<s> $A </s>", special_tokens=[("<s>", 0), ("</s>", 2)]
    )
    specs = {
        # name: (model, normalizer, pre-tokenizer, post-processor, trainer options)
        "pipeline_bpe_nfkc_lowercase": (
            "BPE",
            n.Sequence([n.NFKC(), n.Lowercase()]),
            p.Whitespace(),
            None,
            {},
        ),
        "pipeline_roberta_byte_level_bpe": (
            "BPE",
            None,
            p.ByteLevel(add_prefix_space=True),
            processors.RobertaProcessing(("</s>", 2), ("<s>", 0)),
            byte_alphabet,
        ),
        "pipeline_byte_level_bpe_nfc": (
            "BPE",
            n.NFC(),
            # Llama 3's shape: words cut by a Split, then bytes without GPT-2's regex.
            p.Sequence(
                [
                    p.Split(Regex(r"\s?\p{L}+|\s?\p{N}{1,3}|\s?[^\s\p{L}\p{N}]+|\s+"), "isolated"),
                    p.ByteLevel(add_prefix_space=False, use_regex=False),
                ]
            ),
            processors.ByteLevel(trim_offsets=True),
            byte_alphabet,
        ),
        "pipeline_bpe_strip_accents_punctuation_digits": (
            "BPE",
            n.Sequence([n.NFD(), n.StripAccents(), n.Lowercase(), n.Strip()]),
            p.Sequence([p.WhitespaceSplit(), p.Punctuation(), p.Digits(individual_digits=True)]),
            processors.BertProcessing(("</s>", 2), ("<s>", 0)),
            {},
        ),
        "pipeline_bpe_replace_prepend_split": (
            "BPE",
            n.Sequence(
                [n.NFKD(), n.Replace("``", '"'), n.Replace(Regex(r"\s+"), " "), n.Prepend("▁")]
            ),
            p.Sequence(
                [
                    p.Split(Regex(r"[.,!?;:]"), "merged_with_previous"),
                    p.Split(" ", "merged_with_next"),
                ]
            ),
            template,
            {},
        ),
        "pipeline_unigram_nmt_nfkc_metaspace": (
            "Unigram",
            n.Sequence([n.Nmt(), n.NFKC(), spaces]),
            p.Metaspace(),
            None,
            {},
        ),
        "pipeline_t5_precompiled_unigram": (
            spm_pieces,
            n.Sequence([n.Precompiled(charsmap), spaces]),
            p.Metaspace(prepend_scheme="always"),
            processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", 2)]),
            {},
        ),
        "pipeline_albert_precompiled_unigram": (
            spm_pieces,
            n.Sequence(
                [
                    n.Replace("``", '"'),
                    n.Replace("''", '"'),
                    n.NFKD(),
                    n.StripAccents(),
                    n.Lowercase(),
                    n.Precompiled(charsmap),
                    spaces,
                ]
            ),
            p.Metaspace(prepend_scheme="first"),
            processors.TemplateProcessing(
                single="<s>:0 $A:0 </s>:0", special_tokens=[("<s>", 1), ("</s>", 2)]
            ),
            {},
        ),
    }
    made = {}
    for name, (model, normalizer, pre_tokenizer, post_processor, options) in specs.items():
        if model == "BPE":
            reference = Tokenizer(models.BPE(unk_token=None if options else "<unk>"))
            trainer = trainers.BpeTrainer(
                vocab_size=vocabulary_size, special_tokens=bpe_specials, **options
            )
        elif model == "Unigram":
            reference = Tokenizer(models.Unigram())
            trainer = trainers.UnigramTrainer(
                vocab_size=vocabulary_size, special_tokens=unigram_specials, unk_token="<unk>"
            )
        else:  # a sentencepiece model's pieces, converted as Hugging Face's converters do
            reference = Tokenizer(models.Unigram(model, unk_id=0, byte_fallback=False))
            reference.add_special_tokens(unigram_specials)
            trainer = None
        reference.normalizer = normalizer
        reference.pre_tokenizer = pre_tokenizer
        if trainer is not None:
            reference.train_from_iterator(train, trainer)
        if post_processor is not None:
            reference.post_processor = post_processor
        path = directory / f"{name}.json"
        reference.save(str(path))
        kind = BytePairTokenizer if _spec(reference.model)["type"] == "BPE" else UnigramTokenizer
        made[name] = (reference, kind.from_huggingface(path), post_processor is not None)
    return made


def _charsmap(model_path):
    """The `precompiled_charsmap` of a SentencePiece `.model` file (NormalizerSpec field 2)."""
    from kbert.text.unigram_tokenizer import protobuf_fields

    fields = protobuf_fields(model_path.read_bytes())
    return dict(protobuf_fields(next(v for n, v in fields if n == 3)))[2]


def pipeline_agreement(reference, tokenizer, special, texts):
    """Share of `texts` whose ids and offsets (special tokens added when `special`) equal the
    reference's, and the first disagreements."""
    disagreements = []
    for text in texts:
        encoding = reference.encode(text, add_special_tokens=special)
        ids, starts, ends = tokenizer.tokenize_with_offsets(text, add_special_tokens=special)
        offsets = [tuple(o) for o in encoding.offsets]
        if ids != encoding.ids or offsets != list(zip(starts, ends, strict=True)):
            disagreements.append(text)
    return 1 - len(disagreements) / len(texts), disagreements[:3]


def refusals(directory):
    """The error each loader gives for components still unsupported: `{what: message}`."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    cases = {
        "BertNormalizer": (models.BPE(unk_token="<unk>"), normalizers.BertNormalizer(), None),
        "BertPreTokenizer": (
            models.BPE(unk_token="<unk>"),
            None,
            pre_tokenizers.BertPreTokenizer(),
        ),
        "UnicodeScripts": (models.Unigram(), None, pre_tokenizers.UnicodeScripts()),
        "byte_fallback": (models.BPE(unk_token="<unk>", byte_fallback=True), None, None),
    }
    found = {}
    for what, (model, normalizer, pre_tokenizer) in cases.items():
        reference = Tokenizer(model)
        reference.normalizer = normalizer
        reference.pre_tokenizer = pre_tokenizer
        path = directory / f"refused_{what}.json"
        reference.save(str(path))
        kind = BytePairTokenizer if isinstance(model, models.BPE) else UnigramTokenizer
        try:
            kind.from_huggingface(path)
            found[what] = "loaded"
        except ValueError as error:
            found[what] = str(error).replace(str(directory), "<dir>")
    return found


def measure(results, name, compare, *arguments, count_key="texts"):
    """Runs `compare(*arguments)` → `(share, first disagreements, *more)`, stores the share, the
    seconds and the disagreements under `name` in `results`, prints a line; returns `more`."""
    started = time.perf_counter()
    share, first, *more = compare(*arguments)
    seconds = time.perf_counter() - started
    results[f"{name}_agreement"] = round(share, 6)
    results[f"{name}_seconds"] = round(seconds, 1)
    results[f"{name}_first_disagreements"] = first
    print(f"{name}: {100 * share:.2f}% of {results[count_key]:,} texts agree ({seconds:.1f} s)")
    return more


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", default=None, help="default: KBERT_DATA_DIR, ../shared/data")
    parser.add_argument("--vocabulary-size", type=int, default=8000)
    parser.add_argument("--texts", type=int, default=20000, help="held-out texts compared")
    parser.add_argument(
        "--pipeline-texts", type=int, default=12000, help="held-out texts per pipeline"
    )
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
        pipeline_train, pipeline_held_out = pipeline_corpora(root, args.pipeline_texts)
        results["pipeline_texts"] = len(pipeline_held_out)
        results["pipeline_train_texts"] = len(pipeline_train)
        graph_refusals, offsets_refusals = {}, {}
        for name, made in pipelines(pipeline_train, args.vocabulary_size, Path(directory)).items():
            measure(
                results,
                name,
                pipeline_agreement,
                *made,
                pipeline_held_out,
                count_key="pipeline_texts",
            )
            reference, tokenizer, _ = made
            try:  # the graph layers run some pipelines and refuse the others by name
                (
                    SentencePieceTokenizer
                    if isinstance(tokenizer, UnigramTokenizer)
                    else GraphBytePairTokenizer
                )(tokenizer)
            except ValueError as error:
                graph_refusals[name] = str(error)
                continue

            def encode(text, reference=reference):
                encoding = reference.encode(text, add_special_tokens=False)
                return encoding.ids, [tuple(offset) for offset in encoding.offsets]

            offsets_refusal, (as_reference, reordered) = measure(
                results,
                f"{name}_in_graph",
                pipeline_graph_agreement,
                encode,
                tokenizer,
                pipeline_held_out,
                count_key="pipeline_texts",
            )
            results[f"{name}_in_graph_compares"] = "ids" if offsets_refusal else "ids and offsets"
            results[f"{name}_in_graph_disagreements_as_python_reference"] = as_reference
            results[f"{name}_in_graph_disagreements_same_pieces_reordered"] = reordered
            if offsets_refusal:
                offsets_refusals[name] = offsets_refusal
        results["pipeline_in_graph_offsets_refusals"] = offsets_refusals
        results["pipeline_in_graph_refusals"] = graph_refusals
        results["refusals"] = refusals(Path(directory))
    record_if_requested(args, results)
    print(json.dumps(results, ensure_ascii=False))
    return results


if __name__ == "__main__":
    main()
