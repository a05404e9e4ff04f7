import numpy as np
import pytest

from kbert.layers import TransformerBlock
from tests.layer_test_case import run_layer_test

X = np.random.default_rng(2).normal(size=(2, 6, 16)).astype("float32")
PADDING = np.array([[1] * 6, [1] * 4 + [0] * 2], "int32")


@pytest.mark.parametrize("norm_first", [False, True])
def test_layer_end_to_end(norm_first):
    run_layer_test(
        TransformerBlock,
        {"num_heads": 2, "hidden_dim": 16, "intermediate_dim": 32, "norm_first": norm_first},
        X,
        {"padding_mask": PADDING},
        expected_output_shape=(2, 6, 16),
        expected_num_trainable_weights=16,
        zero_gradient_weights=("key/bias",),
    )


def _layer_norm(x, layer):
    mean = x.mean(-1, keepdims=True)
    var = x.var(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + layer.epsilon) * np.array(layer.gamma) + np.array(layer.beta)


@pytest.mark.parametrize("norm_first", [False, True])
def test_residual_and_norm_arrangement(norm_first):
    block = TransformerBlock(2, 16, 32, norm_first=norm_first)
    out = np.array(block(X, padding_mask=PADDING))
    attend = lambda x: np.array(block.attention(x, padding_mask=PADDING))  # noqa: E731
    ffn = lambda x: np.array(block.feed_forward(x))  # noqa: E731
    if norm_first:
        h = X + attend(_layer_norm(X, block.attention_norm))
        expected = h + ffn(_layer_norm(h, block.feed_forward_norm))
    else:
        h = _layer_norm(X + attend(X), block.attention_norm)
        expected = _layer_norm(h + ffn(h), block.feed_forward_norm)
    real = PADDING.astype(bool)
    np.testing.assert_allclose(out[real], expected[real], atol=1e-4)


def test_skip_padding_keeps_real_positions():
    fast = TransformerBlock(2, 16, 32, dropout=0.0, attention_dropout=0.0)
    plain = TransformerBlock(2, 16, 32, dropout=0.0, attention_dropout=0.0, skip_padding=False)
    fast(X)
    plain(X)
    plain.set_weights(fast.get_weights())
    real = PADDING.astype(bool)
    np.testing.assert_allclose(
        np.array(fast(X, padding_mask=PADDING))[real],
        np.array(plain(X, padding_mask=PADDING))[real],
        atol=1e-5,
    )


def test_sublayers_can_be_wrapped_without_flags():
    """An adaptation wrapper replaces a sublayer attribute; the block calls whatever is there."""
    block = TransformerBlock(2, 16, 32)
    before = np.array(block(X))
    original = block.feed_forward
    seen = []

    def wrapped(inputs, training=None):
        seen.append(np.array(inputs))
        return original(inputs) * 0.0

    block.feed_forward = wrapped
    out = np.array(block(X))
    # The wrapper's output is what the block adds: a zero feed-forward leaves the norm of h.
    (h,) = seen
    np.testing.assert_allclose(out, _layer_norm(h, block.feed_forward_norm), atol=1e-5)
    assert not np.allclose(out, before, atol=1e-3)
