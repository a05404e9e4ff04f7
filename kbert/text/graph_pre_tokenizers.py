"""Hugging Face pre-tokenizers as graph ops: a `tokenizer.json`'s splits of a text, in a graph.

`kbert.text.pre_tokenizers` is the Python reference. Here every split is a string with its
byte start in the text it was cut from, and each pre-tokenizer cuts with tf-text's
`regex_split_with_offsets` (RE2) and then keeps, drops or joins the pieces by the split's
behavior (`Removed`, `Isolated`, `MergedWithPrevious`, `MergedWithNext`, `Contiguous`), all
texts at once:

- Whitespace: runs of word characters and runs of other non-spaces; WhitespaceSplit: runs
  between Unicode White_Space characters;
- Punctuation: each ASCII punctuation or `\\p{P}` character; Digits: each `\\p{N}` character,
  runs of them joined unless `individual_digits`;
- Split: its pattern (`_re2_patterns.to_re2`), `invert` honoured;
- Metaspace: spaces written as its replacement, the replacement prepended by its scheme, and
  the split cut before each replacement;
- Sequence: each in turn.

A piece is a match when the pattern matches all of it: the text between two matches never
does, as the search would have found a match there first. ByteLevel runs only as the whole
pre-tokenizer (`GraphBytePairTokenizer`'s own path); Metaspace rewrites spaces into a longer
character, so offsets after it are refused.
"""

import string

import tensorflow as tf
import tensorflow_text

from kbert.text import _re2_patterns
from kbert.text.pre_tokenizers import check_pre_tokenizer

GRAPH_PRE_TOKENIZERS = (
    "Whitespace",
    "WhitespaceSplit",
    "Punctuation",
    "Digits",
    "Split",
    "Metaspace",
    "Sequence",
)
_PUNCTUATION = "[" + _re2_patterns.literal(string.punctuation) + r"\p{P}]"


def _components(spec):
    if spec.get("type") == "Sequence":
        return [part for inner in spec.get("pretokenizers") or [] for part in _components(inner)]
    return [spec]


def _rule(spec, where):
    """`(pattern, behavior, invert)` of a splitting pre-tokenizer (not Metaspace)."""
    kind = spec["type"]
    if kind == "Whitespace":
        word = _re2_patterns.WORD_CHARACTER
        return f"[{word}]+|[^{word}{_re2_patterns.SPACE}]+", "Removed", True
    if kind == "WhitespaceSplit":
        return f"[{_re2_patterns.SPACE}]", "Removed", False
    if kind == "Punctuation":
        return _PUNCTUATION, spec.get("behavior", "Isolated"), False
    if kind == "Digits":
        behavior = "Isolated" if spec.get("individual_digits") else "Contiguous"
        return f"[{_re2_patterns.NUMBER}]", behavior, False
    pattern = spec["pattern"]
    if "String" in pattern:
        re2 = _re2_patterns.literal(pattern["String"])
    else:
        re2 = _re2_patterns.to_re2(pattern["Regex"], f"{where}: pre-tokenizer Split")
    return re2, spec["behavior"], bool(spec.get("invert"))


def check_graph_pre_tokenizer(spec, where="graph tokenizer", normalized=False):
    """Raises a `ValueError` naming the first component of `spec` that `graph_pre_tokenize`
    cannot compute (`normalized`: a normalizer runs before it); returns `spec`."""
    check_pre_tokenizer(spec, where)
    for part in _components(spec):
        kind = part["type"]
        if kind not in GRAPH_PRE_TOKENIZERS:
            raise ValueError(
                f"{where}: pre-tokenizer {kind} does not run in the graph inside a pipeline; "
                f"supported there: {', '.join(GRAPH_PRE_TOKENIZERS)} (ByteLevel only alone, with "
                "its regex)"
            )
        if kind == "Metaspace" and normalized and part.get("prepend_scheme") == "first":
            # "first" asks whether the split starts the original text, which a normalizer that
            # removes characters hides from the graph.
            raise ValueError(
                f"{where}: pre-tokenizer Metaspace with prepend_scheme 'first' after a "
                "normalizer does not run in the graph; supported there: 'always', 'never', or "
                "'first' with no normalizer"
            )
        if kind != "Metaspace":
            _rule(part, where)
    return spec


def changes_offsets(spec):
    """Whether `spec` rewrites characters (Metaspace), so that byte offsets no longer map."""
    return any(part["type"] == "Metaspace" for part in _components(spec))


