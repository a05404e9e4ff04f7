"""BERT normalization and pre-tokenization as TensorFlow graph code, shared by the tokenizer and
the vocabulary trainer so that a vocabulary is learned on exactly the words it will later see.

The reference is Hugging Face `tokenizers`' `BertNormalizer` followed by `BertPreTokenizer`:

1. clean_text deletes the characters in `_unicode_tables.REMOVED` (controls, format characters,
   U+0000, U+FFFD) and turns `WHITESPACE` into spaces;
2. handle_chinese_chars puts spaces around `CJK` ideographs;
3. strip_accents applies NFD (shielding `NFD_EXCEPTIONS`, which ICU decomposes and the
   reference does not) and deletes `NONSPACING_MARKS`;
4. lowercase maps every character on its own (`LOWERCASE_RUNS`, plus U+0130);
5. the pre-tokenizer splits on whitespace and makes every `PUNCTUATION` character a word.

Here the order is turned around so that offsets into the original text come for free: the raw
text is split first (whitespace dropped, punctuation and CJK kept as one-character words, deleted
characters left inside their word so they join its neighbours as clean_text does), and then each
word is normalized on its own. Words that normalize to "" (a lone control character or combining
mark) are dropped, as they never exist for the reference. The split-first order gives the same
words because no character's normalization creates or removes whitespace, punctuation or CJK,
except the four symbols of `DECOMPOSES_TO_PUNCTUATION`, which are split like punctuation when
accents are stripped (checked for every code point by the slow tier).

Only core TensorFlow ops and the classic tf-text ops `RegexSplitWithOffsets` and `NormalizeUTF8`
are used, so graphs run in TF Serving builds that embed tensorflow-text 2.12.
"""

import numpy as np
import tensorflow as tf
import tensorflow_text as text

from kbert.text import _unicode_tables

# U+0130 LATIN CAPITAL LETTER I WITH DOT ABOVE lowercases to two characters; the table below only
# holds one-to-one mappings.
_CAPITAL_I_WITH_DOT = "\u0130"
_CAPITAL_I_WITH_DOT_LOWERCASE = "i\u0307"


def character_class(ranges):
    """Writes inclusive code point ranges as an RE2 character class.

    Args:
        ranges: sequence of `(first, last)` int pairs.

    Returns:
        str, e.g. `"[\\x{41}-\\x{5A}\\x{61}]"`.

    Example:
    >>> character_class([(0x41, 0x5A), (0x61, 0x61)])
    '[\\\\x{41}-\\\\x{5A}\\\\x{61}]'
    """
    parts = []
    for first, last in ranges:
        if first == last:
            parts.append(f"\\x{{{first:X}}}")
        else:
            parts.append(f"\\x{{{first:X}}}-\\x{{{last:X}}}")
    return "[" + "".join(parts) + "]"


REMOVED_CLASS = character_class(_unicode_tables.REMOVED)
WHITESPACE_CLASS = character_class(_unicode_tables.WHITESPACE)
PUNCTUATION_CLASS = character_class(_unicode_tables.PUNCTUATION)
CJK_CLASS = character_class(_unicode_tables.CJK)
NONSPACING_MARK_CLASS = character_class(_unicode_tables.NONSPACING_MARKS)
DECOMPOSES_TO_PUNCTUATION_CLASS = character_class(_unicode_tables.DECOMPOSES_TO_PUNCTUATION)
NFD_EXCEPTION_CLASS = character_class(_unicode_tables.NFD_EXCEPTIONS)
_NFD_EXCEPTIONS = [
    code_point
    for first, last in _unicode_tables.NFD_EXCEPTIONS
    for code_point in range(first, last + 1)
]
# Stand-ins that NFD leaves alone while it runs; private use characters, which clean_text has
# already deleted from the words, so none can be present when they are put in.
_NFD_PLACEHOLDERS = [0xE000 + index for index in range(len(_NFD_EXCEPTIONS))]


def lowercase_mapping():
    """Expands `LOWERCASE_RUNS` into parallel key and value arrays.

    Returns:
        A pair of int64 numpy arrays `(code_points, lowercase_code_points)`.

    Example:
    >>> keys, values = lowercase_mapping()
    >>> int(values[list(keys).index(ord("A"))]) == ord("a")
    True
    """
    keys = []
    values = []
    for first, last, step, delta in _unicode_tables.LOWERCASE_RUNS:
        run = np.arange(first, last + 1, step, dtype=np.int64)
        keys.append(run)
        values.append(run + delta)
    return np.concatenate(keys), np.concatenate(values)


def lowercase_table():
    """Builds the code point -> lowercase code point table used by `normalize_words`.

    A lookup table rather than `tf.strings.lower`: ICU lowercases a final capital sigma to U+03C2
    and knows an older Unicode than the reference; a table in the graph also behaves the same in
    every TF Serving build.

    Returns:
        A `tf.lookup.StaticHashTable` from int64 code points to int64 code points, -1 for
        characters that lowercase to themselves.

    Example:
    >>> table = lowercase_table()
    >>> int(table.lookup(tf.constant(ord("Σ"), tf.int64))) == ord("σ")
    True
    """
    keys, values = lowercase_mapping()
    with tf.init_scope():
        # Lifted out of any tf.function being traced: a table is a resource that must outlive it.
        return tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(
                tf.constant(keys, tf.int64), tf.constant(values, tf.int64)
            ),
            default_value=-1,
        )


