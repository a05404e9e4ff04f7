"""Role tokens ([PAD], [CLS], [SEP], [MASK]) of the BPE and unigram tokenizers."""

import pytest

from kbert.text import BytePairTokenizer, UnigramTokenizer

TEXTS = ["the lowest newer widest lower low", "newest of the wide roads, said the sailor"] * 3
ROLE_TOKENS = ["[PAD]", "[CLS]", "[SEP]", "[MASK]"]


def trained():
    return {
        "bpe": BytePairTokenizer.train(TEXTS, 60),
        "byte_level_bpe": BytePairTokenizer.train(TEXTS, 280, byte_level=True),
        "unigram": UnigramTokenizer.train(TEXTS, 45),
    }


@pytest.mark.parametrize("kind", ["bpe", "byte_level_bpe", "unigram"])
def test_with_roles_appends_the_tokens_and_keeps_every_id(kind, tmp_path):
    bare = trained()[kind]
    roles = bare.with_roles()
    size = bare.vocabulary_size()
    assert roles.vocabulary_size() == size + 4
    assert [roles.pad_token_id, roles.cls_token_id, roles.sep_token_id, roles.mask_token_id] == [
        size,
        size + 1,
        size + 2,
        size + 3,
    ]
    assert [roles.id_to_token(size + i) for i in range(4)] == ROLE_TOKENS
    assert set(range(size, size + 4)) <= set(roles.special_token_ids)
    for text in TEXTS + ["a [PAD] and [SEP] in the text"]:
        ids = roles.tokenize(text)
        assert ids == bare.tokenize(text)  # the same ids, and never a role token from text
        assert roles.detokenize(ids + [roles.sep_token_id, roles.pad_token_id]) == (
            bare.detokenize(ids)
        )
    # Saved and loaded with its roles; asking again adds nothing.
    roles.save(tmp_path / "tokenizer.json")
    loaded = type(roles).load(tmp_path / "tokenizer.json")
    assert loaded.get_config() == roles.get_config() and loaded.mask_token == "[MASK]"
    assert roles.with_roles().vocabulary_size() == size + 4
    assert bare.pad_token_id is None and bare.with_roles(cls_token=None).cls_token_id is None


def test_roles_must_be_tokens_of_the_vocabulary():
    bare = trained()["bpe"]
    with pytest.raises(
        ValueError,
        match=r"pad_token must be a token of the vocabulary or None; "
        r"received '\[PAD\]'",
    ):
        BytePairTokenizer(**{**bare.get_config(), "pad_token": "[PAD]"})
    with pytest.raises(ValueError, match="sep_token must be a non-empty str or None; received 3"):
        bare.with_roles(sep_token=3)
    unigram = trained()["unigram"]
    with pytest.raises(ValueError, match="mask_token must be a token of the vocabulary"):
        UnigramTokenizer(**{**unigram.get_config(), "mask_token": "<mask>"})


def test_word_ids_follow_each_tokenizers_words():
    bpe = trained()["bpe"]
    text = "the newest, lowest"
    ids, word_ids = bpe.tokenize_with_word_ids(text)
    assert ids == bpe.tokenize(text)
    # "whitespace" pre-tokenizer: the, newest, ",", lowest — four words.
    assert sorted(set(word_ids)) == [0, 1, 2, 3] and word_ids == sorted(word_ids)
    assert [bpe.detokenize([i for i, w in zip(ids, word_ids, strict=True) if w == 2])] == [","]
    unigram = trained()["unigram"]
    ids, word_ids = unigram.tokenize_with_word_ids(text)
    assert ids == unigram.tokenize(text)
    words = [
        unigram.detokenize([i for i, w in zip(ids, word_ids, strict=True) if w == k]).strip()
        for k in range(max(word_ids) + 1)
    ]
    assert words == ["the", "newest,", "lowest"]
    batch, batch_words = unigram.tokenize_batch([text, "low"], with_word_ids=True)
    assert batch[0] == ids and batch_words[0] == word_ids and batch[1] == unigram.tokenize("low")
