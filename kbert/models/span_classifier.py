"""Span-based NER (J&M §11.5.2): classify every candidate span as an entity type or NULL."""

import math

import keras

from kbert.checks import check_int, check_positive_int
from kbert.layers.dropout import Dropout
from kbert.layers.initializers import clone_initializer
from kbert.layers.span_representation import SPAN_POOLING, SpanRepresentation
from kbert.models.pretraining_utils import (
    IGNORE_INDEX,
    encoder_dtype_policy,
    symbolic_encoder_inputs,
)
from kbert.models.task_model import TaskModel


@keras.saving.register_keras_serializable(package="kbert")
class SpanClassifier(TaskModel):
    """Labels candidate spans instead of tokens, so entities may nest and need no BIO scheme.

    Each span (i, j) gets `[s_i; e_j; g_ij]` (`kbert.layers.SpanRepresentation`), then
    `Dropout → Dense(hidden_units, gelu) → Dropout → Dense(1 + num_types)`; a softmax over the
    entity types plus NULL (id 0) classifies it.

    Nearly every candidate is NULL (about 98% of the spans of up to 8 words on CoNLL-2003), so
    the last layer's bias starts at that prior (`null_probability`; Lin et al. 2017's
    initialization for class imbalance): the first steps no longer spend themselves learning
    "mostly NULL" from uniform outputs, and the rare entity spans drive the gradient from the
    start. Candidate spans come from
    `kbert.data.span_features`, decoding from `kbert.data.span_features.decode_spans`.

    Inputs: the encoder's dict plus `span_starts`, `span_ends` (batch, spans) int32 token
    positions (end inclusive).
    Output: float32 logits `(batch, spans, 1 + num_types)`; labels `(batch, spans)` with
    `IGNORE_INDEX` on padding spans.

    Args:
        encoder: `kbert.models.Encoder`, shared.
        num_types: int >= 1, entity types without NULL.
        projection_dim: int, default 128. Width of the start and end projections.
        hidden_units: int, default 256. Width of the classifier's hidden layer.
        pooling: str, default "mean". `g_ij` as the span's mean or attention-pooled vector.
        dropout: float, default 0.1.
        null_probability: float in (0, 1) or None, default 0.98. The softmax's starting
            probability of NULL (the rest shared by the types); None starts uniform.
        **kwargs: `name`, `trainable`.

    Example:
    >>> from kbert.models import Encoder
    >>> model = SpanClassifier(Encoder.from_preset("tiny"), num_types=4)
    >>> inputs = {"token_ids": ops.array([[2, 5, 6, 3]]),
    ...           "segment_ids": ops.zeros((1, 4), "int32"),
    ...           "padding_mask": ops.ones((1, 4), "int32"),
    ...           "span_starts": ops.array([[1, 1, 2]]), "span_ends": ops.array([[1, 2, 2]])}
    >>> tuple(model(inputs).shape)
    (1, 3, 5)
    """

    def __init__(
        self,
        encoder,
        num_types,
        projection_dim=128,
        hidden_units=256,
        pooling="mean",
        dropout=0.1,
        null_probability=0.98,
        **kwargs,
    ):
        num_types = check_int("num_types", num_types, minimum=1)
        if pooling not in SPAN_POOLING:
            raise ValueError(f"pooling must be one of {SPAN_POOLING}; received {pooling!r}")
        hidden_units = check_positive_int("hidden_units", hidden_units)
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1); received {dropout!r}")
        if null_probability is not None and not 0.0 < null_probability < 1.0:
            raise ValueError(
                f"null_probability must be in (0, 1) or None; received {null_probability!r}"
            )
        bias = "zeros"
        if null_probability is not None:
            rest = (1.0 - null_probability) / num_types
            bias = keras.initializers.Constant(
                [math.log(null_probability)] + [math.log(rest)] * num_types
            )
        policy = encoder_dtype_policy(encoder)
        initializer = keras.initializers.TruncatedNormal(stddev=0.02)

        # === Functional model ===
        inputs = symbolic_encoder_inputs(("span_starts", "span_ends"))
        hidden = encoder(
            {key: inputs[key] for key in ("token_ids", "segment_ids", "padding_mask")}
        )["sequence_output"]
        x = SpanRepresentation(
            projection_dim, pooling=pooling, dtype=policy, name="span_representation"
        )(hidden, inputs["span_starts"], inputs["span_ends"])  # (batch, spans, width)
        x = Dropout(dropout, dtype=policy, name="head_dropout_0")(x)
        x = keras.layers.Dense(
            hidden_units,
            activation="gelu",
            kernel_initializer=clone_initializer(initializer),
            dtype=policy,
            name="head_dense",
        )(x)
        x = Dropout(dropout, dtype=policy, name="head_dropout_1")(x)
        x = keras.layers.Dense(
            1 + num_types,
            kernel_initializer=clone_initializer(initializer),
            bias_initializer=bias,
            dtype="float32",
            name="logits",
        )(x)  # (batch, spans, 1 + num_types)
        super().__init__(inputs=inputs, outputs=x, **kwargs)

        # === Config ===
        self.encoder = encoder
        self.num_types = num_types
        self.projection_dim = projection_dim
        self.hidden_units = hidden_units
        self.pooling = pooling
        self.dropout = dropout
        self.null_probability = null_probability

    def default_loss(self):
        """Softmax cross-entropy over NULL + types, padding spans ignored."""
        return keras.losses.SparseCategoricalCrossentropy(
            from_logits=True, ignore_class=IGNORE_INDEX
        )

    def _config(self):
        return {
            "num_types": self.num_types,
            "projection_dim": self.projection_dim,
            "hidden_units": self.hidden_units,
            "pooling": self.pooling,
            "dropout": self.dropout,
            "null_probability": self.null_probability,
        }
