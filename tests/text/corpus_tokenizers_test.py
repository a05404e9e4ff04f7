"""Tokenizers trained on a pretraining corpus once, kept in a file, and read back."""

import json

import pytest

from kbert.text import BytePairTokenizer, UnigramTokenizer, WordPieceTokenizer
from kbert.text.corpus_tokenizers import (
    TOKENIZER_KINDS,
    load_tokenizer_file,
    tokenizer_file_name,
    train_corpus_tokenizer,
)

DOCUMENTS = [
    ["the old man looked at the sea", "the boat was small"],
    "she opened the letter and read it\nby the fire",
] * 5


@pytest.mark.parametrize("kind", TOKENIZER_KINDS)
def test_each_kind_is_trained_with_the_role_tokens_and_reads_back(tmp_path, kind):
    size = 300 if kind == "byte_level_bpe" else 120  # 256 bytes are its alphabet
    tokenizer, path = train_corpus_tokenizer(DOCUMENTS, kind, size, tmp_path)
    assert path.name == tokenizer_file_name(tokenizer) and path.is_file()
    assert tokenizer.vocabulary_size() <= size
    for role in ("pad_token_id", "cls_token_id", "sep_token_id", "mask_token_id"):
        assert getattr(tokenizer, role) is not None, role
    loaded = load_tokenizer_file(path)
    assert type(loaded) is type(tokenizer)
    if kind == "wordpiece":
        assert loaded.get_vocabulary() == tokenizer.get_vocabulary()
    else:
        assert loaded.get_config() == tokenizer.get_config()
    expected = {
        "wordpiece": WordPieceTokenizer,
        "bpe": BytePairTokenizer,
        "byte_level_bpe": BytePairTokenizer,
        "unigram": UnigramTokenizer,
    }[kind]
    assert isinstance(tokenizer, expected)


def test_an_existing_file_is_reused_not_trained_again(tmp_path):
    (tmp_path / "vocab.txt").write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nthe\n")
    tokenizer, _ = train_corpus_tokenizer(DOCUMENTS, "wordpiece", 120, tmp_path)
    assert tokenizer.vocabulary_size() == 6


def test_wordpiece_takes_extra_tokens_and_the_others_refuse_them(tmp_path):
    tokenizer, _ = train_corpus_tokenizer(DOCUMENTS, "wordpiece", 120, tmp_path, ["<extra_id_0>"])
    assert tokenizer.get_vocabulary()[-1] == "<extra_id_0>"
    with pytest.raises(ValueError, match="WordPiece vocabularies only; received 1 for kind 'bpe'"):
        train_corpus_tokenizer(DOCUMENTS, "bpe", 120, tmp_path / "b", ["<extra_id_0>"])
    with pytest.raises(ValueError, match="kind must be one of"):
        train_corpus_tokenizer(DOCUMENTS, "sentencepiece", 120, tmp_path)


def test_bad_tokenizer_files_are_named(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        load_tokenizer_file(tmp_path / "missing.json")
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    with pytest.raises(ValueError, match="broken.json' is not valid JSON"):
        load_tokenizer_file(broken)
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"model": {"type": "WordLevel"}}))
    with pytest.raises(ValueError, match="other.json' is no kbert tokenizer JSON"):
        load_tokenizer_file(other)
