"""A classification head for a shared encoder: pool, dropout, one Dense to float32 logits."""

import keras

from kbert.checks import check_int
from kbert.layers.dropout import Dropout
from kbert.layers.sequence_pooling import POOLING_MODES, SequencePooling

HEAD_POOLING = ("pooler",) + POOLING_MODES


@keras.saving.register_keras_serializable(package="kbert")
class ClassificationHead(keras.layers.Layer):
    """Maps an encoder's output dict to one float32 logit vector per example.

    The head of `kbert.models.SequenceClassifier` as a layer, so several heads can sit on one
    encoder pass (`kbert.models.MultitaskModel`): pool (`pooled_output` for "pooler", else
    `SequencePooling(pooling)` over `sequence_output`), `Dropout`, `Dense(num_classes)`.
    The logits are float32 whatever the layer's dtype policy: softmax and loss need the range.

    Args:
        num_classes: int >= 2.
        pooling: str, default "cls". "pooler" (BERT's tanh Dense on [CLS]), or a
            `kbert.layers.SequencePooling` mode: "cls", "mean", "max", "last", "concat".
        dropout: float in [0, 1), default 0.1. Before the Dense.
        **kwargs: passed to `keras.layers.Layer` (`name`, `dtype`).

    Call args:
        encoder_outputs: dict with `sequence_output` `(batch, seq, hidden)` and
            `pooled_output` `(batch, hidden)`, as `kbert.models.Encoder` returns.
        padding_mask: int tensor `(batch, seq)`, default None (all real). Used by the
            "mean", "max", "last" and "concat" poolings.
        training: bool, default None.

    Returns:
        Float32 logits `(batch, num_classes)`.

    Example:
    >>> from keras import ops
    >>> head = ClassificationHead(3, pooling="mean")
    >>> outputs = {"sequence_output": ops.ones((2, 5, 16)), "pooled_output": ops.ones((2, 16))}
    >>> tuple(head(outputs, padding_mask=ops.ones((2, 5), "int32")).shape)
    (2, 3)
    """

    def __init__(self, num_classes, pooling="cls", dropout=0.1, **kwargs):
        super().__init__(**kwargs)
        num_classes = check_int("num_classes", num_classes, minimum=2)
        if pooling not in HEAD_POOLING:
            raise ValueError(f"pooling must be one of {HEAD_POOLING}; received {pooling!r}")
        if (
            isinstance(dropout, bool)
            or not isinstance(dropout, (int, float))
            or not 0.0 <= dropout < 1.0
        ):
            raise ValueError(f"dropout must be a float in [0, 1); received {dropout!r}")
        self.num_classes = num_classes
        self.pooling = pooling
        self.dropout = float(dropout)
        self.pooling_layer = None
        if pooling != "pooler":
            self.pooling_layer = SequencePooling(pooling, dtype=self.dtype_policy, name="pooling")
        self.dropout_layer = Dropout(self.dropout, dtype=self.dtype_policy, name="dropout")
        self.logits_layer = keras.layers.Dense(
            num_classes,
            kernel_initializer=keras.initializers.TruncatedNormal(stddev=0.02),
            dtype="float32",
            name="logits",
        )

    def build(self, encoder_outputs_shape, padding_mask_shape=None):
        width = encoder_outputs_shape["sequence_output"][-1]
        if self.pooling == "pooler":
            width = encoder_outputs_shape["pooled_output"][-1]
        elif self.pooling == "concat" and width is not None:
            width = 3 * width
        self.logits_layer.build((None, width))
        self.built = True

    def call(self, encoder_outputs, padding_mask=None, training=None):
        if self.pooling == "pooler":
            pooled = encoder_outputs["pooled_output"]  # (batch, hidden)
        else:
            pooled = self.pooling_layer(
                encoder_outputs["sequence_output"], padding_mask=padding_mask
            )  # (batch, hidden or 3*hidden)
        pooled = self.dropout_layer(pooled, training=training)
        return self.logits_layer(pooled)  # (batch, num_classes), float32

    def compute_output_shape(self, encoder_outputs_shape, padding_mask_shape=None):
        return (encoder_outputs_shape["sequence_output"][0], self.num_classes)

    def get_config(self):
        return {
            **super().get_config(),
            "num_classes": self.num_classes,
            "pooling": self.pooling,
            "dropout": self.dropout,
        }
