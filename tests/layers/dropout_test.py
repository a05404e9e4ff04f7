"""kbert.layers.Dropout: Keras's dropout with a 16-bit mask on TensorFlow."""

import keras
import numpy as np
import pytest

from kbert.layers import Dropout
from tests.layer_test_case import run_layer_test


def test_layer_contract():
    run_layer_test(
        Dropout,
        init_kwargs={"rate": 0.25, "seed": 3},
        call_inputs=np.ones((2, 4, 8), dtype="float32"),
        expected_output_shape=(2, 4, 8),
        expected_num_trainable_weights=0,
        run_fit=False,
    )


@pytest.mark.parametrize("rate", [0.1, 0.5, 0.9])
def test_drops_the_share_it_is_given_and_keeps_the_expectation(rate):
    """Over 2**20 draws the dropped share is within 5 sd of the rounded rate and the mean of a
    constant input stays 1 (the kept values are scaled by the kept share's inverse)."""
    x = keras.ops.ones((64, 128, 128), dtype="float32")
    y = keras.ops.convert_to_numpy(Dropout(rate, seed=11)(x, training=True))
    dropped = float(np.mean(y == 0))
    expected = round(rate * 65536) / 65536
    sd = (expected * (1 - expected) / y.size) ** 0.5
    assert abs(dropped - expected) < 5 * sd
    assert abs(float(y.mean()) - 1.0) < 5 * sd / (1 - expected)
    assert np.allclose(np.unique(y[y != 0]), 65536 / (65536 - round(rate * 65536)))


def test_each_call_draws_a_new_mask_and_a_seed_repeats_the_sequence():
    x = keras.ops.ones((8, 64), dtype="float32")
    first, second = Dropout(0.5, seed=5), Dropout(0.5, seed=5)
    a, b = (keras.ops.convert_to_numpy(first(x, training=True)) for _ in range(2))
    assert not np.array_equal(a, b)
    assert np.array_equal(a, keras.ops.convert_to_numpy(second(x, training=True)))


def test_the_gradient_is_the_mask():
    import tensorflow as tf

    x = tf.ones((4, 32))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = Dropout(0.5, seed=2)(x, training=True)
        total = tf.reduce_sum(y)
    gradient = tape.gradient(total, x).numpy()
    np.testing.assert_array_equal(gradient, y.numpy())


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_keeps_the_input_dtype(dtype):
    x = keras.ops.ones((4, 16), dtype=dtype)
    y = Dropout(0.5, seed=1, dtype=dtype)(x, training=True)
    assert keras.backend.standardize_dtype(y.dtype) == dtype
    assert set(np.unique(keras.ops.convert_to_numpy(keras.ops.cast(y, "float32")))) <= {0.0, 2.0}


@pytest.mark.parametrize(
    ("shape", "noise_shape"), [((4, 7), None), ((4, 8), (4, 1)), ((4, 8), None)]
)
def test_odd_widths_and_noise_shapes_take_keras_s_path(shape, noise_shape):
    """An odd last dimension or a noise shape falls back to Keras's dropout, same contract."""
    x = keras.ops.ones(shape)
    y = keras.ops.convert_to_numpy(Dropout(0.5, noise_shape=noise_shape, seed=4)(x, training=True))
    assert set(np.unique(y)) <= {0.0, 2.0}
    if noise_shape is not None:
        assert np.all(y == y[:, :1])  # one draw per row


def test_rate_zero_and_inference_are_the_identity():
    x = keras.ops.convert_to_tensor(np.arange(8, dtype="float32").reshape(2, 4))
    np.testing.assert_array_equal(Dropout(0.0)(x, training=True), x)
    np.testing.assert_array_equal(Dropout(0.5)(x, training=False), x)
