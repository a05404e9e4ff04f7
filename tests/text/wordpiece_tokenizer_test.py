"""Fast tests of WordPieceTokenizer on a tiny hand-written vocabulary.

Every normalization rule of Hugging Face's BertNormalizer/BertPreTokenizer has an explicit
expectation here; the slow tier (parity_test.py) compares against the reference itself.
"""

import pytest
import tensorflow as tf

from kbert.text import WordPieceTokenizer
from tests.text.text_test_case import TINY_VOCABULARY, check_preprocessing_layer, token_strings


def alignment(tokenizer, text):
    outputs = tokenizer.tokenize_with_alignment(text)
    return {key: value.numpy().tolist() for key, value in outputs.items()}


def spans(outputs):
    return list(zip(outputs["start_offsets"], outputs["end_offsets"], strict=True))


# ---------------------------------------------------------------- normalization rules


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Hello, WORLD!", ["hello", ",", "world", "!"]),
        ("Unaffable", ["un", "##aff", "##able"]),  # greedy longest match first
        ("Café naïve Ångström", ["cafe", "naive", "ang", "##strom"]),  # strip accents
        ("ΟΔΟΣ", ["ο", "##δ", "##ο", "##σ"]),  # char by char: final sigma stays σ
        ("ς", ["ς"]),
        ("İstanbul", ["istanbul"]),  # NFD gives I + U+0307, the mark is dropped
        ("ﬁ", ["ﬁ"]),  # no NFKC: the ligature stays
        ("ＡＢＣ", ["[UNK]"]),  # no NFKC: full-width letters are not "abc"
        ("ABC", ["abc"]),
    ],
)
def test_lowercase_and_accents(tokenizer, text, expected):
    assert token_strings(tokenizer, text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("hel\u200blo", ["hello"]),  # zero-width space (Cf) deleted, neighbours joined
        ("a\u200db", ["ab"]),  # zero-width joiner
        ("hel\x00lo", ["hello"]),  # NUL
        ("hel\u00adlo", ["hello"]),  # soft hyphen (Cf)
        ("wor\x0bld", ["world"]),  # vertical tab is a control character: deleted, not a space
        ("wor\x85ld", ["world"]),  # NEL likewise
        ("\ufffd", []),  # the replacement character is deleted
        ("\u0301 ok", ["ok"]),  # a lone combining mark normalizes to nothing
        ("hello\tworld\nthe\r\ncat\u3000sat\xa0!", ["hello", "world", "the", "cat", "sat", "!"]),
        ("hello\u2028world", ["hello", "world"]),
        ("", []),
        ("  \t\n ", []),
    ],
)
def test_clean_text(tokenizer, text, expected):
    assert token_strings(tokenizer, text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("don't", ["don", "'", "t"]),
        ("U.S.A.", ["u", ".", "s", ".", "a", "."]),
        ("3.14", ["3", ".", "14"]),
        ("«hello»¿", ["«", "hello", "»", "¿"]),  # Unicode punctuation
        ("a$b", ["a", "$", "b"]),  # ASCII symbols count as punctuation
        ("a≠b", ["a", "=", "b"]),  # NFD turns U+2260 into "=" + a dropped mark
        ("中文", ["中", "文"]),  # CJK ideographs are words of their own
        ("ab中cd", ["ab", "中", "[UNK]"]),
        ("a\U00020000b", ["a", "[UNK]", "b"]),  # CJK extension B, outside the BMP
        ("\U0001d518", ["[UNK]"]),  # mathematical letter: not lowercased, unknown
    ],
)
def test_pre_tokenization(tokenizer, text, expected):
    assert token_strings(tokenizer, text) == expected


