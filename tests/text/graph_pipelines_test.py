"""Hugging Face pipelines inside graphs: `tokenizer.json` normalizers and pre-tokenizers run as
graph ops (`graph_normalizers`, `graph_pre_tokenizers`) and give `tokenizers`' ids eagerly, in a
traced function, in tf.data and in a restored SavedModel; offsets where no normalizer or
Metaspace rewrites the text; refusals name what does not run in the graph."""

import unicodedata

import pytest
import regex
import tensorflow as tf
import tensorflow_text

from kbert.text import (
    BytePairTokenizer,
    GraphBytePairTokenizer,
    SentencePieceTokenizer,
    UnigramTokenizer,
    _re2_patterns,
)
from kbert.text.byte_pair_trainer import learn_merges
from kbert.text.graph_normalizers import graph_normalize
from kbert.text.normalizers import normalize
from tests.text.post_processors_test import CHECKED

TEXTS = CHECKED + [
    "Ｔｈｅ ＡＢＣ ｏｆ ①②③ and ﬃ ligatures, ㍻ and ℌ",
    "o\u0308 a\u0301\u0327 \u1e9b\u0323 Ω K Å",  # combining marks, canonical reordering
    "ΟΔΥΣΣΕΥΣ Ὀδυσσεύς ÇA VA? İIıi ǅ ǈ",
    "tab\there\x07bell\x0cform\u2028line\ufeffbom\u200bzw",
    "prices: $3.50, 12,000 people; 3/4 ok!! (yes) [no] {maybe}",
    "😀👍🏽👨‍👩‍👧 ❤️ flags 🇫🇷🇯🇵 done",
    "",
    "   ",
    "``quoted'' text -- dash",
]


def _configurations(tokenizers):
    n, p, regex = tokenizers.normalizers, tokenizers.pre_tokenizers, tokenizers.Regex
    return {
        "nfkc-lowercase-whitespace": (n.Sequence([n.NFKC(), n.Lowercase()]), p.Whitespace()),
        "bert-like": (
            n.Sequence([n.NFD(), n.StripAccents(), n.Lowercase(), n.Strip()]),
            p.Sequence([p.WhitespaceSplit(), p.Punctuation(), p.Digits(individual_digits=True)]),
        ),
        "replace-prepend-split": (
            n.Sequence(
                [n.NFKD(), n.Replace("``", '"'), n.Replace(regex(r"\s+"), " "), n.Prepend("▁")]
            ),
            p.Sequence(
                [
                    p.Split(regex(r"[.,!?;:]"), "merged_with_previous"),
                    p.Split(" ", "merged_with_next"),
                ]
            ),
        ),
        "nmt-nfc-metaspace": (
            n.Sequence([n.Nmt(), n.NFC(), n.Strip(left=False, right=True)]),
            p.Metaspace(prepend_scheme="always"),
        ),
        "nfd-metaspace-never": (n.NFD(), p.Metaspace(prepend_scheme="never", split=True)),
        # No normalizer: offsets are exact too.
        "split-behaviors": (
            None,
            p.Sequence(
                [
                    p.WhitespaceSplit(),
                    p.Punctuation(behavior="contiguous"),
                    p.Split(regex(r"\p{L}+"), "merged_with_next", invert=True),
                    p.Digits(individual_digits=False),
                ]
            ),
        ),
        "removed-and-whitespace": (
            None,
            p.Sequence([p.Split(regex(r"\s?\p{N}{1,3}"), "removed"), p.Whitespace()]),
        ),
        "metaspace-first": (None, p.Sequence([p.WhitespaceSplit(), p.Metaspace("▁", "first")])),
    }


NAMES = list(_configurations(pytest.importorskip("tokenizers")))
# Pipelines whose offsets the graph gives (no normalizer, no Metaspace).
WITH_OFFSETS = ("split-behaviors", "removed-and-whitespace")


