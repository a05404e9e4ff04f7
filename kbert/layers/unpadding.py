"""Run a position-wise sublayer on real tokens only ("unpadding").

A batch of sentences padded to 128 positions is often mostly padding (TREC questions average
about 12 tokens). Position-wise sublayers, the feed-forward above all (two thirds of a block's
matmul FLOPs), gain nothing from computing padded positions, so they run on the packed real
tokens and the result is scattered back, with zeros at padded positions. Padded positions are
never attended to, so outputs at real positions are unchanged.

Under XLA (`jit_compile=True`) the sublayer runs on the padded tensor instead: XLA pads dynamic
shapes to their bound, so nothing is saved, and its CPU scatter is a serial loop (a training step
measured 10x slower with the gather kept).
"""

import keras

from kbert.keras_internals import tracing_for_xla


def apply_to_real_tokens(layer, inputs, padding_mask, **kwargs):
    """Returns `layer(inputs)` computed only where `padding_mask` is 1 (0 elsewhere).

    With the TensorFlow backend the real tokens are gathered into a `(tokens, width)` matrix
    first; when a batch has no padding the gather is skipped. Under XLA and with other backends
    the layer runs on the padded tensor.

    Args:
        layer: callable on `(..., width)` tensors that treats every position independently; it
            may return a tensor or a tuple of tensors (e.g. query, key and value projections,
            which then share one gather).
        inputs: float tensor `(batch, seq, width)`.
        padding_mask: int/bool tensor `(batch, seq)`, or None (call the layer directly).
        **kwargs: passed to the layer (e.g. `training`).

    Returns:
        A tensor `(batch, seq, output_width)`, or a tuple of them.

    Example:
    >>> dense = keras.layers.Dense(4)
    >>> out = apply_to_real_tokens(dense, keras.ops.ones((2, 3, 8)), keras.ops.array([[1, 1, 0], [1, 0, 0]]))
    >>> tuple(out.shape)
    (2, 3, 4)
    """
    if padding_mask is None or keras.backend.backend() != "tensorflow" or tracing_for_xla():
        return layer(inputs, **kwargs)
    import tensorflow as tf

    real = tf.reshape(tf.cast(padding_mask, tf.bool), (-1,))  # (batch * seq,)

    def dense_path():
        return layer(inputs, **kwargs)

    def packed_path():
        flat = tf.reshape(inputs, (-1, inputs.shape[-1]))  # (batch * seq, width)
        index = tf.where(real)  # (tokens, 1)
        packed = layer(tf.gather_nd(flat, index), **kwargs)  # (tokens, output_width)
        rows = tf.shape(flat, out_type=tf.int64)[:1]

        def scatter(values):
            width = tf.shape(values, out_type=tf.int64)[1:]
            scattered = tf.scatter_nd(index, values, tf.concat([rows, width], 0))
            return tf.reshape(
                scattered, tf.concat([tf.shape(inputs)[:-1], tf.shape(values)[1:]], 0)
            )

        return tf.nest.map_structure(scatter, packed)

    return tf.cond(tf.reduce_all(real), dense_path, packed_path)