def test_settings_change_normalization(vocabulary):
    cased = WordPieceTokenizer(vocabulary, lowercase=False)  # strip_accents follows: False
    assert token_strings(cased, "Café cafe") == ["[UNK]", "cafe"]
    assert token_strings(cased, "a≠b") == ["[UNK]"]  # no NFD, so no "=" either
    stripped = WordPieceTokenizer(vocabulary, lowercase=False, strip_accents=True)
    assert token_strings(stripped, "café Cafe") == ["cafe", "[UNK]"]
    keep_accents = WordPieceTokenizer(vocabulary, strip_accents=False)
    assert token_strings(keep_accents, "İstanbul") == ["[UNK]"]  # "i" + U+0307
    whole = WordPieceTokenizer(vocabulary, split_chinese_characters=False)
    assert token_strings(whole, "中文") == ["中", "##文"]


def test_long_and_unknown_words(tokenizer, vocabulary):
    assert token_strings(tokenizer, "a" * 100) == ["a"] + ["##a"] * 99
    assert token_strings(tokenizer, "a" * 101) == ["[UNK]"]  # more than 100 characters
    assert token_strings(tokenizer, "é" * 101) == ["[UNK]"]  # counted in characters
    assert token_strings(tokenizer, "xyzzy hello") == ["[UNK]", "hello"]  # one [UNK] per word
    short = WordPieceTokenizer(vocabulary, max_characters_per_word=5)
    assert token_strings(short, "hello helloo") == ["hello", "[UNK]"]


# ---------------------------------------------------------------- shapes and inputs


def test_scalar_gives_tensor_and_batch_gives_ragged(tokenizer):
    scalar = tokenizer("hello world")
    assert isinstance(scalar, tf.Tensor) and scalar.dtype == tf.int32
    assert scalar.numpy().tolist() == [5, 6]
    batch = tokenizer(["hello", "", "world !"])
    assert isinstance(batch, tf.RaggedTensor) and batch.dtype == tf.int32
    assert batch.to_list() == [[5], [], [6, 25]]
    assert tokenizer(tf.constant(["hello"])).to_list() == [[5]]
    assert tokenizer("").shape == (0,)


def test_invalid_utf8_is_replaced_not_fatal(tokenizer):
    # U+FFFD replaces the bad byte and clean_text deletes it, joining "hel" and "lo"; offsets
    # count the replacement as one character.
    assert token_strings(tokenizer, b"hel\xfflo world") == ["hello", "world"]
    outputs = alignment(tokenizer, b"hel\xfflo world")
    assert spans(outputs) == [(0, 6), (7, 12)]
    # A truncated 3-byte sequence is one replacement character, so "ok" starts at 2.
    outputs = alignment(tokenizer, b"\xe2\x82 ok")
    assert outputs["token_ids"] == [50]
    assert (outputs["start_offsets"], outputs["end_offsets"]) == ([2], [4])
    assert tokenizer([b"\xff", b"\xc3"]).to_list() == [[], []]


def test_rejects_non_text_inputs(tokenizer):
    with pytest.raises(ValueError, match="strings"):
        tokenizer(tf.constant([1, 2]))
    with pytest.raises(ValueError, match="received shape"):
        tokenizer(tf.constant([["a", "b"]]))
    with pytest.raises(ValueError, match="RaggedTensor"):
        tokenizer(tf.ragged.constant([["a"], ["b", "c"]]))


def test_hundred_thousand_characters(tokenizer):
    text = "hello " * 16_666 + "cafe"  # 100,000 characters
    assert len(text) == 100_000
    ids = tokenizer(text).numpy()
    assert ids.shape == (16_667,)
    assert (ids[:-1] == 5).all() and ids[-1] == 13
    one_word = alignment(tokenizer, "a" * 100_000)
    assert one_word["token_ids"] == [1]
    assert (one_word["start_offsets"], one_word["end_offsets"]) == ([0], [100_000])


# ---------------------------------------------------------------- alignment


