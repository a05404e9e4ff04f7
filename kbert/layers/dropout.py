"""Dropout that draws half the random bits Keras's does: 16 bits per element, not a float.

`keras.layers.Dropout` on TensorFlow calls `tf.nn.experimental.stateless_dropout`: a uniform
float per element in the input's dtype, a comparison, a scaling and a select, and a select and a
scaling again on the way back. On a 2-core CPU, dropout took a large share of MiniLM-L6's
mixed-bfloat16 training step (docs/results.md#step_profile). This layer draws one 32-bit word per
two elements (`tf.random.stateless_uniform` over the full uint32 range, read as two uint16), keeps
an element when its 16 bits reach `round(rate · 65536)`, and multiplies by one mask that holds the
scaling: the backward pass is that one multiplication.

The dropped share is `round(rate · 65536) / 65536`, within 2^-17 of `rate`, and the kept values are
scaled by the inverse of the kept share, so the expectation of every activation is unchanged, as
in Keras.
"""

import keras

_LEVELS = 1 << 16


@keras.saving.register_keras_serializable(package="kbert")
class Dropout(keras.layers.Dropout):
    """`keras.layers.Dropout` with a cheaper mask on TensorFlow (same arguments, same config).

    The fast path needs the TensorFlow backend, no `noise_shape`, and an even last dimension
    known when the layer is traced; otherwise Keras's own dropout runs.

    Example:
    >>> layer = Dropout(0.5, seed=1)
    >>> x = keras.ops.ones((4, 8))
    >>> bool(keras.ops.all(layer(x) == x))  # inference: the identity
    True
    >>> sorted({float(v) for v in keras.ops.convert_to_numpy(layer(x, training=True)).ravel()})
    [0.0, 2.0]
    """

    def call(self, inputs, training=False):
        threshold = round(self.rate * _LEVELS)
        last = inputs.shape[-1] if inputs.shape.rank else None
        fast = (
            training
            and keras.backend.backend() == "tensorflow"
            and self.noise_shape is None
            and isinstance(last, int)
            and last % 2 == 0
            and 0 < threshold < _LEVELS
        )
        if not fast:
            return super().call(inputs, training=training)
        return _drop(inputs, threshold, self.seed_generator.next())


def _drop(inputs, threshold, seed_state):
    import tensorflow as tf

    # Keras keeps the seed in an int64 variable; TensorFlow's stateless ops want int32.
    seed = tf.cast(tf.math.floormod(seed_state, tf.int32.max - 1), tf.int32)
    shape = tf.shape(inputs)
    words_shape = tf.concat([shape[:-1], [inputs.shape[-1] // 2]], axis=0)
    words = tf.random.stateless_uniform(
        words_shape, seed=seed, minval=None, maxval=None, dtype=tf.uint32
    )
    bits = tf.reshape(tf.bitcast(words, tf.uint16), shape)  # (..., last): 16 bits per element
    keep = bits >= tf.constant(threshold, tf.uint16)
    scale = tf.constant(_LEVELS / (_LEVELS - threshold), inputs.dtype)
    mask = tf.where(keep, scale, tf.zeros((), inputs.dtype))
    return inputs * mask