def replace_invalid_utf8(texts):
    """Replaces each invalid UTF-8 sequence by U+FFFD, which clean_text then deletes.

    ICU replaces each maximal ill-formed subsequence by one U+FFFD: a lone invalid byte becomes
    one character, a truncated multi-byte sequence also becomes one character.

    Args:
        texts: string `tf.Tensor` of any shape.

    Returns:
        A string `tf.Tensor` of the same shape holding valid UTF-8.

    Example:
    >>> replace_invalid_utf8(tf.constant(b"ab\\xffcd")).numpy().decode()
    'ab\\ufffdcd'
    """
    return tf.strings.unicode_transcode(
        texts,
        input_encoding="UTF-8",
        output_encoding="UTF-8",
        errors="replace",
        replacement_char=0xFFFD,
    )


def split_words(texts, split_chinese_characters=True, strip_accents=True):
    """Splits raw texts into words the way `BertPreTokenizer` splits normalized text.

    Args:
        texts: 1-D string `tf.Tensor` of valid UTF-8 (see `replace_invalid_utf8`) without U+0000
            (`RegexSplitWithOffsets` stops reading a string there).
        split_chinese_characters: bool, default True. Make each CJK ideograph its own word.
        strip_accents: bool, default True. Whether words will be accent-stripped, which turns a
            few symbols into punctuation (`DECOMPOSES_TO_PUNCTUATION`).

    Returns:
        A tuple `(words, starts, ends)` of `tf.RaggedTensor`s shaped (batch, words): the raw
        (not yet normalized) words and their int64 byte offsets into `texts`, end exclusive.

    Example:
    >>> words, _, _ = split_words(tf.constant(["don't stop"]))
    >>> words.to_list()
    [[b'don', b"'", b't', b'stop']]
    """
    kept = PUNCTUATION_CLASS
    if strip_accents:
        kept = f"{kept}|{DECOMPOSES_TO_PUNCTUATION_CLASS}"
    if split_chinese_characters:
        kept = f"{kept}|{CJK_CLASS}"
    delimiters = f"{WHITESPACE_CLASS}+|{kept}"
    return text.regex_split_with_offsets(texts, delimiters, kept)


def decompose(words):
    """NFD as the reference does it: `NFD_EXCEPTIONS` are shielded from ICU's newer tables.

    The shielding (two regex passes per exception) only runs on batches that contain one.

    Args:
        words: string `tf.Tensor` of any shape, without private use characters.

    Returns:
        A string `tf.Tensor` of the same shape.

    Example:
    >>> decompose(tf.constant("e\u0301\u00e9")).numpy().decode() == "e\u0301e\u0301"
    True
    """

    def shielded():
        shielded_words = words
        for code_point, placeholder in zip(_NFD_EXCEPTIONS, _NFD_PLACEHOLDERS, strict=True):
            shielded_words = tf.strings.regex_replace(
                shielded_words, f"\\x{{{code_point:X}}}", chr(placeholder)
            )
        shielded_words = text.normalize_utf8(shielded_words, "NFD")
        for code_point, placeholder in zip(_NFD_EXCEPTIONS, _NFD_PLACEHOLDERS, strict=True):
            shielded_words = tf.strings.regex_replace(
                shielded_words, f"\\x{{{placeholder:X}}}", chr(code_point)
            )
        return shielded_words

    has_exception = tf.strings.regex_full_match(words, f"(?s).*{NFD_EXCEPTION_CLASS}.*")
    return tf.cond(
        tf.reduce_any(has_exception), shielded, lambda: text.normalize_utf8(words, "NFD")
    )


def normalize_words(words, lowercase_lookup, lowercase=True, strip_accents=True):
    """Normalizes single words as `BertNormalizer` does (clean_text, strip_accents, lowercase).

    Args:
        words: string `tf.Tensor` of any shape, each element one word from `split_words`.
        lowercase_lookup: the table from `lowercase_table()`.
        lowercase: bool, default True.
        strip_accents: bool, default True. Decompose (NFD) and drop nonspacing marks.

    Returns:
        A string `tf.Tensor` of the same shape; words made only of deleted characters become "".

    Example:
    >>> normalize_words(tf.constant(["Café", "a\\u200bb"]), lowercase_table()).numpy().tolist()
    [b'cafe', b'ab']
    """
    words = tf.strings.regex_replace(words, REMOVED_CLASS, "")
    if strip_accents:
        words = decompose(words)
        words = tf.strings.regex_replace(words, NONSPACING_MARK_CLASS, "")
    if lowercase:
        if not strip_accents:
            # With strip_accents, NFD has already turned U+0130 into "I" + a dropped mark.
            words = tf.strings.regex_replace(
                words, _CAPITAL_I_WITH_DOT, _CAPITAL_I_WITH_DOT_LOWERCASE
            )
        code_points = tf.cast(tf.strings.unicode_decode(words, "UTF-8"), tf.int64)
        mapped = tf.ragged.map_flat_values(lowercase_lookup.lookup, code_points)
        code_points = tf.ragged.map_flat_values(
            lambda original, lower: tf.where(lower >= 0, lower, original), code_points, mapped
        )
        words = tf.strings.unicode_encode(tf.cast(code_points, tf.int32), "UTF-8")
    return words