def test_alignment_ascii(tokenizer):
    outputs = alignment(tokenizer, "hello, world")
    assert outputs["token_ids"] == [5, 26, 6]
    assert outputs["word_ids"] == [0, 1, 2]
    assert outputs["start_offsets"] == [0, 5, 7]
    assert outputs["end_offsets"] == [5, 6, 12]
    outputs = alignment(tokenizer, "Unaffable!")
    assert outputs["word_ids"] == [0, 0, 0, 1]
    assert outputs["start_offsets"] == [0, 2, 5, 9]
    assert outputs["end_offsets"] == [2, 5, 9, 10]


def test_alignment_counts_characters_not_bytes(tokenizer):
    outputs = alignment(tokenizer, "😀 中文 Café naïve")
    assert [tokenizer.id_to_token(i) for i in outputs["token_ids"]] == [
        "[UNK]",
        "中",
        "文",
        "cafe",
        "naive",
    ]
    assert outputs["word_ids"] == [0, 1, 2, 3, 4]
    assert outputs["start_offsets"] == [0, 2, 3, 5, 10]
    assert outputs["end_offsets"] == [1, 3, 4, 9, 15]
    emoji = alignment(tokenizer, "👍🏽 ok")  # thumbs up + skin tone: one word of 2 characters
    assert spans(emoji) == [(0, 2), (3, 5)]


def test_alignment_inside_changed_words(tokenizer):
    # Decomposed accents and deleted characters belong to no subword, as in the reference.
    outputs = alignment(tokenizer, "Cafe\u0301 x")
    assert spans(outputs) == [(0, 4), (6, 7)]
    outputs = alignment(tokenizer, "e\u0301te\u0301")
    assert [tokenizer.id_to_token(i) for i in outputs["token_ids"]] == ["et", "##e"]
    assert spans(outputs) == [(0, 3), (3, 4)]
    outputs = alignment(tokenizer, "\u0301 ok")
    assert (outputs["word_ids"], outputs["start_offsets"]) == ([0], [2])


def test_alignment_batch_is_ragged(tokenizer):
    outputs = tokenizer.tokenize_with_alignment(["hello world", "", "Unaffable"])
    assert set(outputs) == {"token_ids", "word_ids", "start_offsets", "end_offsets"}
    for value in outputs.values():
        assert isinstance(value, tf.RaggedTensor) and value.dtype == tf.int32
    assert outputs["word_ids"].to_list() == [[0, 1], [], [0, 0, 0]]
    assert outputs["end_offsets"].to_list() == [[5, 11], [], [2, 5, 9]]


# ---------------------------------------------------------------- vocabulary


def test_vocabulary_api(tokenizer):
    assert tokenizer.vocabulary_size() == len(TINY_VOCABULARY)
    assert tokenizer.get_vocabulary() == TINY_VOCABULARY
    assert tokenizer.token_to_id("hello") == 5
    assert tokenizer.id_to_token(5) == "hello"
    assert (
        tokenizer.pad_token_id,
        tokenizer.unknown_token_id,
        tokenizer.cls_token_id,
        tokenizer.sep_token_id,
        tokenizer.mask_token_id,
    ) == (0, 1, 2, 3, 4)
    with pytest.raises(ValueError, match="'nope' is not in the vocabulary"):
        tokenizer.token_to_id("nope")
    with pytest.raises(ValueError, match="received 999"):
        tokenizer.id_to_token(999)


def test_vocabulary_file_equals_list(tmp_path, vocabulary):
    path = tmp_path / "vocab.txt"
    path.write_bytes(("\r\n".join(vocabulary) + "\r\n").encode("utf-8"))  # trailing \r stripped
    from_file = WordPieceTokenizer(str(path))
    assert from_file.get_vocabulary() == vocabulary
    assert from_file("Unaffable!").numpy().tolist() == [10, 11, 12, 25]
    assert from_file.get_config()["vocabulary"] == vocabulary


