"""A sequence (or sentence-pair) classifier: a pooled encoder output and a small head."""

import keras

from kbert.checks import check_int
from kbert.layers.dropout import Dropout
from kbert.layers.sequence_pooling import POOLING_MODES, SequencePooling
from kbert.models.pretraining_utils import encoder_dtype_policy, symbolic_encoder_inputs
from kbert.models.task_model import TaskModel

CLASSIFIER_POOLING = ("pooler",) + POOLING_MODES


def classification_loss(multi_label=False):
    """The Keras loss for classifier logits: integer labels, or 0/1 vectors when multi-label."""
    if multi_label:
        return keras.losses.BinaryCrossentropy(from_logits=True)
    return keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@keras.saving.register_keras_serializable(package="kbert")
class SequenceClassifier(TaskModel):
    """Classifies a text or a text pair from one pooled vector (J&M §11.4.1–11.4.2).

    A pair is one packed input `[CLS] a [SEP] b [SEP]` whose segment ids tell the halves apart,
    so pair classification (entailment, paraphrase) needs no separate model. The head is
    `[BatchNorm] → Dropout → Dense → ReLU` per entry of `hidden_units`, then
    `[BatchNorm] → Dropout → Dense(num_classes)`; `hidden_units=(50,)` with `batch_norm=True`
    and `pooling="concat"` is ULMFiT's classifier (Howard & Ruder 2018), the defaults are
    BERT's (a linear layer on [CLS]).

    Inputs: the encoder's dict (`token_ids`, `segment_ids`, `padding_mask`).
    Output: float32 logits `(batch, num_classes)`. Train with
    `SparseCategoricalCrossentropy(from_logits=True)` (one label per text), or with
    `BinaryCrossentropy(from_logits=True)` on 0/1 vectors when `multi_label` (see
    `default_loss()`).

    Args:
        encoder: `kbert.models.Encoder`, shared (held as `self.encoder`).
        num_classes: int >= 2 (or >= 1 when `multi_label`).
        pooling: str, default "cls". "pooler" is BERT's tanh Dense on [CLS] (pretrained with
            NSP), "cls" the raw [CLS] vector, and "mean", "max", "last" (the tutorial's
            classification token appended at the end of a causal model's input), "concat"
            (ULMFiT's last + max + mean), as in `kbert.layers.SequencePooling`.
        dropout: float, default 0.1. Before each Dense of the head.
        hidden_units: tuple of int, default (). Hidden layers of the head.
        batch_norm: bool, default False. BatchNormalization before each dropout (ULMFiT).
        multi_label: bool, default False. Independent sigmoid per class instead of a softmax.
        **kwargs: `name`, `trainable`.

    Example:
    >>> from kbert.models import Encoder
    >>> classifier = SequenceClassifier(Encoder.from_preset("tiny"), num_classes=3)
    >>> inputs = {"token_ids": ops.array([[2, 5, 3]]), "segment_ids": ops.zeros((1, 3), "int32"),
    ...           "padding_mask": ops.ones((1, 3), "int32")}
    >>> tuple(classifier(inputs).shape)
    (1, 3)
    """

    def __init__(
        self,
        encoder,
        num_classes,
        pooling="cls",
        dropout=0.1,
        hidden_units=(),
        batch_norm=False,
        multi_label=False,
        **kwargs,
    ):
        if pooling not in CLASSIFIER_POOLING:
            raise ValueError(f"pooling must be one of {CLASSIFIER_POOLING}; received {pooling!r}")
        minimum = 1 if multi_label else 2
        num_classes = check_int(
            "num_classes",
            num_classes,
            minimum=minimum,
            expected=f"an int >= {minimum}{' (multi-label)' if multi_label else ''}",
        )
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1); received {dropout!r}")
        hidden_units = tuple(hidden_units)
        if not all(isinstance(u, int) and u > 0 for u in hidden_units):
            raise ValueError(f"hidden_units must be positive ints; received {hidden_units!r}")
        policy = encoder_dtype_policy(encoder)

        # === Functional model ===
        inputs = symbolic_encoder_inputs()
        outputs = encoder(inputs)
        if pooling == "pooler":
            x = outputs["pooled_output"]
        else:
            x = SequencePooling(pooling, dtype=policy, name="pooling")(
                outputs["sequence_output"], padding_mask=inputs["padding_mask"]
            )
        for index, units in enumerate(hidden_units + (num_classes,)):
            if batch_norm:
                x = keras.layers.BatchNormalization(dtype=policy, name=f"head_norm_{index}")(x)
            x = Dropout(dropout, dtype=policy, name=f"head_dropout_{index}")(x)
            last = index == len(hidden_units)
            # Logits in float32 whatever the encoder's policy: softmax and loss need the range.
            x = keras.layers.Dense(
                units,
                activation=None if last else "relu",
                kernel_initializer=keras.initializers.TruncatedNormal(stddev=0.02),
                dtype="float32" if last else policy,
                name="logits" if last else f"head_dense_{index}",
            )(x)
        super().__init__(inputs=inputs, outputs=x, **kwargs)

        # === Config ===
        self.encoder = encoder
        self.encoder_outputs = outputs  # symbolic: the distiller reads `hidden_states` here
        self.num_classes = num_classes
        self.pooling = pooling
        self.dropout = dropout
        self.hidden_units = hidden_units
        self.batch_norm = batch_norm
        self.multi_label = multi_label

    def default_loss(self):
        """The matching Keras loss (logits in, integer labels or 0/1 vectors for multi-label)."""
        return classification_loss(self.multi_label)

    def _config(self):
        return {
            "num_classes": self.num_classes,
            "pooling": self.pooling,
            "dropout": self.dropout,
            "hidden_units": list(self.hidden_units),
            "batch_norm": self.batch_norm,
            "multi_label": self.multi_label,
        }