def _trained(tmp_path, kind, normalizer, pre_tokenizer, byte_level=False):
    tokenizers = pytest.importorskip("tokenizers")
    specials = ["<s>", "<unk>", "</s>"]
    if kind == "BPE":
        reference = tokenizers.Tokenizer(
            tokenizers.models.BPE(unk_token=None if byte_level else "<unk>")
        )
        options = {"initial_alphabet": tokenizers.pre_tokenizers.ByteLevel.alphabet()}
        trainer = tokenizers.trainers.BpeTrainer(
            vocab_size=400, special_tokens=specials, **(options if byte_level else {})
        )
        loader = BytePairTokenizer
    else:
        reference = tokenizers.Tokenizer(tokenizers.models.Unigram())
        trainer = tokenizers.trainers.UnigramTrainer(
            vocab_size=150, special_tokens=specials, unk_token="<unk>"
        )
        loader = UnigramTokenizer
    reference.normalizer = normalizer
    reference.pre_tokenizer = pre_tokenizer
    reference.train_from_iterator(TEXTS * 3, trainer)
    tmp_path.mkdir(parents=True, exist_ok=True)
    reference.save(str(tmp_path / "tokenizer.json"))
    return reference, loader.from_huggingface(tmp_path / "tokenizer.json")


def _expected_ids(reference, texts):
    return [reference.encode(text, add_special_tokens=False).ids for text in texts]