def test_missing_special_tokens_are_named(tmp_path, vocabulary):
    incomplete = [t for t in vocabulary if t not in ("[CLS]", "[MASK]")]
    with pytest.raises(ValueError, match=r"missing the special tokens \['\[CLS\]', '\[MASK\]'\]"):
        WordPieceTokenizer(incomplete)
    path = tmp_path / "vocab.txt"
    path.write_text("\n".join(t for t in vocabulary if t not in ("[SEP]", "[UNK]")) + "\n")
    with pytest.raises(ValueError, match=r"vocab\.txt.*\['\[UNK\]', '\[SEP\]'\]"):
        WordPieceTokenizer(str(path))
    with pytest.raises(ValueError, match="does not exist"):
        WordPieceTokenizer(str(tmp_path / "nothing.txt"))
    with pytest.raises(ValueError, match="repeat tokens.*'hello'"):
        WordPieceTokenizer(vocabulary + ["hello"])


def test_differently_named_special_tokens():
    vocabulary = ["<pad>", "<unk>", "<s>", "</s>", "<mask>", "hi"]
    tokenizer = WordPieceTokenizer(
        vocabulary,
        special_tokens=vocabulary[:5],
        unknown_token="<unk>",
        pad_token="<pad>",
        cls_token="<s>",
        sep_token="</s>",
        mask_token="<mask>",
    )
    assert (tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.unknown_token_id) == (
        2,
        3,
        1,
    )
    assert tokenizer("hi ho").numpy().tolist() == [5, 1]


def test_with_added_special_tokens(tokenizer):
    grown = tokenizer.with_added_special_tokens(["[CLS2]", "[SEP]"])
    assert grown.vocabulary_size() == tokenizer.vocabulary_size() + 1
    assert grown.token_to_id("[CLS2]") == tokenizer.vocabulary_size()
    assert grown.token_to_id("[SEP]") == 3  # existing ids do not move
    assert "[CLS2]" in grown.special_tokens
    assert grown("hello [CLS2]").numpy().tolist() == tokenizer("hello [CLS2]").numpy().tolist()
    rebuilt = WordPieceTokenizer.from_config(grown.get_config())
    assert rebuilt.token_to_id("[CLS2]") == len(TINY_VOCABULARY)


def test_detokenize(tokenizer):
    assert tokenizer.detokenize([2, 10, 11, 12, 25, 3, 0, 0]).numpy() == b"[CLS] unaffable ! [SEP]"
    skipped = tokenizer.detokenize([2, 10, 11, 12, 3, 0], skip_special_tokens=True)
    assert skipped.numpy() == b"unaffable"
    batch = tokenizer.detokenize(tf.constant([[5, 6, 0], [11, 12, 0]]))
    assert batch.numpy().tolist() == [b"hello world", b"affable"]
    ragged = tokenizer.detokenize(tokenizer(["Hello, world!", "Unaffable"]))
    assert ragged.numpy().tolist() == [b"hello , world !", b"unaffable"]
    with pytest.raises(ValueError, match="integers"):
        tokenizer.detokenize(tf.constant([1.0]))


# ---------------------------------------------------------------- as a Keras layer


def test_layer_end_to_end(tokenizer):
    batch = tf.constant(["Hello, world!", "", "Unaffable 中文"])
    expected = check_preprocessing_layer(tokenizer, batch)
    assert expected == [[5, 26, 6, 25], [], [10, 11, 12, 37, 38]]


def test_in_tf_data_per_example_and_tf_function_alignment(tokenizer):
    texts = ["Hello, world!", "Unaffable"]
    per_example = tf.data.Dataset.from_tensor_slices(texts).map(tokenizer)
    assert [x.tolist() for x in per_example.as_numpy_iterator()] == [[5, 26, 6, 25], [10, 11, 12]]

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def aligned(texts):
        return tokenizer.tokenize_with_alignment(texts)

    outputs = aligned(tf.constant(texts))
    assert outputs["start_offsets"].to_list() == [[0, 5, 7, 12], [0, 2, 5]]
    assert outputs["word_ids"].to_list() == [[0, 1, 2, 3], [0, 0, 0]]
