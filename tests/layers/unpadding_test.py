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
    np.testing.assert_allclose(
        np.array(apply_to_real_tokens(layer, X, full)), np.array(layer(X)), atol=1e-6
    )


def test_gradients_flow_only_from_real_tokens():
    layer = _dense()
    x = tf.constant(X)
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = tf.reduce_sum(apply_to_real_tokens(layer, x, MASK) ** 2)
    gradient = tape.gradient(loss, x).numpy()
    assert (gradient[~MASK.astype(bool)] == 0).all()
    assert np.abs(gradient[MASK.astype(bool)]).min() > 0


def test_xla_runs_the_padded_tensor():
    """Under XLA the gather would cost (serial scatter), so the layer sees every position."""
    layer = _dense()
    compiled = tf.function(lambda x, m: apply_to_real_tokens(layer, x, m), jit_compile=True)
    np.testing.assert_allclose(compiled(X, MASK).numpy(), np.array(layer(X)), atol=1e-5)
    nested = tf.function(lambda x, m: compiled(x, m))
    np.testing.assert_allclose(nested(X, MASK).numpy(), np.array(layer(X)), atol=1e-5)
    plain = tf.function(lambda x, m: apply_to_real_tokens(layer, x, m))
    assert (plain(X, MASK).numpy()[~MASK.astype(bool)] == 0).all()


def test_tuple_outputs_share_one_gather():
    first, second = _dense(), _dense()
    out_a, out_b = apply_to_real_tokens(lambda h: (first(h), second(h)), X, MASK)
    real = MASK.astype(bool)
    np.testing.assert_allclose(np.array(out_a)[real], np.array(first(X))[real], atol=1e-6)
    np.testing.assert_allclose(np.array(out_b)[real], np.array(second(X))[real], atol=1e-6)