def _groups(is_match, rows, behavior):
    """Per piece (flat), whether it starts a new split under `behavior`; None: Removed."""
    same_row = tf.concat([[False], rows[1:] == rows[:-1]], axis=0)
    previous = tf.concat([[False], is_match[:-1]], axis=0) & same_row
    if behavior == "Isolated":
        joins = tf.zeros_like(is_match)
    elif behavior == "MergedWithPrevious":
        # A match joins the piece before it unless that one is a match too.
        joins = same_row & is_match & ~previous
    elif behavior == "MergedWithNext":
        # A non-match joins the match before it (read from the end: the match joins it).
        joins = same_row & previous & ~is_match
    else:  # Contiguous
        previous_kind = tf.concat([[False], is_match[:-1]], axis=0)
        joins = same_row & tf.equal(is_match, previous_kind)
    return ~joins


def _cut(splits, starts, pattern, behavior, invert):
    """`(splits, starts)` (n, None) cut by `pattern` under `behavior`; starts in bytes."""
    pieces, begins, _ = tensorflow_text.regex_split_with_offsets(
        splits.flat_values, pattern, pattern
    )  # (splits, pieces)
    is_match = tf.strings.regex_full_match(pieces.flat_values, pattern)
    if invert:
        is_match = ~is_match
    rows = pieces.value_rowids()  # each piece's split
    begin = begins.flat_values + tf.gather(starts.flat_values, rows)
    if behavior == "Removed":
        keep = ~is_match
        words, begin, rows = (tf.boolean_mask(t, keep) for t in (pieces.flat_values, begin, rows))
    else:
        new = _groups(is_match, rows, behavior)
        group = tf.cumsum(tf.cast(new, tf.int64)) - 1  # each piece's split after joining
        count = tf.reduce_sum(tf.cast(new, tf.int64))
        words = tf.strings.reduce_join(
            tf.RaggedTensor.from_value_rowids(pieces.flat_values, group, nrows=count), axis=1
        )
        begin, rows = tf.boolean_mask(begin, new), tf.boolean_mask(rows, new)
    # Back to one row per text.
    text_rows = tf.gather(splits.value_rowids(), rows)
    nrows = splits.nrows()
    return (
        tf.RaggedTensor.from_value_rowids(words, text_rows, nrows=nrows),
        tf.RaggedTensor.from_value_rowids(begin, text_rows, nrows=nrows),
    )


def _metaspace(splits, starts, segment_starts, spec):
    replacement = spec.get("replacement", "▁")
    scheme = spec.get("prepend_scheme")
    if scheme is None:  # files from before prepend_scheme
        scheme = "always" if spec.get("add_prefix_space", True) else "never"
    flat = tf.strings.regex_replace(splits.flat_values, " ", replacement.replace("\\", "\\\\"))
    opens = tf.strings.regex_full_match(flat, f"{_re2_patterns.literal(replacement)}(?s:.*)")
    if scheme == "always":
        prepend = ~opens
    elif scheme == "first":
        origin = starts.flat_values + tf.gather(segment_starts, splits.value_rowids())
        prepend = ~opens & tf.equal(origin, 0)
    else:
        prepend = tf.zeros_like(opens)
    flat = tf.where(prepend & (tf.strings.length(flat) > 0), replacement + flat, flat)
    splits = splits.with_flat_values(flat)
    if not spec.get("split", True):
        return splits, starts
    # Each replacement starts a split, the text after it joined to it.
    return _cut(splits, starts, _re2_patterns.literal(replacement), "MergedWithNext", False)


def graph_pre_tokenize(spec, segments, segment_starts):
    """`(words, starts)` (n, None): the non-empty splits that `spec` makes of each of
    `segments` (n,), with their byte starts in the segment (see `changes_offsets`).

    Args:
        spec: dict, a `tokenizer.json` pre-tokenizer (`check_graph_pre_tokenizer` passed).
        segments: 1-D string tensor.
        segment_starts: 1-D int64 tensor, each segment's byte start in its text (Metaspace's
            "first" scheme prepends only where this plus the split's start is 0).
    """
    splits = tf.RaggedTensor.from_tensor(segments[:, tf.newaxis])
    starts = tf.zeros_like(splits, tf.int64)
    for part in _components(spec):
        if part["type"] == "Metaspace":
            splits, starts = _metaspace(splits, starts, segment_starts, part)
        else:
            splits, starts = _cut(splits, starts, *_rule(part, "graph tokenizer"))
        keep = tf.strings.length(splits.flat_values) > 0
        mask = splits.with_flat_values(keep)
        splits, starts = (tf.ragged.boolean_mask(t, mask) for t in (splits, starts))
    return splits, starts
