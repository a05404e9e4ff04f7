"""`BytePairTokenizer`: merges applied by rank, offsets, decoding, files, and parity with
Hugging Face `tokenizers` on a tokenizer.json it trained."""

import pytest
import regex

from kbert.text.byte_pair_tokenizer import PRE_TOKENIZERS, BytePairTokenizer
from kbert.text.byte_pair_trainer import learn_merges

TEXTS = [
    "How far is it from Denver to Aspen ?",
    "What county is Modesto , California in ?",
    "Who was Galileo?",
    "What is an atom ?",
    "When did Hawaii become a state ?",
    "the lowest newer widest newest low lower",
    "Ünïcödé façade naïve café — 東京 😀 done.",
] * 3


@pytest.fixture
def chapter():
    merges, vocabulary = learn_merges(
        {"low": 5, "lower": 2, "newest": 6, "widest": 3}, num_merges=10, reserved_tokens=["[UNK]"]
    )
    return BytePairTokenizer(vocabulary, merges)


def _tokens(tokenizer, text):
    return [tokenizer.id_to_token(i) for i in tokenizer.tokenize(text)]


def test_merges_apply_in_the_order_learned(chapter):
    assert _tokens(chapter, "newest lowest") == ["newest</w>", "low", "est</w>"]
    assert _tokens(chapter, "lower") == ["low", "e", "r", "</w>"]  # "er" was never merged
    # A character never seen in training is the unknown token, with its own offsets.
    ids, starts, ends = chapter.tokenize_with_offsets("low z")
    assert [chapter.id_to_token(i) for i in ids] == ["low</w>", "[UNK]", "</w>"]
    assert list(zip(starts, ends, strict=True)) == [(0, 3), (4, 5), (5, 5)]


def test_offsets_slice_the_text_and_ids_decode_back():
    tokenizer = BytePairTokenizer.train(TEXTS, vocabulary_size=300)
    for text in TEXTS[:6]:
        ids, starts, ends = tokenizer.tokenize_with_offsets(text)
        pieces = [tokenizer.id_to_token(i).removesuffix("</w>") for i in ids]
        assert [text[s:e] for s, e in zip(starts, ends, strict=True)] == pieces
        # Words rejoin with one space between them (the marker does not say "no space").
        words = regex.findall(PRE_TOKENIZERS["whitespace"], text)
        assert tokenizer.detokenize(ids) == " ".join(words)


def test_byte_level_has_no_unknown_text():
    tokenizer = BytePairTokenizer.train(TEXTS, vocabulary_size=400, byte_level=True)
    assert tokenizer.unknown_token is None
    for text in TEXTS + ["never seen: ÆØÅ ∑ 🦜\tand\n tabs"]:
        ids, starts, ends = tokenizer.tokenize_with_offsets(text)
        assert tokenizer.detokenize(ids) == text
        assert starts == sorted(starts) and all(
            0 <= s <= e <= len(text) for s, e in zip(starts, ends, strict=True)
        )
    # A token that is part of one character (an emoji's bytes) spans that whole character.
    ids, starts, ends = tokenizer.tokenize_with_offsets("🦜")
    assert len(ids) >= 2 and set(zip(starts, ends, strict=True)) == {(0, 1)}


def test_special_tokens_are_matched_verbatim():
    tokenizer = BytePairTokenizer.train(
        TEXTS, vocabulary_size=300, special_tokens=("[UNK]", "[SEP]")
    )
    ids, starts, ends = tokenizer.tokenize_with_offsets("Who[SEP]what")
    assert tokenizer.token_to_id("[SEP]") in ids
    assert ("[SEP]", 3, 8) in [
        (tokenizer.id_to_token(i), s, e) for i, s, e in zip(ids, starts, ends, strict=True)
    ]


def test_the_configuration_round_trips_through_a_file(tmp_path, chapter):
    path = tmp_path / "bpe.json"
    chapter.save(path)
    again = BytePairTokenizer.load(path)
    assert again.get_config() == chapter.get_config()
    assert again.tokenize("lowest newer") == chapter.tokenize("lowest newer")


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"pre_tokenizer": "spaces"}, "pre_tokenizer must be one of"),
        ({"unknown_token": "<unk>"}, "unknown_token '<unk>' is not in the vocabulary"),
        ({"merges": [("l", "q")]}, r"merge 0 \('l', 'q'\) makes or uses 'q'"),
        ({"vocabulary": ["a", "a"], "merges": [], "unknown_token": None}, "must not repeat"),
    ],
)
def test_bad_configurations_are_named(chapter, changes, message):
    with pytest.raises(ValueError, match=message):
        BytePairTokenizer.from_config({**chapter.get_config(), **changes})


def _hugging_face(byte_level, tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    models, pre_tokenizers, trainers = (
        tokenizers.models,
        tokenizers.pre_tokenizers,
        tokenizers.trainers,
    )
    if byte_level:
        reference = tokenizers.Tokenizer(models.BPE())
        reference.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        trainer = trainers.BpeTrainer(
            vocab_size=400, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
        )
    else:
        reference = tokenizers.Tokenizer(models.BPE(unk_token="[UNK]", end_of_word_suffix="</w>"))
        reference.pre_tokenizer = pre_tokenizers.Whitespace()
        trainer = trainers.BpeTrainer(
            vocab_size=300, special_tokens=["[UNK]"], end_of_word_suffix="</w>"
        )
    reference.train_from_iterator(TEXTS[:6], trainer)
    path = tmp_path / "tokenizer.json"
    reference.save(str(path))
    return reference, BytePairTokenizer.from_huggingface(path)


@pytest.mark.parametrize("byte_level", [False, True])
def test_a_hugging_face_tokenizer_json_gives_the_same_ids_and_offsets(byte_level, tmp_path):
    reference, tokenizer = _hugging_face(byte_level, tmp_path)
    for text in TEXTS + ["unseen wörds: Zürich 42 times!!", "  spaced   out  "]:
        encoding = reference.encode(text)
        ids, starts, ends = tokenizer.tokenize_with_offsets(text)
        assert ids == encoding.ids, text
        assert list(zip(starts, ends, strict=True)) == [tuple(o) for o in encoding.offsets], text


def test_unsupported_hugging_face_parts_are_named(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    reference = tokenizers.Tokenizer(tokenizers.models.BPE(unk_token="[UNK]"))
    reference.normalizer = tokenizers.normalizers.Sequence(
        [tokenizers.normalizers.NFC(), tokenizers.normalizers.BertNormalizer()]
    )
    reference.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    reference.train_from_iterator(TEXTS, tokenizers.trainers.BpeTrainer(special_tokens=["[UNK]"]))
    path = tmp_path / "tokenizer.json"
    reference.save(str(path))
    with pytest.raises(ValueError, match="normalizer 'BertNormalizer' is not supported; supported"):
        BytePairTokenizer.from_huggingface(path)
    reference.normalizer = tokenizers.normalizers.NFC()
    reference.pre_tokenizer = tokenizers.pre_tokenizers.UnicodeScripts()
    reference.save(str(path))
    with pytest.raises(ValueError, match="pre-tokenizer 'UnicodeScripts' is not supported"):
        BytePairTokenizer.from_huggingface(path)
    wordpiece = tokenizers.Tokenizer(tokenizers.models.WordPiece(unk_token="[UNK]"))
    wordpiece.save(str(path))
    with pytest.raises(ValueError, match="expected a BPE model; received 'WordPiece'"):
        BytePairTokenizer.from_huggingface(path)
