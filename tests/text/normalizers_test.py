"""`kbert.text.normalizers`: each normalizer's text and per-character original spans against
Hugging Face `tokenizers` (the reference), on text with accents, full-width forms, emoji,
combining marks and control characters."""

import json
import random

import pytest

from kbert.text.normalizers import AlignedText, check_normalizer, normalize

TRICKY = [
    "e\u0301",
    "\u0301",
    "\u0323\u0302",
    "é",
    "ệ",
    "Ａ",
    "ｂ",
    "①",
    "ﬁ",
    "ẞ",
    "İ",
    "Σ",
    "😀",
    "👍🏽",
    "\u200b",
    "\ufeff",
    "\x01",
    "한",
    "\u1100\u1161",
    "\u212b",
    "½",
    "…",
    "ᾳ",
    "\u3000",
    "``",
    "''",
    "  ",
    "\t",
    "\n",
    "a",
    "B",
    "c",
]


def _texts(count, seed=0):
    draw = random.Random(seed)
    return ["".join(draw.choice(TRICKY) for _ in range(draw.randint(0, 10))) for _ in range(count)]


def _reference_spans(tokenizers, normalizer, text):
    """`(normalized text, per-character original spans)` from `tokenizers` itself: every
    normalized character is a token of its own, so the offsets are the alignment."""
    normalized = normalizer.normalize_str(text)
    vocabulary = {c: i for i, c in enumerate(sorted(set(normalized)))}
    reference = tokenizers.Tokenizer(tokenizers.models.BPE(vocab=vocabulary, merges=[]))
    reference.normalizer = normalizer
    reference.pre_tokenizer = tokenizers.pre_tokenizers.Split(
        tokenizers.Regex(r"[\s\S]"), "isolated"
    )
    return normalized, [tuple(o) for o in reference.encode(text).offsets]


def _normalizers(tokenizers):
    n = tokenizers.normalizers
    return {
        "NFC": n.NFC(),
        "NFD": n.NFD(),
        "NFKC": n.NFKC(),
        "NFKD": n.NFKD(),
        "Lowercase": n.Lowercase(),
        "StripAccents": n.Sequence([n.NFKD(), n.StripAccents()]),
        "Strip": n.Strip(),
        "Replace": n.Sequence([n.Replace("``", '"'), n.Replace(tokenizers.Regex(r"\s+"), "  ")]),
        "Prepend": n.Prepend("▁"),
        "Nmt": n.Sequence([n.Nmt(), n.NFKC(), n.Lowercase()]),
    }


@pytest.mark.parametrize(
    "name",
    [
        "NFC",
        "NFD",
        "NFKC",
        "NFKD",
        "Lowercase",
        "StripAccents",
        "Strip",
        "Replace",
        "Prepend",
        "Nmt",
    ],
)
def test_each_normalizer_gives_the_reference_text_and_alignment(name):
    tokenizers = pytest.importorskip("tokenizers")
    normalizer = _normalizers(tokenizers)[name]
    spec = json.loads(normalizer.__getstate__())
    for text in _texts(400, seed=len(name)):
        expected = _reference_spans(tokenizers, normalizer, text)
        aligned = normalize(spec, text)
        spans = [aligned.original_span(i, i + 1) for i in range(len(aligned.text))]
        assert (aligned.text, spans) == expected, (name, text)


def test_the_alignment_follows_the_reference_rules():
    aligned = AlignedText("ab").prepend("__")
    assert aligned.text == "__ab" and aligned.spans == [(0, 1), (0, 1), (0, 1), (1, 2)]
    # "ß" lowercased from "ẞ" replaces it; "İ" lowercases to two characters, both its own.
    lowered = normalize({"type": "Lowercase"}, "İx")
    assert lowered.text == "i̇x" and lowered.spans == [(0, 1), (0, 1), (1, 2)]
    # A composed character keeps its first part's span.
    composed = normalize({"type": "NFC"}, "e\u0301!")
    assert composed.text == "é!" and composed.spans == [(0, 1), (2, 3)]
    assert composed.original_span(0, 2) == (0, 3) and composed.original_span(2, 2) == (3, 3)


def test_unsupported_normalizers_are_named():
    with pytest.raises(ValueError, match="normalizer 'BertNormalizer' is not supported"):
        check_normalizer({"type": "Sequence", "normalizers": [{"type": "BertNormalizer"}]})
    with pytest.raises(ValueError, match="pattern .* is not supported"):
        check_normalizer({"type": "Replace", "pattern": {"Glob": "*"}, "content": ""})
    assert check_normalizer(None) is None
