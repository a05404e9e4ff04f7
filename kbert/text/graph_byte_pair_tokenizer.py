"""BPE inside graphs: `BytePairTokenizer`'s segmentation as TensorFlow ops, for tf.data and serving.

`BytePairTokenizer` is the readable Python reference; it cannot sit in a SavedModel. This layer
computes the same ids and character offsets with core TensorFlow ops and tf-text's
`RegexSplitWithOffsets` (both in what TF Serving links), in four steps:

1. Special tokens are cut out verbatim (one RE2 alternation, longest first).
2. The rest is cut into words by the pre-tokenizer. RE2 has no lookahead, so GPT-2's
   `\\s+(?!\\S)` is rebuilt from offsets: whitespace runs are split off first; a run followed by
   a word gives all but its last character as one word, and its last character either joins the
   word (a space, which GPT-2's ` ?\\p{L}+` takes) or stands alone. Each piece is then cut by
   the pattern without the lookahead. The classes add the code points of newer Unicode versions
   that the `regex` module knows and RE2 does not (`_unicode_tables.LETTERS_BEYOND_RE2`, ...).
3. Each word starts as its symbols' ids (UTF-8 bytes through GPT-2's byte alphabet, or
   characters with the end-of-word marker and continuing-subword prefix), and a `tf.while_loop`
   merges, in every word at once, the adjacent pair of lowest merge rank (the leftmost of
   equal ones) until no adjacent pair is a merge. Pairs are looked up as `left · V + right` in
   two int64 hash tables (rank, merged id), so the loop runs on integers only.
4. Symbols outside the vocabulary become the unknown token (fused when asked) or are dropped;
   byte offsets become character offsets.

A `tokenizer.json` pipeline runs too: its normalizer (`graph_normalizers`) rewrites each
stretch between special tokens, and its pre-tokenizer (`graph_pre_tokenizers`) cuts the words
in place of step 2; offsets are then refused where the normalizer or Metaspace rewrote the text.

`benchmarks/tokenizer_parity.py` measures the agreement with the Python tokenizer (and so with
Hugging Face `tokenizers`) on real text.
"""

import keras
import numpy as np
import tensorflow as tf
import tensorflow_text

from kbert.text import _bert_text, _re2_patterns, post_processors
from kbert.text._json_config import component_name
from kbert.text.byte_pair_tokenizer import BytePairTokenizer
from kbert.text.byte_pair_trainer import byte_level_alphabet
from kbert.text.graph_normalizers import check_graph_normalizer, graph_normalize, offsets_refusal
from kbert.text.graph_pre_tokenizers import (
    changes_offsets,
    check_graph_pre_tokenizer,
    graph_pre_tokenize,
)
from kbert.text.graph_tokenizer_layer import GraphTokenizerLayer
from kbert.text.wordpiece_tokenizer import as_texts

# RE2 class bodies for Python `regex`'s \s (Unicode White_Space), \p{L}, \p{N} and \w.
SPACE = r"\t-\r\x{85}\p{Z}"
LETTER = _re2_patterns.LETTER
NUMBER = _re2_patterns.NUMBER
WORD_CHARACTER = _re2_patterns.WORD_CHARACTER

# `PRE_TOKENIZERS`' word patterns in RE2 (not `graph_pre_tokenizers.GRAPH_PRE_TOKENIZERS`, the
# tokenizer.json pre-tokenizer kinds a graph runs); GPT-2's without its lookahead alternative (step 2 above).
GRAPH_WORD_PATTERNS = {
    "gpt2": (
        "'s|'t|'re|'ve|'m|'ll|'d"
        f"| ?[{LETTER}]+| ?[{NUMBER}]+| ?[^{SPACE}{LETTER}{NUMBER}]+|[{SPACE}]+"
    ),
    "whitespace": f"[{WORD_CHARACTER}]+|[^{WORD_CHARACTER}{SPACE}]+",
    "whitespace_split": f"[^{SPACE}]+",
}
_NO_RANK = np.iinfo(np.int64).max
# Marks a continuing piece while detokenizing (a noncharacter, never in text).
_GLUE = "\uffff"


