"""Multi-head scaled dot-product attention with named projections."""

import math

import keras
from keras import ops

from kbert.layers.dropout import Dropout
from kbert.layers.initializers import clone_initializer
from kbert.layers.masks import MASK_VALUE, attention_bias
from kbert.layers.unpadding import apply_to_real_tokens


@keras.saving.register_keras_serializable(package="kbert")
class MultiHeadAttention(keras.layers.Layer):
    """Multi-head self-attention (Vaswani et al. 2017) as BERT and GPT-2 use it.

    The projections are four named `Dense` sublayers, `query`, `key`, `value` and `output`, so
    adaptation wrappers (LoRA on `query`/`value`, say) can replace one of them without touching
    this code. Scores and softmax run in float32 even under a bfloat16 policy.

    Args:
        num_heads: int. Number of attention heads.
        hidden_dim: int. Model width; must be divisible by `num_heads`.
        dropout: float, default 0.0. Dropout on the attention probabilities.
        causal: bool, default False. Each position attends only to itself and earlier ones.
        kernel_initializer: initializer, default TruncatedNormal(stddev=0.02) (BERT's).
        skip_padding: bool, default True. Project real tokens only (`kbert.layers.unpadding`);
            outputs at padded positions are then 0.

    Call args:
        inputs: float tensor `(batch, seq, hidden_dim)`.
        padding_mask: int/bool tensor `(batch, seq)`, default None; 1 for real tokens.
        attention_mask: int/bool tensor `(batch, seq, seq)`, default None.
        training: bool, default None.
        return_attention_scores: bool, default False. Also return the probabilities
            `(batch, heads, seq, seq)`.
        cache: float tensor `(batch, 2, heads, max_length, head_dim)`, default None. Keys and
            values of earlier positions, for causal decoding: the new positions' keys and values
            are written at `cache_index`, and the queries attend over the cache, so each new
            token costs one position, not the whole prefix. The updated cache is returned after
            the outputs. Only for causal layers; `padding_mask`, if given, then covers all
            `max_length` cache positions.
        cache_index: int scalar, default None. Absolute position of the first new token.

    Example:
    >>> layer = MultiHeadAttention(num_heads=2, hidden_dim=8)
    >>> tuple(layer(keras.ops.ones((1, 3, 8))).shape)
    (1, 3, 8)
    """

    def __init__(
        self,
        num_heads,
        hidden_dim,
        dropout=0.0,
        causal=False,
        kernel_initializer=None,
        skip_padding=True,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if hidden_dim % num_heads != 0:
            raise ValueError(
                f"hidden_dim must be divisible by num_heads; received hidden_dim={hidden_dim}, "
                f"num_heads={num_heads}"
            )
        self.num_heads = num_heads
        self.hidden_dim = hidden_dim
        self.head_dim = hidden_dim // num_heads
        self.dropout = dropout
        self.causal = causal
        self.skip_padding = skip_padding
        self.kernel_initializer = keras.initializers.get(
            kernel_initializer or keras.initializers.TruncatedNormal(stddev=0.02)
        )

        def dense(name):
            return keras.layers.Dense(
                hidden_dim,
                kernel_initializer=clone_initializer(self.kernel_initializer),
                dtype=self.dtype_policy,
                name=name,
            )

        self.query = dense("query")
        self.key = dense("key")
        self.value = dense("value")
        self.output_dense = dense("output")
        self.dropout_layer = Dropout(dropout, dtype=self.dtype_policy)

    def build(self, input_shape):
        for layer in (self.query, self.key, self.value, self.output_dense):
            layer.build(input_shape)
        self.built = True

    def split_heads(self, x, batch, seq):
        """Reshapes a projection `(batch, seq, hidden)` to `(batch, heads, seq, head_dim)`."""
        x = ops.reshape(x, (batch, seq, self.num_heads, self.head_dim))
        return ops.transpose(x, (0, 2, 1, 3))  # (batch, heads, seq, head_dim)

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
        batch, seq = ops.shape(inputs)[0], ops.shape(inputs)[1]
        if cache is not None and not self.causal:
            raise ValueError(
                "a key/value cache is for causal attention; this layer has causal=False"
            )
        if cache is not None and cache_index is None:
            raise ValueError("`cache` needs `cache_index`, the position of the first new token")
        real_tokens = padding_mask if self.skip_padding and cache is None else None

        def project(layer, x):
            return apply_to_real_tokens(layer, x, real_tokens)

        def query_key_value(x):
            return self.query(x), self.key(x), self.value(x)

        query, key, value = project(query_key_value, inputs)
        # Scaling the query (seq x head_dim) is cheaper than scaling the scores (seq x seq).
        query = query * ops.cast(1.0 / math.sqrt(self.head_dim), self.compute_dtype)
        query = self.split_heads(query, batch, seq)
        key = self.split_heads(key, batch, seq)
        value = self.split_heads(value, batch, seq)

        if cache is not None:
            key, value, cache, bias = self._use_cache(
                key, value, cache, cache_index, seq, padding_mask
            )
        else:
            bias = attention_bias(
                padding_mask, attention_mask, causal=self.causal, sequence_length=seq
            )

        scores = ops.matmul(query, ops.transpose(key, (0, 1, 3, 2)))  # (batch, heads, seq, keys)
        scores = ops.cast(scores, "float32")
        if bias is not None:
            scores = scores + bias
        probabilities = ops.softmax(scores, axis=-1)
        dropped = self.dropout_layer(ops.cast(probabilities, self.compute_dtype), training=training)
        context = ops.matmul(dropped, value)  # (batch, heads, seq, head_dim)
        context = ops.reshape(ops.transpose(context, (0, 2, 1, 3)), (batch, seq, self.hidden_dim))
        outputs = project(self.output_dense, context)
        results = (outputs,)
        if cache is not None:
            results += (cache,)
        if return_attention_scores:
            results += (probabilities,)
        return results[0] if len(results) == 1 else results

    def _use_cache(self, key, value, cache, cache_index, seq, padding_mask):
        """Writes the new keys/values into the cache; returns them with the causal bias."""
        cache = ops.cast(cache, key.dtype)
        # Keras turns numeric call arguments into float tensors; indices must be integers.
        cache_index = ops.cast(cache_index, "int32")
        start = (0, 0, cache_index, 0)
        key = ops.slice_update(cache[:, 0], start, key)  # (batch, heads, max_length, head_dim)
        value = ops.slice_update(cache[:, 1], start, value)
        max_length = ops.shape(key)[2]
        query_positions = cache_index + ops.arange(seq)
        allowed = ops.arange(max_length)[None, :] <= query_positions[:, None]  # (seq, max_length)
        allowed = allowed[None, None, :, :]
        if padding_mask is not None:
            allowed = ops.logical_and(allowed, ops.cast(padding_mask, "bool")[:, None, None, :])
        bias = ops.where(allowed, 0.0, MASK_VALUE)
        return key, value, ops.stack([key, value], axis=1), bias

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "num_heads": self.num_heads,
                "hidden_dim": self.hidden_dim,
                "dropout": self.dropout,
                "causal": self.causal,
                "skip_padding": self.skip_padding,
                "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
            }
        )
        return config
