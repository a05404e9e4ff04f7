"""A token-tagging head for a shared encoder: per-token dropout and Dense to float32 logits."""

import keras

from kbert.checks import check_int
from kbert.layers.dropout import Dropout


@keras.saving.register_keras_serializable(package="kbert")
class TaggingHead(keras.layers.Layer):
    """Maps an encoder's output dict to float32 tag logits at every position.

    The softmax head of `kbert.models.TokenClassifier` as a layer, so it can share one encoder
    pass with other heads (`kbert.models.MultitaskModel`): `Dropout → Dense(num_tags)` on
    `sequence_output`. Train with labels `(batch, seq)` holding `IGNORE_INDEX` (-100) at the
    positions not scored (see `kbert.data.token_classification_features`).

    Args:
        num_tags: int >= 2.
        dropout: float in [0, 1), default 0.1.
        **kwargs: passed to `keras.layers.Layer` (`name`, `dtype`).

    Call args:
        encoder_outputs: dict with `sequence_output` `(batch, seq, hidden)`.
        padding_mask: ignored (accepted so every head has one call signature), default None.
        training: bool, default None.

    Returns:
        Float32 logits `(batch, seq, num_tags)`.

    Example:
    >>> from keras import ops
    >>> head = TaggingHead(5)
    >>> tuple(head({"sequence_output": ops.ones((2, 7, 16))}).shape)
    (2, 7, 5)
    """

    def __init__(self, num_tags, dropout=0.1, **kwargs):
        super().__init__(**kwargs)
        num_tags = check_int("num_tags", num_tags, minimum=2)
        if (
            isinstance(dropout, bool)
            or not isinstance(dropout, (int, float))
            or not 0.0 <= dropout < 1.0
        ):
            raise ValueError(f"dropout must be a float in [0, 1); received {dropout!r}")
        self.num_tags = num_tags
        self.dropout = float(dropout)
        self.dropout_layer = Dropout(self.dropout, dtype=self.dtype_policy, name="dropout")
        self.logits_layer = keras.layers.Dense(
            num_tags,
            kernel_initializer=keras.initializers.TruncatedNormal(stddev=0.02),
            dtype="float32",
            name="logits",
        )

    def build(self, encoder_outputs_shape, padding_mask_shape=None):
        self.logits_layer.build((None, None, encoder_outputs_shape["sequence_output"][-1]))
        self.built = True

    def call(self, encoder_outputs, padding_mask=None, training=None):
        hidden = self.dropout_layer(
            encoder_outputs["sequence_output"], training=training
        )  # (batch, seq, hidden)
        return self.logits_layer(hidden)  # (batch, seq, num_tags), float32

    def compute_output_shape(self, encoder_outputs_shape, padding_mask_shape=None):
        batch, length = encoder_outputs_shape["sequence_output"][:2]
        return (batch, length, self.num_tags)

    def get_config(self):
        return {**super().get_config(), "num_tags": self.num_tags, "dropout": self.dropout}