def pre_tokenize(
    texts,
    lowercase_lookup,
    lowercase=True,
    strip_accents=True,
    split_chinese_characters=True,
):
    """Normalized, pre-tokenized words of a batch of raw texts, with their byte offsets.

    Args:
        texts: 1-D string `tf.Tensor`, any bytes (invalid UTF-8 is replaced).
        lowercase_lookup: the table from `lowercase_table()`.
        lowercase: bool, default True.
        strip_accents: bool, default True.
        split_chinese_characters: bool, default True.

    Returns:
        A dict with `texts` (the input after `replace_invalid_utf8`, what offsets refer to),
        `words` (normalized, none empty), `raw_words` (the same words before normalization) and
        `starts` (int64 byte offset of each word in `texts`), the last three `tf.RaggedTensor`s
        shaped (batch, words).

    Example:
    >>> pre_tokenize(tf.constant(["Hi, \\u0301 you"]), lowercase_table())["words"].to_list()
    [[b'hi', b',', b'you']]
    """
    texts = replace_invalid_utf8(texts)
    # U+0000 would end the text for the splitter; U+0001 is deleted by clean_text just the same
    # and is also one byte, so offsets do not move.
    texts = tf.strings.regex_replace(texts, "\\x00", "\x01")
    words, starts, _ = split_words(texts, split_chinese_characters, strip_accents)
    normalized = normalize_words(words.flat_values, lowercase_lookup, lowercase, strip_accents)
    # One gather per tensor rather than tf.ragged.boolean_mask, which is slow to trace.
    kept = tf.where(tf.strings.length(normalized) > 0)[:, 0]  # (kept_words,)
    kept_words = tf.RaggedTensor.from_value_rowids(
        tf.gather(normalized, kept),
        tf.gather(words.value_rowids(), kept),
        nrows=words.nrows(),
        validate=False,
    )  # (batch, words)

    def like_kept(ragged):
        return kept_words.with_flat_values(tf.gather(ragged.flat_values, kept))

    return {
        "texts": texts,
        "words": kept_words,
        "raw_words": like_kept(words),
        "starts": like_kept(starts),
    }


def byte_to_char_offsets(strings, *byte_offsets, round_down=False):
    """Converts byte offsets into character (code point) offsets, all in the graph.

    One `searchsorted` over the byte positions of every character of every string, shifted so the
    whole batch forms one sorted sequence; an offset equal to a string's byte length maps to its
    character count, so exclusive end offsets convert too.

    Args:
        strings: 1-D string `tf.Tensor` of valid UTF-8, shape (n,).
        *byte_offsets: one or more int64 `tf.RaggedTensor`s (n, None); row i holds offsets into
            `strings[i]`.
        round_down: bool or a sequence of bools (one per offsets tensor), default False. An
            offset inside a character maps to the next character (an exclusive end) or, with
            True, to that character (a start).

    Returns:
        A list with one int64 `tf.RaggedTensor` per input, with the same row partition.

    Example:
    >>> offsets = tf.ragged.constant([[0, 1, 3]], dtype=tf.int64)
    >>> byte_to_char_offsets(tf.constant(["aé"]), offsets)[0].to_list()
    [[0, 1, 2]]
    """
    _, char_starts = tf.strings.unicode_decode_with_offsets(strings, "UTF-8")  # (n, chars)
    byte_base = tf.cumsum(tf.cast(tf.strings.length(strings), tf.int64), exclusive=True)  # (n,)
    global_starts = char_starts.flat_values + tf.gather(byte_base, char_starts.value_rowids())
    count = tf.size(global_starts, out_type=tf.int64)
    string_ends = byte_base + tf.cast(tf.strings.length(strings), tf.int64)  # (n,)
    if isinstance(round_down, bool):
        round_down = [round_down] * len(byte_offsets)
    converted = []
    for offsets, floor in zip(byte_offsets, round_down, strict=True):
        rows = offsets.value_rowids()  # (num_offsets,) the string of each offset
        queries = offsets.flat_values + tf.gather(byte_base, rows)
        index = tf.searchsorted(global_starts, queries, side="left", out_type=tf.int64)
        if floor:
            # Not on a character's first byte (nor at the string's end): the character before.
            found = tf.gather(global_starts, tf.maximum(tf.minimum(index, count - 1), 0))
            on_boundary = ((index < count) & tf.equal(found, queries)) | tf.equal(
                queries, tf.gather(string_ends, rows)
            )
            index = tf.where(on_boundary, index, index - 1)
        converted.append(offsets.with_flat_values(index - tf.gather(char_starts.row_splits, rows)))
    return converted
