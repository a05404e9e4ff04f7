import keras
import numpy as np
import pytest

from kbert.layers.lora import LoRADense
from tests.layer_test_case import run_layer_test

X = np.random.default_rng(1).normal(size=(2, 4, 16)).astype("float32")


def test_layer_end_to_end():
    # A's gradient is zero while B is zero (its init); the base kernel is frozen.
    run_layer_test(
        LoRADense,
        {"dense": keras.layers.Dense(8), "rank": 2, "alpha": 4, "dropout": 0.0},
        X,
        expected_output_shape=(2, 4, 8),
        expected_num_trainable_weights=2,
        zero_gradient_weights=("lora_a",),
    )


def test_starts_equal_to_the_base_and_freezes_it():
    dense = keras.layers.Dense(8, activation="relu")
    layer = LoRADense(dense, rank=2, alpha=4)
    np.testing.assert_allclose(np.array(layer(X)), np.array(dense(X)), atol=1e-6)
    assert [w.name for w in layer.trainable_weights] == ["lora_a", "lora_b"]


def test_merged_kernel_and_outputs():
    dense = keras.layers.Dense(8, activation="tanh")
    layer = LoRADense(dense, rank=2, alpha=6, dropout=0.5)
    layer(X)
    rng = np.random.default_rng(0)
    layer.lora_b.assign(rng.normal(size=(2, 8)))
    a, b, w = np.array(layer.lora_a), np.array(layer.lora_b), np.array(dense.kernel)
    merged = np.array(layer.merged_kernel())
    np.testing.assert_allclose(merged, w + 3.0 * a @ b, atol=1e-6)
    expected = np.tanh(X @ merged + np.array(dense.bias))
    np.testing.assert_allclose(np.array(layer(X, training=False)), expected, atol=1e-5)


def test_a_layer_without_a_kernel_is_an_error():
    with pytest.raises(ValueError, match="'norm'.*LayerNormalization"):
        LoRADense(keras.layers.LayerNormalization(name="norm"))
