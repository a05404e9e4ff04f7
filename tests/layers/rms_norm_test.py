import keras
import numpy as np
import pytest

from kbert.layers.rms_norm import RMSNorm
from tests.layer_test_case import run_layer_test


def test_rms_norm_layer():
    run_layer_test(
        RMSNorm,
        {"epsilon": 1e-6},
        np.random.default_rng(0).normal(size=(2, 3, 8)).astype("float32"),
        expected_output_shape=(2, 3, 8),
        expected_num_trainable_weights=1,
    )


def test_rms_norm_rescales_without_centering():
    x = np.random.default_rng(1).normal(3.0, 2.0, size=(4, 16)).astype("float32")
    norm = RMSNorm(epsilon=1e-6)
    out = np.asarray(norm(x))
    expected = x / np.sqrt(np.mean(x**2, axis=-1, keepdims=True) + 1e-6)
    np.testing.assert_allclose(out, expected, rtol=1e-5)
    assert np.all(out.mean(axis=-1) > 0.5)  # the mean is not removed (LayerNorm would)
    assert keras.backend.standardize_dtype(RMSNorm(dtype="mixed_bfloat16")(x).dtype) == "bfloat16"
    with pytest.raises(ValueError, match="epsilon must be a number > 0; received 0"):
        RMSNorm(epsilon=0)
