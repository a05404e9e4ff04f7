import keras
import numpy as np
import pytest

from kbert.layers.adapter import AdaptedSublayer, Adapter
from kbert.layers.feed_forward import FeedForward
from tests.layer_test_case import run_layer_test

X = np.random.default_rng(1).normal(size=(2, 4, 16)).astype("float32")


def test_adapter_end_to_end():
    # The down-projection's gradient is zero while the up-projection is zero (its init).
    run_layer_test(
        Adapter,
        {"bottleneck_dim": 4},
        X,
        expected_output_shape=(2, 4, 16),
        expected_num_trainable_weights=4,
        zero_gradient_weights=("down/kernel", "down/bias"),
    )


def test_adapted_sublayer_end_to_end():
    run_layer_test(
        AdaptedSublayer,
        {
            "sublayer": keras.layers.Dense(16),
            "adapters": {"a": Adapter(4)},
            "active_adapter": "a",
            "parallel": False,
        },
        X,
        expected_output_shape=(2, 4, 16),
        expected_num_trainable_weights=6,
        zero_gradient_weights=("down/kernel", "down/bias"),
    )


def test_parallel_wraps_a_feed_forward_end_to_end():
    run_layer_test(
        AdaptedSublayer,
        {"sublayer": FeedForward(16, 32), "adapters": Adapter(4, residual=False), "parallel": True},
        X,
        expected_output_shape=(2, 4, 16),
        expected_num_trainable_weights=8,
        zero_gradient_weights=("down/kernel", "down/bias"),
    )


def test_fresh_adapter_is_the_identity_and_parallel_adds_zero():
    np.testing.assert_array_equal(np.array(Adapter(4)(X)), X)
    np.testing.assert_array_equal(np.array(Adapter(4, residual=False)(X)), np.zeros_like(X))


def test_bottleneck_not_below_hidden_is_an_error():
    with pytest.raises(ValueError, match="bottleneck_dim=16"):
        Adapter(16)(X)


def test_switching_adapters():
    dense = keras.layers.Dense(16)
    wrapped = AdaptedSublayer(dense, {"a": Adapter(4), "b": Adapter(4)}, active_adapter="a")
    wrapped(X)
    wrapped.adapters["b"].up.kernel.assign(np.ones((4, 16)))
    a = np.array(wrapped(X))
    wrapped.set_active_adapter("b")
    assert not np.allclose(np.array(wrapped(X)), a)
    wrapped.set_active_adapter(None)
    np.testing.assert_array_equal(np.array(wrapped(X)), np.array(dense(X)))
    with pytest.raises(ValueError, match="no adapter named 'c'"):
        wrapped.set_active_adapter("c")
