import keras
import numpy as np
import pytest

from kbert.layers.multi_head_attention import MultiHeadAttention
from kbert.layers.prefix_tuning import PrefixAttention
from tests.layer_test_case import run_layer_test

X = np.random.default_rng(1).normal(size=(2, 4, 16)).astype("float32")
MASK = np.array([[1, 1, 1, 0], [1, 1, 1, 1]], "int32")


def test_layer_end_to_end():
    run_layer_test(
        PrefixAttention,
        {"attention": MultiHeadAttention(2, 16), "prefix_length": 3},
        X,
        call_kwargs={"padding_mask": MASK},
        expected_output_shape=(2, 4, 16),
        expected_num_trainable_weights=10,
        zero_gradient_weights=("key/bias",),
    )


def _reference(attention, prefix_k, prefix_v, x, mask):
    """Attention over [prefix; x] keys/values, in numpy."""

    def dense(layer, h):
        return h @ np.array(layer.kernel) + np.array(layer.bias)

    heads, head_dim = attention.num_heads, attention.head_dim

    def split(h):
        return h.reshape(h.shape[0], h.shape[1], heads, head_dim).transpose(0, 2, 1, 3)

    batch = x.shape[0]
    q = split(dense(attention.query, x)) / np.sqrt(head_dim)
    k = split(np.concatenate([np.repeat(prefix_k[None], batch, 0), dense(attention.key, x)], 1))
    v = split(np.concatenate([np.repeat(prefix_v[None], batch, 0), dense(attention.value, x)], 1))
    allowed = np.concatenate([np.ones((batch, len(prefix_k))), mask], 1)[:, None, None, :]
    scores = np.where(allowed > 0, q @ k.transpose(0, 1, 3, 2), -1e9)
    p = np.exp(scores - scores.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    context = (p @ v).transpose(0, 2, 1, 3).reshape(batch, x.shape[1], heads * head_dim)
    return dense(attention.output_dense, context)


def test_matches_attention_over_prepended_keys_and_values():
    attention = MultiHeadAttention(2, 16, skip_padding=False)
    layer = PrefixAttention(attention, prefix_length=3)
    out = np.array(layer(X, padding_mask=MASK))
    expected = _reference(
        attention, np.array(layer.key_prefix), np.array(layer.value_prefix), X, MASK
    )
    np.testing.assert_allclose(out, expected, atol=1e-5)


def test_prefix_changes_outputs_and_gets_gradients():
    import tensorflow as tf

    attention = MultiHeadAttention(2, 16)
    layer = PrefixAttention(attention, prefix_length=2)
    assert not np.allclose(
        np.array(layer(X, padding_mask=MASK)), np.array(attention(X, padding_mask=MASK)), atol=1e-6
    )
    with tf.GradientTape() as tape:
        loss = keras.ops.sum(layer(X, padding_mask=MASK) ** 2)
    grads = tape.gradient(loss, [layer.key_prefix, layer.value_prefix])
    assert all(np.abs(np.array(g)).max() > 0 for g in grads)


def test_wrong_layer_is_an_error():
    with pytest.raises(ValueError, match="MultiHeadAttention; received Dense"):
        PrefixAttention(keras.layers.Dense(4))
