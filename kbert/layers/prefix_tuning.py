"""Prefix tuning (Li & Liang 2021): trainable key/value positions in front of every attention."""

import math

import keras
from keras import ops

from kbert.layers.masks import attention_bias
from kbert.layers.multi_head_attention import MultiHeadAttention
from kbert.layers.unpadding import apply_to_real_tokens


@keras.saving.register_keras_serializable(package="kbert")
class PrefixAttention(keras.layers.Layer):
    """Self-attention whose keys and values start with `prefix_length` trainable positions.

    Wraps a `MultiHeadAttention` and reuses its `query`, `key`, `value` and `output_dense`
    projections (frozen by `kbert.models.peft.add_prefix_tuning`); only the prefixes train.
    Every query may attend to every prefix position (the padding mask is extended with ones),
    and prefixes are keys and values only: they produce no outputs of their own, so the output
    has the input's shape. The prefixes are learned directly, in key/value space (Li & Liang's
    MLP reparameterisation of them is left out).

    A wrapper around the `key`/`value` Dense projections could not do this: those map each
    input position to one key, so they cannot add positions.

    Args:
        attention: `kbert.layers.MultiHeadAttention`. The wrapped layer.
        prefix_length: int, default 10. Number of prefix positions.
        prefix_initializer: initializer, default RandomNormal(stddev=0.02).

    Call args: as `MultiHeadAttention` (`inputs`, `padding_mask`, `attention_mask`, `training`,
        `return_attention_scores`, whose probabilities then cover `prefix_length + seq` keys);
        a key/value `cache` is not supported.

    Example:
    >>> layer = PrefixAttention(MultiHeadAttention(num_heads=2, hidden_dim=8), prefix_length=3)
    >>> tuple(layer(keras.ops.ones((1, 4, 8)), padding_mask=keras.ops.array([[1, 1, 1, 0]])).shape)
    (1, 4, 8)
    """

    def __init__(self, attention, prefix_length=10, prefix_initializer=None, **kwargs):
        super().__init__(**kwargs)
        if isinstance(attention, dict):
            attention = keras.saving.deserialize_keras_object(attention)
        if not isinstance(attention, MultiHeadAttention):
            raise ValueError(
                f"PrefixAttention wraps a kbert MultiHeadAttention; received "
                f"{type(attention).__name__}"
            )
        if prefix_length < 1:
            raise ValueError(f"prefix_length must be a positive int; received {prefix_length}")
        self.attention = attention
        self.prefix_length = prefix_length
        self.prefix_initializer = keras.initializers.get(
            prefix_initializer or keras.initializers.RandomNormal(stddev=0.02)
        )

    def build(self, input_shape):
        if not self.attention.built:
            self.attention.build(input_shape)
        shape = (self.prefix_length, self.attention.hidden_dim)
        self.key_prefix = self.add_weight(
            name="key_prefix", shape=shape, initializer=self.prefix_initializer
        )
        self.value_prefix = self.add_weight(
            name="value_prefix", shape=shape, initializer=self.prefix_initializer
        )
        self.built = True

    def _prefix_heads(self, prefix, batch):
        attention = self.attention
        prefix = ops.reshape(
            ops.cast(prefix, self.compute_dtype),
            (1, self.prefix_length, attention.num_heads, attention.head_dim),
        )
        prefix = ops.transpose(prefix, (0, 2, 1, 3))  # (1, heads, prefix, head_dim)
        return ops.repeat(prefix, batch, axis=0)  # (batch, heads, prefix, head_dim)

    def call(
        self,
        inputs,
        padding_mask=None,
        attention_mask=None,
        training=None,
        return_attention_scores=False,
        cache=None,
        cache_index=None,
    ):
        if cache is not None:
            raise ValueError("PrefixAttention does not support a key/value cache")
        attention = self.attention
        batch, seq = ops.shape(inputs)[0], ops.shape(inputs)[1]
        real_tokens = padding_mask if attention.skip_padding else None

        def query_key_value(x):
            return attention.query(x), attention.key(x), attention.value(x)

        query, key, value = apply_to_real_tokens(query_key_value, inputs, real_tokens)
        query = query * ops.cast(1.0 / math.sqrt(attention.head_dim), self.compute_dtype)
        query = attention.split_heads(query, batch, seq)  # (batch, heads, seq, head_dim)
        key = ops.concatenate(
            [self._prefix_heads(self.key_prefix, batch), attention.split_heads(key, batch, seq)],
            axis=2,
        )
        value = ops.concatenate(
            [
                self._prefix_heads(self.value_prefix, batch),
                attention.split_heads(value, batch, seq),
            ],
            axis=2,
        )
        # key, value: (batch, heads, prefix + seq, head_dim)

        bias = attention_bias(
            padding_mask, attention_mask, causal=attention.causal, sequence_length=seq
        )  # broadcastable to (batch, 1, seq, seq)
        if bias is not None:
            # Every query may see every prefix position: a zero bias in front of the keys.
            prefix_bias = ops.repeat(ops.zeros_like(bias[..., :1]), self.prefix_length, axis=-1)
            bias = ops.concatenate([prefix_bias, bias], axis=-1)  # (..., prefix + seq)

        scores = ops.cast(ops.matmul(query, ops.transpose(key, (0, 1, 3, 2))), "float32")
        if bias is not None:
            scores = scores + bias  # (batch, heads, seq, prefix + seq)
        probabilities = ops.softmax(scores, axis=-1)
        dropped = attention.dropout_layer(
            ops.cast(probabilities, self.compute_dtype), training=training
        )
        context = ops.matmul(dropped, value)  # (batch, heads, seq, head_dim)
        context = ops.reshape(
            ops.transpose(context, (0, 2, 1, 3)), (batch, seq, attention.hidden_dim)
        )
        outputs = apply_to_real_tokens(attention.output_dense, context, real_tokens)
        return (outputs, probabilities) if return_attention_scores else outputs

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "attention": keras.saving.serialize_keras_object(self.attention),
                "prefix_length": self.prefix_length,
                "prefix_initializer": keras.initializers.serialize(self.prefix_initializer),
            }
        )
        return config
