import math

import keras
import numpy as np
import pytest

from kbert.layers import FeedForward, get_activation
from tests.layer_test_case import run_layer_test

X = np.random.default_rng(1).normal(size=(2, 4, 16)).astype("float32")


def test_layer_end_to_end():
    run_layer_test(
        FeedForward,
        {"hidden_dim": 16, "intermediate_dim": 32},
        X,
        expected_output_shape=(2, 4, 16),
        expected_num_trainable_weights=4,
    )


def test_exact_gelu_is_the_erf_form():
    x = np.linspace(-4, 4, 33).astype("float32")
    expected = np.array([v * 0.5 * (1 + math.erf(v / math.sqrt(2))) for v in x])
    np.testing.assert_allclose(np.array(get_activation("gelu")(x)), expected, atol=1e-6)
    # The tanh form differs visibly, which is why checkpoints' names matter.
    assert np.abs(np.array(get_activation("gelu_approximate")(x)) - expected).max() > 1e-4


def test_unknown_activation_is_an_error():
    with pytest.raises(ValueError, match="unknown activation 'gelu_fast'"):
        FeedForward(hidden_dim=4, intermediate_dim=8, activation="gelu_fast")


@pytest.mark.parametrize(("name", "approximate"), [("gelu", False), ("gelu_approximate", True)])
def test_gelus_in_float32_and_their_gradients(name, approximate):
    """The float32 forward pass equals Keras's GELU, its gradient is as close to the float64
    derivative as Keras's; under bfloat16 the output is the float32 value rounded once."""
    import tensorflow as tf

    x = tf.constant(np.linspace(-8, 8, 4001, dtype="float32"))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        ours = get_activation(name)(x)
        reference = keras.activations.gelu(x, approximate=approximate)
        ours_total, reference_total = tf.reduce_sum(ours), tf.reduce_sum(reference)
    np.testing.assert_allclose(ours, reference, atol=2e-6)
    # Against the float64 derivative, ours is as close as Keras's.
    x64 = x.numpy().astype("float64")
    if approximate:
        inner = math.sqrt(2 / math.pi) * (x64 + 0.044715 * x64**3)
        t = np.tanh(inner)
        slope = 0.5 * (1 + t) + 0.5 * x64 * (1 - t**2) * math.sqrt(2 / math.pi) * (
            1 + 3 * 0.044715 * x64**2
        )
    else:
        cdf = 0.5 * (1 + np.vectorize(math.erf)(x64 / math.sqrt(2)))
        slope = cdf + x64 * np.exp(-0.5 * x64**2) / math.sqrt(2 * math.pi)
    ours_error = np.abs(tape.gradient(ours_total, x).numpy() - slope).max()
    reference_error = np.abs(tape.gradient(reference_total, x).numpy() - slope).max()
    assert ours_error <= max(reference_error, 1e-6)
    rounded = get_activation(name)(tf.cast(x, "bfloat16"))
    assert rounded.dtype == tf.bfloat16
    exact = keras.activations.gelu(tf.cast(tf.cast(x, "bfloat16"), "float32"), approximate)
    # Rounded once: at most one bfloat16 step (2**-8 relative) from the float32 value (in the tanh
    # form's left tail, 1 + tanh cancels in float32 too: both sides are within 1e-6 of zero there).
    np.testing.assert_allclose(tf.cast(rounded, "float32"), exact, rtol=2**-8, atol=1e-6)
