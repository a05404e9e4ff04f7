import keras
import numpy as np
import pytest

from kbert.layers import MultiHeadAttention
from tests.layer_test_case import run_layer_test

RNG = np.random.default_rng(0)
X = RNG.normal(size=(2, 8, 16)).astype("float32")
PADDING = np.array([[1] * 8, [1] * 5 + [0] * 3], "int32")


def test_layer_end_to_end():
    run_layer_test(
        MultiHeadAttention,
        {"num_heads": 2, "hidden_dim": 16, "dropout": 0.1},
        X,
        {"padding_mask": PADDING},
        expected_output_shape=(2, 8, 16),
        expected_num_trainable_weights=8,
        zero_gradient_weights=("key/bias",),
    )


def test_padded_positions_do_not_change_real_outputs():
    layer = MultiHeadAttention(num_heads=2, hidden_dim=16)
    changed = X.copy()
    changed[1, 5:] = RNG.normal(size=(3, 16))
    a = np.array(layer(X, padding_mask=PADDING))
    b = np.array(layer(changed, padding_mask=PADDING))
    np.testing.assert_allclose(a[1, :5], b[1, :5], atol=1e-6)


def test_causal_outputs_ignore_the_future():
    layer = MultiHeadAttention(num_heads=2, hidden_dim=16, causal=True)
    changed = X.copy()
    changed[:, 4:] += 1.0
    a = np.array(layer(X))
    b = np.array(layer(changed))
    np.testing.assert_allclose(a[:, :4], b[:, :4], atol=1e-6)
    assert not np.allclose(a[:, 4:], b[:, 4:])


def test_probabilities_match_a_numpy_softmax():
    layer = MultiHeadAttention(num_heads=2, hidden_dim=16)
    _, probabilities = layer(X, padding_mask=PADDING, return_attention_scores=True)
    probabilities = np.array(probabilities)
    q = (X @ np.array(layer.query.kernel) + np.array(layer.query.bias)).reshape(2, 8, 2, 8)
    k = (X @ np.array(layer.key.kernel) + np.array(layer.key.bias)).reshape(2, 8, 2, 8)
    scores = np.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(8)
    scores = np.where(PADDING[:, None, None, :] == 1, scores, -np.inf)
    expected = np.exp(scores - scores.max(-1, keepdims=True))
    expected /= expected.sum(-1, keepdims=True)
    real_queries = PADDING.astype(bool)  # padded queries are not computed (skip_padding)
    np.testing.assert_allclose(
        probabilities.transpose(0, 2, 1, 3)[real_queries],
        expected.transpose(0, 2, 1, 3)[real_queries],
        atol=1e-5,
    )


def test_bfloat16_policy_keeps_softmax_in_float32():
    layer = MultiHeadAttention(num_heads=2, hidden_dim=16, dtype="mixed_bfloat16")
    output, probabilities = layer(X, return_attention_scores=True)
    assert keras.backend.standardize_dtype(output.dtype) == "bfloat16"
    assert keras.backend.standardize_dtype(probabilities.dtype) == "float32"


def test_indivisible_width_is_an_error():
    with pytest.raises(ValueError, match="hidden_dim=10, num_heads=3"):
        MultiHeadAttention(num_heads=3, hidden_dim=10)