@pytest.mark.parametrize("name", NAMES)
def test_bpe_pipelines_give_the_reference_ids_eagerly_traced_and_in_tf_data(name, tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    reference, tokenizer = _trained(tmp_path, "BPE", *_configurations(tokenizers)[name])
    layer = GraphBytePairTokenizer(tokenizer)
    expected = _expected_ids(reference, TEXTS)
    assert [tokenizer.tokenize(text) for text in TEXTS] == expected
    assert layer(TEXTS).to_list() == expected
    traced = tf.function(layer, input_signature=[tf.TensorSpec([None], tf.string)])
    assert traced(tf.constant(TEXTS)).to_list() == expected
    dataset = tf.data.Dataset.from_tensor_slices(TEXTS).batch(5).map(layer)
    assert [ids for batch in dataset for ids in batch.to_list()] == expected
    assert layer(TEXTS[2]).numpy().tolist() == expected[2]  # one text
    if name in WITH_OFFSETS:
        ids, starts, ends = (t.to_list() for t in layer.tokenize_with_offsets(TEXTS))
        assert ids == expected
        for text, first, last in zip(TEXTS, starts, ends, strict=True):
            offsets = reference.encode(text, add_special_tokens=False).offsets
            assert list(zip(first, last, strict=True)) == [tuple(o) for o in offsets], text
    else:
        which = "Metaspace" if name == "metaspace-first" else "normalizer"
        with pytest.raises(ValueError, match=f"tokenize_with_offsets: .*{which}"):
            layer.tokenize_with_offsets(TEXTS)


def _unigram_configurations(tokenizers):
    n, p, regex = tokenizers.normalizers, tokenizers.pre_tokenizers, tokenizers.Regex
    return {
        "t5-like-nmt-nfkc": (
            n.Sequence([n.Nmt(), n.NFKC(), n.Replace(regex(" {2,}"), " ")]),
            p.Metaspace(prepend_scheme="always"),
        ),
        "albert-like-without-charsmap": (
            n.Sequence(
                [n.Replace("``", '"'), n.Replace("''", '"'), n.NFKD(), n.StripAccents()]
                + [n.Lowercase()]
            ),
            p.Sequence([p.WhitespaceSplit(), p.Metaspace()]),
        ),
        # (A plain Metaspace with no normalizer loads SentencePiece-style, not as a pipeline.)
        "first-without-normalizer": (
            None,
            p.Sequence([p.Punctuation(), p.Metaspace(prepend_scheme="first")]),
        ),
        "whitespace-digits": (n.NFC(), p.Sequence([p.Whitespace(), p.Digits(True)])),
        "normalizer-only": (n.Sequence([n.NFD(), n.Lowercase()]), None),
    }


UNIGRAM_NAMES = list(_unigram_configurations(pytest.importorskip("tokenizers")))


@pytest.mark.parametrize("name", UNIGRAM_NAMES)
def test_unigram_pipelines_give_the_reference_ids_eagerly_traced_and_in_tf_data(name, tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    reference, tokenizer = _trained(tmp_path, "Unigram", *_unigram_configurations(tokenizers)[name])
    layer = SentencePieceTokenizer(tokenizer)
    expected = _expected_ids(reference, TEXTS)
    assert [tokenizer.tokenize(text) for text in TEXTS] == expected
    assert layer(TEXTS).to_list() == expected
    traced = tf.function(layer, input_signature=[tf.TensorSpec([None], tf.string)])
    assert traced(tf.constant(TEXTS)).to_list() == expected
    dataset = tf.data.Dataset.from_tensor_slices(TEXTS).batch(5).map(layer)
    assert [ids for batch in dataset for ids in batch.to_list()] == expected
    assert layer(TEXTS[2]).numpy().tolist() == expected[2]


def test_a_byte_level_split_sequence_runs_in_the_graph(tmp_path):
    """Llama 3's shape: words cut by a Split, then bytes without GPT-2's regex."""
    tokenizers = pytest.importorskip("tokenizers")
    n, p, regex = tokenizers.normalizers, tokenizers.pre_tokenizers, tokenizers.Regex
    pre = p.Sequence(
        [
            p.Split(regex(r"\s?\p{L}+|\s?\p{N}{1,3}|\s?[^\s\p{L}\p{N}]+|\s+"), "isolated"),
            p.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    reference, tokenizer = _trained(tmp_path, "BPE", n.NFC(), pre, byte_level=True)
    layer = GraphBytePairTokenizer(tokenizer)
    assert layer(TEXTS).to_list() == _expected_ids(reference, TEXTS)


ALL_CHARACTERS = "".join(
    chr(c) for c in range(0x20, 0x30000) if not 0xD800 <= c < 0xE000 and chr(c).isprintable()
)


@pytest.mark.parametrize(
    "spec",
    [
        {"type": "NFC"},
        {"type": "NFD"},
        {"type": "NFKC"},
        {"type": "NFKD"},
        {"type": "Lowercase"},
        {"type": "StripAccents"},
        {"type": "Nmt"},
    ],
    ids=lambda spec: spec["type"],
)
def test_graph_normalizers_write_the_python_references_text(spec):
    """Character by character over the printable code points Python's tables assign and the
    control characters (U+0000 apart: `tf.strings.lower` ends a string there)."""
    controls = [chr(c) for c in range(1, 0x20)]
    characters = [c for c in ALL_CHARACTERS if unicodedata.category(c) != "Cn"] + controls
    if spec["type"] == "StripAccents":  # a mark after a base, as accents come
        characters = ["a" + c for c in characters]
    ours = graph_normalize(spec, tf.constant(characters)).numpy()
    differ = [
        (c, o.decode())
        for c, o in zip(characters, ours, strict=True)
        if normalize(spec, c).text != o.decode()
    ]
    # TensorFlow's ICU case tables are older than Python's: the few differences are
    # characters (Unicode 14's new case pairs) that the graph leaves as they are.
    assert len(differ) <= 45, differ[:20]
    assert all(c == o for c, o in differ), differ[:20]


def _chapter(**pipeline):
    merges, vocabulary = learn_merges(
        {"low": 5, "lower": 2, "newest": 6, "widest": 3}, num_merges=10, reserved_tokens=["[UNK]"]
    )
    return BytePairTokenizer(vocabulary, merges, **pipeline)


WHITESPACE = {"type": "Whitespace"}


@pytest.mark.parametrize(
    "pipeline, message",
    [
        (
            {"normalizer": {"type": "Precompiled", "precompiled_charsmap": ""}},
            "normalizer Precompiled does not run in the graph; supported there: NFC",
        ),
        (
            {
                "normalizer": {
                    "type": "Sequence",
                    "normalizers": [{"type": "NFC"}, {"type": "Precompiled"}],
                }
            },
            "normalizer Precompiled does not run in the graph",
        ),
        (
            {
                "normalizer": {
                    "type": "Replace",
                    "pattern": {"Regex": " *"},
                    "content": "_",
                }
            },
            "matches the empty string",
        ),
        (
            {
                "pre_tokenizer": {
                    "type": "Sequence",
                    "pretokenizers": [WHITESPACE, {"type": "ByteLevel", "use_regex": False}],
                }
            },
            "pre-tokenizer ByteLevel does not run in the graph inside a pipeline",
        ),
        (
            {
                "pre_tokenizer": {
                    "type": "Split",
                    "pattern": {"Regex": r"\s+(?!\S)"},
                    "behavior": "Isolated",
                    "invert": False,
                }
            },
            r"pre-tokenizer Split: pattern .* uses '\(\?!', which RE2",
        ),
        (
            {
                "pre_tokenizer": {
                    "type": "Split",
                    "pattern": {"Regex": r"[\S]+"},
                    "behavior": "Isolated",
                    "invert": False,
                }
            },
            r"has \\S inside a character class",
        ),
        (
            {
                "normalizer": {"type": "NFC"},
                "pre_tokenizer": {"type": "Metaspace", "prepend_scheme": "first"},
            },
            "Metaspace with prepend_scheme 'first' after a normalizer",
        ),
    ],
)
def test_what_does_not_run_in_the_graph_is_refused_by_name(pipeline, message):
    tokenizer = _chapter(**{"pre_tokenizer": WHITESPACE, **pipeline})
    tokenizer.tokenize("lowest newer")  # the Python tokenizer runs it
    with pytest.raises(ValueError, match=f"GraphBytePairTokenizer: .*{message}"):
        GraphBytePairTokenizer(tokenizer)


def test_a_byte_level_model_needs_byte_level_last():
    merges, vocabulary = learn_merges({"low": 5, "lower": 2}, num_merges=4, byte_level=True)
    tokenizer = BytePairTokenizer(
        vocabulary, merges, byte_level=True, pre_tokenizer=WHITESPACE, unknown_token=None
    )
    assert tokenizer.tokenize("low")  # the Python tokenizer runs it
    with pytest.raises(ValueError, match="ByteLevel as its pre-tokenizer .* Whitespace"):
        GraphBytePairTokenizer(tokenizer)


@pytest.mark.slow
def test_pipelines_run_in_a_saved_and_restored_model(tmp_path):
    """A BPE and a unigram pipeline with normalizers, in one exported SavedModel: the restored
    graph gives `tokenizers`' ids."""
    tokenizers = pytest.importorskip("tokenizers")
    bpe_reference, bpe = _trained(
        tmp_path / "bpe", "BPE", *_configurations(tokenizers)["bert-like"]
    )
    unigram_reference, unigram = _trained(
        tmp_path / "unigram", "Unigram", *_unigram_configurations(tokenizers)["t5-like-nmt-nfkc"]
    )
    layers = {"bpe": GraphBytePairTokenizer(bpe), "unigram": SentencePieceTokenizer(unigram)}
    module = tf.Module()
    module.layers = list(layers.values())
    module.tokenize = tf.function(
        lambda texts: {name: layer(texts).to_tensor(-1) for name, layer in layers.items()},
        input_signature=[tf.TensorSpec([None], tf.string)],
    )
    tf.saved_model.save(module, str(tmp_path / "exported"))
    restored = tf.saved_model.load(str(tmp_path / "exported"))
    out = restored.tokenize(tf.constant(TEXTS))
    for name, reference in (("bpe", bpe_reference), ("unigram", unigram_reference)):
        rows = [[i for i in row if i >= 0] for row in out[name].numpy().tolist()]
        assert rows == _expected_ids(reference, TEXTS), name


@pytest.mark.parametrize(
    "pattern",
    [r"\s+", r"\S+", r"[\s,]+", r"\w+|[^\w\s]+", r"\d+", r"\D+", r"[^\s\p{L}\p{N}]+", r"\p{L}+"],
)
def test_patterns_match_in_re2_as_in_the_regex_module(pattern):
    """Python `regex`'s Unicode classes written out for RE2: the same matches on every text."""
    re2 = _re2_patterns.to_re2(pattern, "test")
    pieces, starts, ends = tensorflow_text.regex_split_with_offsets(TEXTS, re2, re2)
    for text, mine, first, last in zip(
        TEXTS, pieces.to_list(), starts.to_list(), ends.to_list(), strict=True
    ):
        matched = [
            (s, e)
            for piece, s, e in zip(mine, first, last, strict=True)
            if regex.fullmatch(pattern, piece.decode())
        ]
        data = text.encode()
        expected = [
            (len(text[: m.start()].encode()), len(text[: m.end()].encode()))
            for m in regex.finditer(pattern, text)
        ]
        assert matched == expected, (pattern, text)
        assert b"".join(mine) == data
