import keras
import numpy as np
import tensorflow as tf

from kbert.layers.unpadding import apply_to_real_tokens

X = np.random.default_rng(3).normal(size=(3, 5, 8)).astype("float32")
MASK = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [1, 0, 0, 0, 0]], "int32")


def _dense():
    layer = keras.layers.Dense(4)
    layer.build((None, 8))
    return layer


def test_real_positions_match_and_padded_ones_are_zero():
    layer = _dense()
    out = np.array(apply_to_real_tokens(layer, X, MASK))
    reference = np.array(layer(X))
    real = MASK.astype(bool)
    np.testing.assert_allclose(out[real], reference[real], atol=1e-6)
    assert (out[~real] == 0).all()


def test_batch_without_padding_takes_the_dense_path():
    layer = _dense()
    full = np.ones_like(MASK)
    np.testing.assert_allclose(np.array(apply_to_real_tokens(layer, X, full)), np.array(layer(X)),
                               atol=1e-6)


def test_gradients_flow_only_from_real_tokens():
    layer = _dense()
    x = tf.constant(X)
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = tf.reduce_sum(apply_to_real_tokens(layer, x, MASK) ** 2)
    gradient = tape.gradient(loss, x).numpy()
    assert (gradient[~MASK.astype(bool)] == 0).all()
    assert np.abs(gradient[MASK.astype(bool)]).min() > 0


def test_xla_compiles_the_dynamic_gather():
    layer = _dense()
    compiled = tf.function(lambda x, m: apply_to_real_tokens(layer, x, m), jit_compile=True)
    np.testing.assert_allclose(compiled(X, MASK).numpy(),
                               np.array(apply_to_real_tokens(layer, X, MASK)), atol=1e-5)
