"""The span representation of span-based NER (J&M §11.5.2): `[s_i; e_j; g_ij]`."""

import keras
from keras import ops

from kbert.checks import check_positive_int
from kbert.layers.initializers import clone_initializer

SPAN_POOLING = ("mean", "attention")


@keras.saving.register_keras_serializable(package="kbert")
class SpanRepresentation(keras.layers.Layer):
    """Builds one vector per candidate span from token vectors.

    J&M §11.5.2: the start token goes through its own feed-forward projection (`s_i`), the end
    token through another (`e_j`), and the whole span is summarised by `g_ij`, the mean of its
    token vectors or an attention-weighted sum (Lee et al. 2017: a learned score per token,
    softmax within the span). The output is their concatenation.

    Args:
        projection_dim: int. Width of the start and end projections.
        pooling: str, default "mean". "mean" or "attention", for `g_ij`.
        activation: str, default "gelu". Of the start and end projections.
        **kwargs: passed to `keras.layers.Layer`.

    Call arguments:
        hidden: float (batch, seq, hidden_dim) token vectors.
        span_starts, span_ends: int (batch, spans), token positions, end inclusive. Padding spans
            may be (0, 0); their vectors are computed and ignored by the loss.

    Returns:
        (batch, spans, 2 * projection_dim + hidden_dim).

    Example:
    >>> layer = SpanRepresentation(projection_dim=4)
    >>> hidden = ops.ones((1, 5, 6))
    >>> tuple(layer(hidden, ops.array([[1, 2]]), ops.array([[3, 2]])).shape)
    (1, 2, 14)
    """

    def __init__(self, projection_dim, pooling="mean", activation="gelu", **kwargs):
        super().__init__(**kwargs)
        projection_dim = check_positive_int("projection_dim", projection_dim)
        if pooling not in SPAN_POOLING:
            raise ValueError(f"pooling must be one of {SPAN_POOLING}; received {pooling!r}")
        self.projection_dim = projection_dim
        self.pooling = pooling
        self.activation = activation
        initializer = keras.initializers.TruncatedNormal(stddev=0.02)
        self.start_projection = keras.layers.Dense(
            projection_dim,
            activation=activation,
            kernel_initializer=clone_initializer(initializer),
            dtype=self.dtype_policy,
            name="start_projection",
        )
        self.end_projection = keras.layers.Dense(
            projection_dim,
            activation=activation,
            kernel_initializer=clone_initializer(initializer),
            dtype=self.dtype_policy,
            name="end_projection",
        )
        self.attention_score = None
        if pooling == "attention":
            self.attention_score = keras.layers.Dense(
                1,
                kernel_initializer=clone_initializer(initializer),
                dtype=self.dtype_policy,
                name="attention_score",
            )

    def build(self, hidden_shape, span_starts_shape=None, span_ends_shape=None):
        self.start_projection.build(hidden_shape)
        self.end_projection.build(hidden_shape)
        if self.attention_score is not None:
            self.attention_score.build(hidden_shape)

    def call(self, hidden, span_starts, span_ends):
        span_starts = ops.cast(span_starts, "int32")
        span_ends = ops.cast(span_ends, "int32")
        start_vectors = ops.take_along_axis(hidden, span_starts[:, :, None], axis=1)
        end_vectors = ops.take_along_axis(hidden, span_ends[:, :, None], axis=1)
        positions = ops.arange(ops.shape(hidden)[1], dtype="int32")[None, None, :]
        inside = ops.logical_and(
            positions >= span_starts[:, :, None], positions <= span_ends[:, :, None]
        )  # (batch, spans, seq)
        if self.pooling == "mean":
            weights = ops.cast(inside, hidden.dtype)
            weights = weights / ops.maximum(ops.sum(weights, axis=-1, keepdims=True), 1.0)
        else:
            scores = ops.cast(self.attention_score(hidden)[:, None, :, 0], "float32")
            scores = ops.where(inside, scores, -1e9)  # (batch, spans, seq)
            weights = ops.cast(ops.softmax(scores, axis=-1), hidden.dtype)
        pooled = ops.matmul(weights, hidden)  # (batch, spans, hidden_dim)
        return ops.concatenate(
            [self.start_projection(start_vectors), self.end_projection(end_vectors), pooled],
            axis=-1,
        )

    def compute_output_shape(self, hidden_shape, span_starts_shape=None, span_ends_shape=None):
        spans = span_starts_shape[1] if span_starts_shape is not None else None
        return (hidden_shape[0], spans, 2 * self.projection_dim + hidden_shape[-1])

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "projection_dim": self.projection_dim,
                "pooling": self.pooling,
                "activation": self.activation,
            }
        )
        return config
