"""One transformer block: attention and feed-forward sublayers with residuals and LayerNorm."""

import keras

from kbert.layers.block_adaptation import (
    BlockAdaptation,
    adapted_sublayers,
    build_wrapped_sublayers,
    wrap_sublayers,
)
from kbert.layers.dropout import Dropout
from kbert.layers.feed_forward import FeedForward
from kbert.layers.multi_head_attention import MultiHeadAttention
from kbert.layers.unpadding import apply_to_real_tokens


@keras.saving.register_keras_serializable(package="kbert")
class TransformerBlock(keras.layers.Layer):
    """A transformer block in post-LN (BERT) or pre-LN (GPT-2) arrangement.

    Post-LN (Devlin et al. 2019):  x = LN(x + Drop(Attn(x)));  x = LN(x + Drop(FFN(x)))
    Pre-LN (Radford et al. 2019):  x = x + Drop(Attn(LN(x)));  x = x + Drop(FFN(LN(x)))

    The four sublayers are attributes, `attention`, `attention_norm`, `feed_forward` and
    `feed_forward_norm`. `adaptation` names adapter, LoRA and prefix wrappers; the block puts
    them around its sublayers when it is constructed (`kbert.layers.block_adaptation`), each
    with the call signature of what it wraps, so `call` has no flag for them and `from_config`
    rebuilds an adapted block.

    Args:
        num_heads: int. Attention heads.
        hidden_dim: int. Model width.
        intermediate_dim: int. Feed-forward inner width.
        dropout: float, default 0.1. Dropout on each sublayer's output.
        attention_dropout: float, default 0.1. Dropout on attention probabilities.
        activation: str, default "gelu". Feed-forward activation.
        layer_norm_epsilon: float, default 1e-12 (BERT's; GPT-2 uses 1e-5).
        norm_first: bool, default False. Pre-LN instead of post-LN.
        causal: bool, default False. Causal (left-to-right) attention.
        kernel_initializer: initializer, default TruncatedNormal(stddev=0.02).
        skip_padding: bool, default True. Run the position-wise matmuls (attention projections,
            feed-forward) on real tokens only (see `kbert.layers.unpadding`); outputs at real
            positions are unchanged, padded positions hold other values than with False.
        adaptation: `BlockAdaptation`, its dict, or None (default): the wrappers to build.

    Call args:
        inputs: float tensor `(batch, seq, hidden_dim)`.
        padding_mask: int/bool `(batch, seq)`, default None.
        attention_mask: int/bool `(batch, seq, seq)`, default None.
        training: bool, default None.
        cache, cache_index: the attention's key/value cache for causal decoding (see
            `MultiHeadAttention`); with a cache the block returns `(outputs, cache)`.

    Example:
    >>> block = TransformerBlock(num_heads=2, hidden_dim=8, intermediate_dim=16)
    >>> x = keras.ops.ones((1, 4, 8))
    >>> tuple(block(x, padding_mask=keras.ops.array([[1, 1, 1, 0]])).shape)
    (1, 4, 8)
    """

    def __init__(
        self,
        num_heads,
        hidden_dim,
        intermediate_dim,
        dropout=0.1,
        attention_dropout=0.1,
        activation="gelu",
        layer_norm_epsilon=1e-12,
        norm_first=False,
        causal=False,
        kernel_initializer=None,
        skip_padding=True,
        adaptation=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.num_heads = num_heads
        self.hidden_dim = hidden_dim
        self.intermediate_dim = intermediate_dim
        self.dropout = dropout
        self.attention_dropout = attention_dropout
        self.activation = activation
        self.layer_norm_epsilon = layer_norm_epsilon
        self.norm_first = norm_first
        self.causal = causal
        self.skip_padding = skip_padding
        self.kernel_initializer = keras.initializers.get(
            kernel_initializer or keras.initializers.TruncatedNormal(stddev=0.02)
        )
        policy = self.dtype_policy
        self.attention = MultiHeadAttention(
            num_heads,
            hidden_dim,
            dropout=attention_dropout,
            causal=causal,
            kernel_initializer=self.kernel_initializer,
            skip_padding=skip_padding,
            dtype=policy,
            name="attention",
        )
        self.attention_norm = keras.layers.LayerNormalization(
            epsilon=layer_norm_epsilon, dtype=policy, name="attention_norm"
        )
        self.attention_dropout_layer = Dropout(dropout, dtype=policy)
        self.feed_forward = FeedForward(
            hidden_dim,
            intermediate_dim,
            activation=activation,
            kernel_initializer=self.kernel_initializer,
            dtype=policy,
            name="feed_forward",
        )
        self.feed_forward_norm = keras.layers.LayerNormalization(
            epsilon=layer_norm_epsilon, dtype=policy, name="feed_forward_norm"
        )
        self.feed_forward_dropout_layer = Dropout(dropout, dtype=policy)
        self.adaptation = BlockAdaptation.from_dict(adaptation) or None
        if self.adaptation is not None:
            wrap_sublayers(self, self.adaptation)

    def set_active_adapter(self, name):
        """Makes the adapter set `name` run (None: none) wherever the block holds it.

        A wrapper that does not hold `name` runs its bare sublayer. Only which set runs
        changes (no state), so a built block may switch; compiled functions traced before keep
        the old choice.

        Raises:
            ValueError: the block has no adapter set `name`.
        """
        if self.adaptation is None or (name is not None and name not in self.adaptation.adapters):
            known = [] if self.adaptation is None else sorted(self.adaptation.adapters)
            raise ValueError(f"{self.name} has no adapters named {name!r}; it has {known}")
        for _, wrapper in adapted_sublayers(self):
            wrapper.set_active_adapter(name if name in wrapper.adapters else None)
        self.adaptation = self.adaptation.replace(active_adapter=name)

    def build(self, input_shape):
        if self.adaptation is not None:
            build_wrapped_sublayers(self, input_shape)  # pretrained weights keep their paths
        for layer in (
            self.attention,
            self.attention_norm,
            self.feed_forward,
            self.feed_forward_norm,
        ):
            layer.build(input_shape)
        self.built = True

    def call(
        self,
        inputs,
        padding_mask=None,
        attention_mask=None,
        training=None,
        cache=None,
        cache_index=None,
    ):
        x = inputs
        masks = {"padding_mask": padding_mask, "attention_mask": attention_mask}
        real_tokens = padding_mask if self.skip_padding and cache is None else None
        if cache is not None:
            masks.update(cache=cache, cache_index=cache_index)

        def attend(h):
            nonlocal cache
            if cache is None:
                return self.attention(h, training=training, **masks)
            attended, cache = self.attention(h, training=training, **masks)
            return attended

        def feed_forward(h):
            return apply_to_real_tokens(self.feed_forward, h, real_tokens, training=training)

        if self.norm_first:
            x = x + self.attention_dropout_layer(attend(self.attention_norm(x)), training=training)
            transformed = feed_forward(self.feed_forward_norm(x))
            outputs = x + self.feed_forward_dropout_layer(transformed, training=training)
        else:
            x = self.attention_norm(x + self.attention_dropout_layer(attend(x), training=training))
            transformed = feed_forward(x)
            outputs = self.feed_forward_norm(
                x + self.feed_forward_dropout_layer(transformed, training=training)
            )
        return outputs if cache is None else (outputs, cache)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "num_heads": self.num_heads,
                "hidden_dim": self.hidden_dim,
                "intermediate_dim": self.intermediate_dim,
                "dropout": self.dropout,
                "attention_dropout": self.attention_dropout,
                "activation": self.activation,
                "layer_norm_epsilon": self.layer_norm_epsilon,
                "norm_first": self.norm_first,
                "causal": self.causal,
                "skip_padding": self.skip_padding,
                "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
            }
        )
        if self.adaptation is not None:
            config["adaptation"] = self.adaptation.to_dict()
        return config