def _static_table(keys, values, default):
    return tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(keys, values), default_value=default
    )


def _split(texts, pattern):
    """`(pieces, starts, ends)`: `texts` (n,) cut at every match of `pattern`, matches kept."""
    return tensorflow_text.regex_split_with_offsets(texts, pattern, pattern)  # (n, None) each


def _splitting_part(pre, byte_level, where):
    """The pre-tokenizer `pre` less a final `ByteLevel` without regex or prefix space (Llama
    3's shape: the splits then go to bytes, which `_start_symbols` does for a byte-level
    model); refuses a byte-level model whose pre-tokenizer does not end so."""
    if not byte_level:
        return pre
    parts = pre.get("pretokenizers") or [] if pre.get("type") == "Sequence" else [pre]
    last = parts[-1] if parts else {}
    if (
        last.get("type") != "ByteLevel"
        or last.get("use_regex", True)
        or last.get("add_prefix_space", True)
    ):
        raise ValueError(
            f"{where}: a byte-level model runs in the graph with ByteLevel as its pre-tokenizer "
            "(with its regex) or as the last of a Sequence without regex or prefix space; "
            f"received pre-tokenizer {component_name(pre)}"
        )
    return {"type": "Sequence", "pretokenizers": parts[:-1]}


@keras.saving.register_keras_serializable(package="kbert")
class GraphBytePairTokenizer(GraphTokenizerLayer):
    """A `BytePairTokenizer` as a Keras layer of graph ops: text in, ids (and offsets) out.

    Args:
        bpe: `BytePairTokenizer`, or its `get_config()` dict. Its role tokens (`pad_token`,
            `cls_token`, `sep_token`, `mask_token`; `with_roles()` adds them) become this
            layer's.
        **kwargs: passed to `keras.layers.Layer`.

    Raises:
        ValueError: `bpe` is not a `BytePairTokenizer`, or its normalizer or pre-tokenizer has
            a component that does not run in graph ops (the message names it).

    Example:
    >>> from kbert.text.byte_pair_trainer import learn_merges
    >>> merges, vocabulary = learn_merges(
    ...     {"low": 5, "lower": 2, "newest": 6, "widest": 3}, num_merges=10,
    ...     reserved_tokens=["[UNK]"])
    >>> layer = GraphBytePairTokenizer(BytePairTokenizer(vocabulary, merges))
    >>> [layer.id_to_token(i) for i in layer(["lowest newer"]).to_list()[0]]
    ['low', 'est</w>', 'n', 'ew', 'e', 'r', '</w>']
    """

    def __init__(self, bpe, **kwargs):
        super().__init__(**kwargs)
        if isinstance(bpe, dict):
            bpe = BytePairTokenizer.from_config(bpe)
        if not isinstance(bpe, BytePairTokenizer):
            raise ValueError(
                f"bpe must be a kbert.text.BytePairTokenizer or its config; received "
                f"{type(bpe).__name__}"
            )
        pre = bpe.pre_tokenizer
        where = "GraphBytePairTokenizer"
        self._normalizer = check_graph_normalizer(bpe.normalizer, where)
        # RoBERTa's ByteLevel (a prefix space, GPT-2's regex) runs on its own path.
        byte_level_file = (
            isinstance(pre, dict)
            and pre.get("type") == "ByteLevel"
            and pre.get("use_regex", True)
            and bpe.byte_level
        )
        self._pipeline = None  # a Hugging Face pre-tokenizer of graph_pre_tokenizers
        if isinstance(pre, dict) and not byte_level_file:
            self._pipeline = _splitting_part(pre, bpe.byte_level, where)
            check_graph_pre_tokenizer(self._pipeline, where, normalized=bpe.normalizer is not None)
        self._offsets_refusal = offsets_refusal(bpe.normalizer)
        if self._offsets_refusal is None and self._pipeline and changes_offsets(self._pipeline):
            self._offsets_refusal = (
                "pre-tokenizer Metaspace writes spaces as a longer character, and the graph ops "
                "do not map its splits back to the text; ids are exact"
            )
        self._pattern_name = (
            "gpt2" if byte_level_file else "pipeline" if self._pipeline is not None else pre
        )
        self._add_prefix_space = byte_level_file and bool(pre.get("add_prefix_space", True))
        # None, or the add_prefix_space of the post-processor that trims offsets past spaces.
        self._trim = post_processors.trimming_prefix_space(bpe.post_processor)
        self.bpe = self.reference = bpe
        self._adopt_roles(bpe.vocabulary_source)
        self._word_pattern = GRAPH_WORD_PATTERNS.get(self._pattern_name)
        specials = sorted(bpe.special_tokens, key=len)[::-1]
        self._special_pattern = "|".join(f"\\Q{token}\\E" for token in specials) or None
        with tf.init_scope():
            self._build_tables()
        self.built = True

    def _build_tables(self):
        bpe, size = self.bpe, self.bpe.vocabulary_size()
        self._size = size
        self._tokens = tf.constant(bpe.vocabulary)
        self._ids = _static_table(
            tf.constant(bpe.vocabulary), tf.range(size, dtype=tf.int64), tf.constant(-1, tf.int64)
        )
        keys, ranks, merged = [], [], []
        for (left, right), rank in bpe.merge_ranks().items():  # a repeated merge: its first rank
            keys.append(bpe.token_to_id(left) * size + bpe.token_to_id(right))
            ranks.append(rank)
            merged.append(bpe.token_to_id(bpe.merged_token(left, right)))
        keys = tf.constant(keys, tf.int64)
        self._ranks = _static_table(keys, tf.constant(ranks, tf.int64), tf.constant(_NO_RANK))
        self._merged = _static_table(keys, tf.constant(merged, tf.int64), tf.constant(-1, tf.int64))
        # Byte-level: byte value → id of its alphabet symbol (-1 when not in the vocabulary).
        symbols = byte_level_alphabet()  # byte value → its symbol, as `bpe` maps bytes
        alphabet = [bpe.token_to_id(symbol) for symbol in symbols]
        self._byte_ids = tf.constant([-1 if i is None else i for i in alphabet], tf.int64)
        self._byte_symbols = tf.constant(symbols)
        self._symbol_bytes = _static_table(  # and back: alphabet symbol → its byte
            tf.constant(symbols), tf.constant([bytes([b]) for b in range(256)]), ""
        )

    # ------------------------------------------------------------------ vocabulary and roles

    def get_vocabulary(self):
        """The tokens, indexed by id (list of str)."""
        return list(self.bpe.vocabulary)

    unknown_token_id = property(lambda self: self.bpe.unknown_token_id, doc="int or None.")

    # ------------------------------------------------------------------ words

    def _segments(self, texts):
        """`(segments, starts, is_special)` (n, None): special tokens and the text between."""
        if self._special_pattern is None:
            segments = tf.RaggedTensor.from_tensor(texts[:, tf.newaxis])
            starts = tf.zeros_like(segments, tf.int64)
        else:
            segments, starts, _ = _split(texts, self._special_pattern)  # (n, segments)
            # Text between matches never matches as a whole, so this finds the matches.
            is_special = tf.ragged.map_flat_values(
                tf.strings.regex_full_match, segments, self._special_pattern
            )
            return segments, starts, is_special
        return segments, starts, tf.zeros_like(segments, tf.bool)

    def _gpt2_chunks(self, segments):
        """GPT-2's whitespace rule: `(chunks, starts)` (n, None) of each segment (n,)."""
        runs, starts, ends = _split(segments, f"[{SPACE}]+")  # (n, runs): spaces and the rest
        flat, begin, end = runs.flat_values, starts.flat_values, ends.flat_values
        row = runs.value_rowids()
        is_space = tf.strings.regex_full_match(flat, f"[{SPACE}]+")
        last_in_row = tf.concat([row[1:] != row[:-1], [True]], axis=0)
        # A space run followed by a word: its last character splits off.
        before_word = is_space & ~last_in_row
        last_char = tf.strings.substr(flat, -1, 1, unit="UTF8_CHAR")
        last_length = tf.strings.length(last_char, unit="BYTE")
        joins = before_word & tf.equal(last_char, " ")
        cut = tf.where(before_word, end - tf.cast(last_length, tf.int64), end)
        # The word after a run whose last character is a space starts one byte earlier.
        joined_before = tf.concat([[False], joins[:-1]], axis=0)
        first_begin = tf.where(joined_before, begin - 1, begin)
        pieces = tf.stack(
            [
                tf.stack([first_begin, cut], axis=1),  # the run less its last char, or the word
                tf.stack([cut, end], axis=1),  # the last character on its own
            ],
            axis=1,
        )  # (runs, 2, 2): per run, two (start, end) candidates
        keep = tf.stack([cut > first_begin, before_word & ~joins], axis=1)  # (runs, 2)
        chosen = tf.boolean_mask(pieces, keep)  # (pieces, 2)
        piece_rows = tf.boolean_mask(tf.stack([row, row], axis=1), keep)
        chunk_starts = tf.RaggedTensor.from_value_rowids(
            chosen[:, 0], piece_rows, nrows=tf.shape(segments, out_type=tf.int64)[0]
        )
        chunks = tf.strings.substr(
            tf.gather(segments, piece_rows), chosen[:, 0], chosen[:, 1] - chosen[:, 0]
        )
        return chunk_starts.with_flat_values(chunks), chunk_starts

    def _words(self, texts):
        """`(words, starts, is_special, floors, first_ends)` (n, None): each text's words and
        special tokens; with a prefix space, per word the start of its segment (-1 for none)
        and the end of the segment's first character (tokens of the prefix span that one)."""
        segments, segment_starts, is_special = self._segments(texts)
        flat = tf.where(is_special.flat_values, "", segments.flat_values)  # (segments,)
        if self._normalizer is not None:
            # Each stretch between special tokens is normalized on its own, as in Python.
            flat = graph_normalize(self._normalizer, flat)
        seg_starts = segment_starts.flat_values  # (segments,)
        floors = tf.fill(tf.shape(flat), tf.constant(-1, tf.int64))
        first_ends = tf.zeros_like(floors)
        if self._add_prefix_space:
            # Hugging Face's ByteLevel adds a space to each non-empty piece that lacks one; its
            # byte sits one before the piece and spans the piece's first character.
            prefixed = (tf.strings.length(flat) > 0) & ~tf.strings.regex_full_match(
                flat, " (?s:.*)"
            )
            flat = tf.where(prefixed, " " + flat, flat)
            first = tf.strings.substr(segments.flat_values, 0, 1, unit="UTF8_CHAR")
            floors = tf.where(prefixed, seg_starts, floors)
            first_ends = seg_starts + tf.cast(tf.strings.length(first), tf.int64)
            seg_starts = seg_starts - tf.cast(prefixed, tf.int64)
        if self._pattern_name == "gpt2":
            chunks, chunk_starts = self._gpt2_chunks(flat)  # (segments, chunks)
            words, starts, _ = _split(chunks.flat_values, self._word_pattern)  # (chunks, w)
            starts = starts + chunk_starts.flat_values[:, tf.newaxis]
            words = chunks.with_flat_values(words).merge_dims(1, 2)  # (segments, words)
            starts = chunks.with_flat_values(starts).merge_dims(1, 2)
        elif self._pipeline is not None:
            words, starts = graph_pre_tokenize(self._pipeline, flat, seg_starts)
        else:
            words, starts, _ = _split(flat, self._word_pattern)  # (segments, words)
            # regex_split also returns the text between matches: here, the spaces.
            word = tf.ragged.map_flat_values(
                lambda w: ~tf.strings.regex_full_match(w, f"[{SPACE}]+"), words
            )
            words = tf.ragged.boolean_mask(words, word)
            starts = tf.ragged.boolean_mask(starts, word)
        per_word = [
            starts.with_flat_values(tf.gather(values, starts.value_rowids()))
            for values in (floors, first_ends)
        ]
        starts = starts + seg_starts[:, tf.newaxis]
        # A special segment is one word of its own, where its empty text had none.
        special = tf.ragged.boolean_mask(segments, is_special).flat_values
        one = tf.cast(is_special.flat_values, tf.int64)
        special_words = tf.RaggedTensor.from_row_lengths(special, one)
        special_starts = tf.RaggedTensor.from_row_lengths(
            tf.boolean_mask(segment_starts.flat_values, is_special.flat_values), one
        )
        flags = tf.concat(
            [
                words.with_flat_values(tf.zeros_like(words.flat_values, tf.bool)),
                special_words.with_flat_values(tf.ones_like(special, tf.bool)),
            ],
            axis=1,
        )  # (segments, words): True for a special token
        words = tf.concat([words, special_words], axis=1)
        starts = tf.concat([starts, special_starts], axis=1)
        per_word = [
            tf.concat([values, tf.ones_like(special_starts) * fill], axis=1)
            for values, fill in zip(per_word, (-1, 0), strict=True)
        ]
        return tuple(
            segments.with_flat_values(values).merge_dims(1, 2)  # (n, words)
            for values in (words, starts, flags, *per_word)
        )

    # ------------------------------------------------------------------ BPE

    def _start_symbols(self, words, starts, is_special):
        """`(ids, starts, ends)` (words, None): each word's start symbols and their byte spans.

        A special token (or, with `ignore_merges`, a byte-level word that is a token) is one
        symbol.
        """
        bpe = self.bpe
        if bpe.byte_level:
            pieces = tf.strings.bytes_split(words)  # (words, bytes)
            values = tf.io.decode_raw(pieces.flat_values, tf.uint8)[:, 0]
            ids = pieces.with_flat_values(tf.gather(self._byte_ids, tf.cast(values, tf.int32)))
            offsets = tf.ragged.range(pieces.row_lengths())
            lengths = tf.ones_like(offsets)
        else:
            pieces, offsets = tf.strings.unicode_split_with_offsets(words, "UTF-8")
            offsets = tf.cast(offsets, tf.int64)
            lengths = pieces.with_flat_values(
                tf.cast(tf.strings.length(pieces.flat_values), tf.int64)
            )
            symbols = pieces.flat_values
            first = tf.equal(offsets.flat_values, 0)
            row_ends = tf.gather(pieces.row_splits[1:], pieces.value_rowids())
            last = tf.equal(tf.range(tf.size(symbols, out_type=tf.int64)), row_ends - 1)
            if bpe.continuing_subword_prefix:
                symbols = tf.where(first, symbols, bpe.continuing_subword_prefix + symbols)
            if bpe.end_of_word and bpe.end_of_word_attached:
                symbols = tf.where(last, symbols + bpe.end_of_word, symbols)
            ids = pieces.with_flat_values(self._ids.lookup(symbols))
            if bpe.end_of_word and not bpe.end_of_word_attached:
                # The marker is a symbol of its own, an empty span at the word's end.
                marker_id = bpe.token_to_id(bpe.end_of_word)
                marker = tf.fill([tf.size(words)], -1 if marker_id is None else marker_id)
                marker_ids = tf.RaggedTensor.from_tensor(tf.cast(marker, tf.int64)[:, tf.newaxis])
                word_lengths = tf.strings.length(words)[:, tf.newaxis]
                ids = tf.concat([ids, marker_ids], axis=1)
                offsets = tf.concat(
                    [offsets, tf.RaggedTensor.from_tensor(tf.cast(word_lengths, tf.int64))], axis=1
                )
                lengths = tf.concat([lengths, tf.zeros_like(marker_ids)], axis=1)
        whole = is_special
        if bpe.ignore_merges and bpe.byte_level:
            alphabet = tf.gather(self._byte_symbols, tf.cast(values, tf.int32))
            joined = tf.strings.reduce_join(pieces.with_flat_values(alphabet), axis=1)
            whole_ids = self._ids.lookup(joined)
            whole = whole | (whole_ids >= 0)
        else:
            whole_ids = self._ids.lookup(words)
        # Rows of single symbols for the whole words, gathered in place of their split rows.
        whole_rows = tf.where(whole)[:, 0]  # (whole words,)
        count = tf.size(words, out_type=tf.int64)
        ones = tf.ones_like(whole_rows)
        position = tf.where(
            whole, count + tf.cumsum(tf.cast(whole, tf.int64), exclusive=True), tf.range(count)
        )
        parts = []
        for split_values, whole_values in (
            (ids, tf.gather(whole_ids, whole_rows)),
            (offsets, tf.zeros_like(whole_rows)),
            (lengths, tf.gather(tf.cast(tf.strings.length(words), tf.int64), whole_rows)),
        ):
            both = tf.concat(
                [split_values, tf.RaggedTensor.from_row_lengths(whole_values, ones)], axis=0
            )
            parts.append(tf.gather(both, position))
        ids, offsets, lengths = parts
        begins = offsets + starts[:, tf.newaxis]
        return ids, begins, begins + lengths

    def _merge(self, ids, begins, ends):
        """Applies the merges to every word at once; the same ragged shapes, fewer symbols."""
        size = tf.constant(self._size, tf.int64)

        def step(values, begin, end, splits, _):
            rows = tf.RaggedTensor.from_row_splits(values, splits, validate=False).value_rowids()
            left, right = values[:-1], values[1:]  # (symbols - 1,) each adjacent pair
            pair = (rows[:-1] == rows[1:]) & (left >= 0) & (right >= 0)
            key = left * size + right
            rank = tf.where(pair, self._ranks.lookup(key), _NO_RANK)
            best = tf.math.unsorted_segment_min(rank, rows[:-1], tf.size(splits) - 1)  # (words,)
            candidate = (rank < _NO_RANK) & tf.equal(rank, tf.gather(best, rows[:-1]))
            index = tf.range(tf.size(rank, out_type=tf.int64))
            first = tf.math.unsorted_segment_min(
                tf.where(candidate, index, _NO_RANK), rows[:-1], tf.size(splits) - 1
            )
            merge = candidate & tf.equal(index, tf.gather(first, rows[:-1]))  # (symbols - 1,)
            merged_values = tf.where(merge, self._merged.lookup(key), left)
            merged_end = tf.where(merge, end[1:], end[:-1])
            values = tf.concat([merged_values, values[-1:]], axis=0)
            end = tf.concat([merged_end, end[-1:]], axis=0)
            drop = tf.concat([[False], merge], axis=0)  # the right half of each merge
            keep = ~drop
            merged_per_row = tf.math.unsorted_segment_sum(
                tf.cast(drop, tf.int64), rows, tf.size(splits) - 1
            )
            splits = splits - tf.concat([[0], tf.cumsum(merged_per_row)], axis=0)
            return (
                tf.boolean_mask(values, keep),
                tf.boolean_mask(begin, keep),
                tf.boolean_mask(end, keep),
                splits,
                tf.reduce_any(merge),
            )

        def more(values, begin, end, splits, merged):
            return merged & (tf.size(values) > 1)

        values, begin, end, splits, _ = tf.while_loop(
            more,
            step,
            (ids.flat_values, begins.flat_values, ends.flat_values, ids.row_splits, True),
            shape_invariants=(
                tf.TensorShape([None]),
                tf.TensorShape([None]),
                tf.TensorShape([None]),
                tf.TensorShape([None]),
                tf.TensorShape([]),
            ),
        )
        return tuple(
            tf.RaggedTensor.from_row_splits(v, splits, validate=False) for v in (values, begin, end)
        )

    def _known(self, ids, begins, ends):
        """Symbols outside the vocabulary (-1) → the unknown token (fused if asked) or dropped."""
        bpe = self.bpe
        values, begin, end = ids.flat_values, begins.flat_values, ends.flat_values
        unknown = values < 0
        if bpe.unknown_token is None:
            keep = ~unknown
        else:
            unknown_id = bpe.unknown_token_id
            values = tf.where(unknown, tf.constant(unknown_id, tf.int64), values)
            keep = tf.ones_like(unknown)
            if bpe.fuse_unknown:
                rows = ids.value_rowids()
                after_unknown = tf.concat(
                    [[False], (rows[1:] == rows[:-1]) & tf.equal(values[:-1], unknown_id)], axis=0
                )
                keep = ~(unknown & after_unknown)
                run = tf.cumsum(tf.cast(keep, tf.int64)) - 1  # the kept token each one joins
                end = tf.gather(
                    tf.math.unsorted_segment_max(end, run, tf.reduce_sum(tf.cast(keep, tf.int64))),
                    run,
                )
        return tuple(
            tf.ragged.boolean_mask(ids.with_flat_values(v), ids.with_flat_values(keep))
            for v in (values, begin, end)
        )

    def _tokenize(self, inputs, offsets=True):
        """`(ids, starts, ends)`: (n, None) each, or (None,) for a scalar; offsets in characters
        (`offsets=False`: `(ids,)`)."""
        texts = as_texts(inputs)
        batch = _bert_text.replace_invalid_utf8(
            texts[tf.newaxis] if texts.shape.rank == 0 else texts
        )
        words, starts, is_special, floors, first_ends = self._words(batch)  # (n, words)
        symbols = self._start_symbols(words.flat_values, starts.flat_values, is_special.flat_values)
        ids, begins, ends = self._known(*self._merge(*symbols))  # (words, tokens)
        if self._add_prefix_space:
            rows = begins.value_rowids()  # each token's word
            floor = tf.gather(floors.flat_values, rows)
            begin, end = begins.flat_values, ends.flat_values
            fixed_end = tf.where(
                (floor >= 0) & (end <= floor), tf.gather(first_ends.flat_values, rows), end
            )
            begins = begins.with_flat_values(tf.where(floor >= 0, tf.maximum(begin, floor), begin))
            ends = ends.with_flat_values(fixed_end)
        ids, begins, ends = (
            words.with_flat_values(t).merge_dims(1, 2) for t in (ids, begins, ends)
        )
        if not offsets:
            ids = tf.cast(ids, tf.int32)
            return (ids[0],) if texts.shape.rank == 0 else (ids,)
        begins, ends = _bert_text.byte_to_char_offsets(
            batch, begins, ends, round_down=(True, False)
        )
        if self._trim is not None:
            begins, ends = self._trimmed(ids, begins, ends)
        ids = tf.cast(ids, tf.int32)
        if texts.shape.rank == 0:
            return ids[0], begins[0], ends[0]
        return ids, begins, ends

    def _trimmed(self, ids, begins, ends):
        """Offsets moved past each token's leading and trailing "Ġ" (spaces), as Hugging
        Face's byte-level post-processors do; the first token keeps the one prefix space."""
        tokens = tf.gather(self._tokens, ids.flat_values)  # (tokens,)
        size = tf.strings.length(tokens, unit="UTF8_CHAR")
        leading = size - tf.strings.length(
            tf.strings.regex_replace(tokens, "^Ġ+", ""), unit="UTF8_CHAR"
        )
        trailing = size - tf.strings.length(
            tf.strings.regex_replace(tokens, "Ġ+$", ""), unit="UTF8_CHAR"
        )
        leading, trailing = tf.cast(leading, tf.int64), tf.cast(trailing, tf.int64)
        begin, end = begins.flat_values, ends.flat_values
        position = tf.range(tf.size(begin, out_type=tf.int64)) - tf.gather(
            ids.row_splits, ids.value_rowids()
        )
        first = tf.equal(position, 0) | tf.equal(begin, 0)
        if self._trim:
            leading = tf.where(first & tf.equal(leading, 1), tf.zeros_like(leading), leading)
        begin = tf.where(leading > 0, tf.minimum(begin + leading, end), begin)
        end = tf.where((trailing > 0) & (end >= trailing), tf.maximum(end - trailing, begin), end)
        return begins.with_flat_values(begin), ends.with_flat_values(end)

    def call(self, inputs):
        """Text to ids.

        Args:
            inputs: a string scalar, a 1-D string tensor, or a Python str or list of str.

        Returns:
            A 1-D int32 `tf.Tensor` for a scalar, an int32 `tf.RaggedTensor` (batch, None) for
            a batch.
        """
        return self._tokenize(inputs, offsets=False)[0]

    def tokenize_with_offsets(self, inputs):
        """`(ids, starts, ends)`: ids (int32) and each token's character span (int64).

        Offsets count characters of the text (after invalid UTF-8 is replaced by U+FFFD), as
        `BytePairTokenizer.tokenize_with_offsets` does: a byte-level token that holds part of a
        character spans the whole character.

        Raises:
            ValueError: the pipeline has a normalizer or a Metaspace pre-tokenizer, whose
                rewritten text the graph ops do not align with the original (ids still work).
        """
        if self._offsets_refusal is not None:
            raise ValueError(
                f"GraphBytePairTokenizer.tokenize_with_offsets: {self._offsets_refusal}"
            )
        return self._tokenize(inputs)

    def detokenize(self, token_ids):
        """Ids back to text, as `BytePairTokenizer.detokenize` does (role tokens dropped).

        Args:
            token_ids: int tensor, ragged tensor or nested list; 1-D for one text, 2-D for a
                batch.

        Returns:
            A string scalar for 1-D input, a 1-D string tensor for a batch.
        """
        bpe = self.bpe
        token_ids, single = self._id_batch(token_ids, tf.int64)
        dropped = [bpe.token_to_id(t) for t in bpe.role_config().values() if t]
        if bpe.byte_level:
            dropped += [bpe.token_to_id(t) for t in bpe.special_tokens]
        keep = tf.ones_like(token_ids, tf.bool)
        for token_id in dropped:
            keep = keep & tf.not_equal(token_ids, token_id)
        tokens = tf.gather(self._tokens, tf.ragged.boolean_mask(token_ids, keep))  # (n, None)
        if bpe.byte_level:
            symbols = tf.strings.unicode_split(tokens.flat_values, "UTF-8")  # (tokens, symbols)
            values = self._symbol_bytes.lookup(symbols.flat_values)
            joined = tf.strings.reduce_join(
                tokens.with_flat_values(symbols.with_flat_values(values)).merge_dims(1, 2), axis=1
            )
            texts = _bert_text.replace_invalid_utf8(joined)
        else:
            pieces = tokens.flat_values
            prefix = bpe.continuing_subword_prefix
            if prefix:
                glued = tf.strings.regex_full_match(pieces, f"\\Q{prefix}\\E(?s:.*)")
                rest = tf.strings.regex_replace(pieces, f"^\\Q{prefix}\\E", "")
                # A continuing piece joins the text before it, spaces and all; others start a
                # new word after a space.
                pieces = tf.where(glued, _GLUE + rest, " " + pieces)
            if bpe.end_of_word:
                pieces = tf.strings.regex_replace(pieces, f"\\Q{bpe.end_of_word}\\E", " ")
            texts = tf.strings.reduce_join(tokens.with_flat_values(pieces), axis=1)
            if prefix:
                texts = tf.strings.regex_replace(texts, f" *{_GLUE}", "")
                texts = tf.strings.regex_replace(texts, "  +", " ")
            texts = tf.strings.strip(texts)
        return texts[0] if single else texts

    def get_config(self):
        config = super().get_config()
        config["bpe"] = self.bpe.get_config()
        return config
