"""`PrecompiledCharsmap` and the `Precompiled` normalizer: SentencePiece's nmt_nfkc rules, read
from a model that the `sentencepiece` package trains, against Hugging Face `tokenizers`."""

import base64

import pytest

from kbert.text.normalizers import normalize
from kbert.text.precompiled_charsmap import PrecompiledCharsmap
from kbert.text.unigram_tokenizer import protobuf_fields
from tests.text.normalizers_test import _reference_spans, _texts

TEXTS = [
    "Ｆｕｌｌ－ｗｉｄｔｈ １２３ and ﬁne ligatures",
    "Café naïve e\u0301t\u00e9, ① ② ③ … ½",
    "emoji 😀👍🏽 and \u200bzero\ufeffwidth\r\nlines",
] * 20


@pytest.fixture(scope="module")
def charsmap(tmp_path_factory):
    """The precompiled charsmap of a SentencePiece model trained with nmt_nfkc."""
    sentencepiece = pytest.importorskip("sentencepiece")
    directory = tmp_path_factory.mktemp("sp")
    (directory / "corpus.txt").write_text("\n".join(TEXTS), encoding="utf-8")
    sentencepiece.SentencePieceTrainer.train(
        input=str(directory / "corpus.txt"),
        model_prefix=str(directory / "sp"),
        vocab_size=40,
        model_type="unigram",
        normalization_rule_name="nmt_nfkc",
        minloglevel=2,
    )
    fields = protobuf_fields((directory / "sp.model").read_bytes())
    normalizer = dict(protobuf_fields(next(v for n, v in fields if n == 3)))
    return normalizer[2]


def test_every_character_is_replaced_as_the_reference_does(charsmap):
    tokenizers = pytest.importorskip("tokenizers")
    reference = tokenizers.normalizers.Precompiled(charsmap)
    rules = PrecompiledCharsmap(charsmap)
    code_points = [c for c in range(0x30000) if not 0xD800 <= c <= 0xDFFF]
    differ = []
    for code_point in code_points:
        character = chr(code_point)
        ours = rules.replacement(character)
        if (character if ours is None else ours) != reference.normalize_str(character):
            differ.append(hex(code_point))
    assert not differ, differ[:20]
    assert rules.matches("ﬁx") == [(3, "fi")]  # the prefix's bytes and its replacement


def test_the_normalizer_aligns_graphemes_as_the_reference_does(charsmap):
    tokenizers = pytest.importorskip("tokenizers")
    reference = tokenizers.normalizers.Precompiled(charsmap)
    spec = {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(charsmap).decode()}
    for text in TEXTS[:3] + _texts(400, seed=7) + ["Ａ\u0301", "\r\n"]:
        aligned = normalize(spec, text)
        spans = [aligned.original_span(i, i + 1) for i in range(len(aligned.text))]
        assert (aligned.text, spans) == _reference_spans(tokenizers, reference, text), text


def test_a_truncated_charsmap_is_refused():
    with pytest.raises(ValueError, match="declares a trie of"):
        PrecompiledCharsmap(b"\x10\x00\x00\x00abcd")
    assert PrecompiledCharsmap(b"").matches("a") == []
