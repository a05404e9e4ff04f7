"""Padding a served batch to its longest real row instead of the fixed `sequence_length`.

The preprocessors pack every row to `sequence_length` tokens; a batch of short questions
(TREC-6 averages about 12 tokens) then runs attention over 128 × 128 positions where 16 × 16
would hold every real token. The exported signatures cut each packed batch to its longest real
row, rounded up to a multiple of `PAD_MULTIPLE` (so a server sees a few distinct lengths, not
one per request) and never beyond `sequence_length`. Padding positions are masked out of
attention and skipped by the position-wise layers, so the outputs at real tokens, and every
output that is read from them, are the same up to float rounding.
"""

import tensorflow as tf

from kbert.checks import check_int

PAD_MULTIPLE = 8

# The per-token tensors of `BertPreprocessor` (with alignment) and `LongTextPreprocessor`.
_TOKEN_KEYS = (
    "token_ids",
    "segment_ids",
    "padding_mask",
    "word_ids",
    "start_offsets",
    "end_offsets",
)


def padded_length(padding_mask, sequence_length, multiple=PAD_MULTIPLE):
    """The length a packed batch is cut to: its longest real row rounded up to `multiple`.

    Args:
        padding_mask: int tensor `(rows, sequence_length)`, 1 at real tokens.
        sequence_length: int. The packed length, the most the result can be.
        multiple: int >= 1, default `PAD_MULTIPLE`. Round the length up to a multiple of it.

    Returns:
        int32 scalar tensor in `[1, sequence_length]` (`min(multiple, sequence_length)` for
        an empty batch).

    Example:
    >>> padded_length(tf.constant([[1, 1, 1, 0, 0, 0, 0, 0, 0, 0]]), 10, multiple=4).numpy()
    4
    """
    check_int("sequence_length", sequence_length, 1)
    check_int("multiple", multiple, 1)
    lengths = tf.reduce_sum(tf.cast(padding_mask, tf.int32), axis=1)  # (rows,)
    # An empty batch has no maximum; append a 1 so the result stays in range.
    longest = tf.reduce_max(tf.concat([lengths, [1]], axis=0))
    rounded = (longest + multiple - 1) // multiple * multiple
    return tf.minimum(rounded, sequence_length)


def trim_padding(packed, sequence_length, multiple=PAD_MULTIPLE):
    """Cuts every `(rows, sequence_length)` tensor of a packed batch to `padded_length`.

    Args:
        packed: dict of tensors from a preprocessor, with `padding_mask`. The per-token
            tensors (`token_ids`, `segment_ids`, `padding_mask`, `word_ids`, `start_offsets`,
            `end_offsets`) are cut; the rest (`text_index`, `tokens`, ...) pass through.
        sequence_length: int. The length the preprocessor packed to.
        multiple: int >= 1, default `PAD_MULTIPLE`.

    Returns:
        dict with the same keys.

    Raises:
        ValueError: if `packed` has no `padding_mask`, or its `padding_mask` is not
            `(rows, sequence_length)`.

    Example:
    >>> packed = {"token_ids": tf.constant([[2, 5, 3, 0, 0, 0]]),
    ...           "padding_mask": tf.constant([[1, 1, 1, 0, 0, 0]]),
    ...           "tokens": tf.constant([3])}
    >>> trim_padding(packed, 6, multiple=2)["token_ids"].numpy().tolist()
    [[2, 5, 3, 0]]
    """
    if "padding_mask" not in packed:
        raise ValueError(f"packed must hold a padding_mask; received keys {sorted(packed)}")
    mask = packed["padding_mask"]
    if mask.shape.rank != 2 or mask.shape[1] not in (None, sequence_length):
        raise ValueError(
            f"packed padding_mask must be (rows, sequence_length={sequence_length}); "
            f"received shape {mask.shape}"
        )
    length = padded_length(mask, sequence_length, multiple)
    return {
        key: value[:, :length] if key in _TOKEN_KEYS else value for key, value in packed.items()
    }
