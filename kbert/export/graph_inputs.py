"""In-graph checks and cleaning of a serving signature's inputs, shared by every signature.

TF Serving and the restored `signatures` do not hold a request to the signature's shapes, so the
graph checks them itself; every error names the signature and the input. String inputs are made
valid UTF-8 and cut to a number of characters before tokenization.
"""

import tensorflow as tf

from kbert.text._bert_text import replace_invalid_utf8


def clean_texts(texts, max_input_chars):
    """Valid UTF-8, cut to its first `max_input_chars` characters: (batch,) strings."""
    texts = replace_invalid_utf8(texts)
    return tf.strings.substr(texts, 0, max_input_chars, unit="UTF8_CHAR")


def _runtime_rank(tensor):
    """The rank `tensor` has when the graph runs: int32 scalar.

    `tf.rank(tensor)` is no check here: the restored `signatures` run a (2, 2) tensor through a
    (None,) signature, and there Grappler folds `tf.rank` (even of a shape-hiding
    `PlaceholderWithDefault`) to the signature's static rank. The size of a `tf.where` output
    is only known at run time.
    """
    dims = tf.shape(tensor)  # (rank,) at run time
    return tf.size(tf.where(dims >= 0), out_type=tf.int32)


def assert_rank(tensor, rank, signature, name, expected):
    """Asserts `tensor` has `rank` at run time; the error names the signature and the input."""
    received = _runtime_rank(tensor)
    # The session loader prints Assert's message C-escaped: no quotes in these messages.
    message = tf.strings.format(
        f"signature {signature}, input {name}: expected a rank-{rank} {expected}; received "
        "shape {} (rank {})",
        (tf.shape(tensor), received),
    )
    return tf.debugging.Assert(tf.equal(received, rank), [message])


def checked_texts(signature, **texts):
    """The signature's string inputs, each asserted to be a (batch,) tensor first."""
    checks = [
        assert_rank(text, 1, signature, name, "string tensor [batch]")
        for name, text in texts.items()
    ]
    with tf.control_dependencies(checks):
        return [tf.identity(text) for text in texts.values()]


def assert_in_range(values, low, high, signature, name, expected):
    """Asserts every value is in [low, high); an empty tensor passes."""
    smallest, largest = tf.reduce_min(values), tf.reduce_max(values)  # int max, min if empty
    message = tf.strings.format(
        f"signature {signature}, input {name}: expected {expected}; received values from {{}} "
        "to {}",
        (smallest, largest),
    )
    return tf.debugging.Assert(tf.logical_and(smallest >= low, largest < high), [message])


def same_batch(first, second, first_name, second_name):
    """Asserts two string batches have one size; the error names both inputs."""
    return tf.debugging.assert_equal(
        tf.shape(first)[0],
        tf.shape(second)[0],
        message=f"inputs {first_name} and {second_name} must have the same batch size",
    )


def substrings(texts, starts, ends):
    """`texts[b][starts[b, ...]:ends[b, ...]]` in characters; "" where a start is -1.

    Args:
        texts: (batch,) string tensor of valid UTF-8.
        starts: int32 (batch,) or (batch, k) character offsets, -1 for none.
        ends: int32 of the same shape, end exclusive.

    Returns:
        string tensor shaped like `starts`.
    """
    valid = starts >= 0
    position = tf.where(valid, starts, 0)
    length = tf.where(valid, tf.maximum(ends - starts, 0), 0)
    if starts.shape.rank == 2:
        texts = tf.broadcast_to(texts[:, None], tf.shape(starts))  # (batch, k)
    return tf.strings.substr(texts, position, length, unit="UTF8_CHAR")
