import math

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
