"""Extractive question answering: a start and an end logit for every token (BERT on SQuAD)."""

import keras
from keras import ops

from kbert.layers.dropout import Dropout
from kbert.models.pretraining_utils import encoder_dtype_policy, symbolic_encoder_inputs
from kbert.models.task_model import TaskModel

# Logit given to padding positions: far below any real logit, still finite in float16.
PADDING_LOGIT = -1e4


@keras.saving.register_keras_serializable(package="kbert")
class QuestionAnswerer(TaskModel):
    """Predicts where the answer starts and ends in `[CLS] question [SEP] context [SEP]`.

    BERT's SQuAD head (Devlin et al. 2019 §4.2; J&M §11.4.3): one Dense(2) on every token of the
    encoder's `sequence_output` gives a start and an end logit; a softmax over the positions of
    a row is the start (or end) distribution, trained with cross-entropy on the gold positions.
    Padding positions get the logit -1e4; [CLS] and the question stay unmasked, since [CLS]
    (position 0) is the target when the answer is not in the window. Rows come from
    `kbert.data.question_answering_features` and predictions go back to text with
    `kbert.models.decode_answers`.

    Inputs: the encoder's dict (`token_ids`, `segment_ids`, `padding_mask`).
    Outputs: dict of float32 logits `{"start_logits": (batch, seq), "end_logits": (batch, seq)}`
    whatever the encoder's dtype policy. Train with `compile(loss=model.default_loss())` on
    labels `{"start_logits": start_positions, "end_logits": end_positions}`;
    `QuestionAnswerer.LABEL_OUTPUTS` maps the featurizer's label keys to these output names.

    Args:
        encoder: `kbert.models.Encoder`, shared (held as `self.encoder`).
        dropout: float, default 0.1. On the sequence output, before the Dense.
        **kwargs: `name`, `trainable`.

    Example:
    >>> from keras import ops
    >>> from kbert.models import Encoder
    >>> model = QuestionAnswerer(Encoder.from_preset("tiny"))
    >>> inputs = {"token_ids": ops.array([[2, 5, 3, 7, 8, 3, 0]]),
    ...           "segment_ids": ops.array([[0, 0, 0, 1, 1, 1, 0]]),
    ...           "padding_mask": ops.array([[1, 1, 1, 1, 1, 1, 0]])}
    >>> outputs = model(inputs)
    >>> tuple(outputs["start_logits"].shape), float(outputs["end_logits"][0, -1])
    ((1, 7), -10000.0)
    """

    # The featurizer's label keys and the outputs they train.
    LABEL_OUTPUTS = {"start_positions": "start_logits", "end_positions": "end_logits"}

    def __init__(self, encoder, dropout=0.1, **kwargs):
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1); received {dropout!r}")
        policy = encoder_dtype_policy(encoder)

        # === Functional model ===
        inputs = symbolic_encoder_inputs()
        x = encoder(inputs)["sequence_output"]  # (batch, seq, hidden)
        x = Dropout(dropout, dtype=policy, name="head_dropout")(x)
        # Logits in float32 whatever the encoder's policy: softmax and loss need the range.
        logits = keras.layers.Dense(
            2,
            kernel_initializer=keras.initializers.TruncatedNormal(stddev=0.02),
            dtype="float32",
            name="span_logits",
        )(x)  # (batch, seq, 2)
        keep = ops.expand_dims(ops.cast(inputs["padding_mask"], "bool"), -1)  # (batch, seq, 1)
        logits = ops.where(keep, logits, PADDING_LOGIT)  # (batch, seq, 2)
        outputs = {"start_logits": logits[..., 0], "end_logits": logits[..., 1]}  # (batch, seq)
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)

        # === Config ===
        self.encoder = encoder
        self.dropout = dropout

    def default_loss(self):
        """One `SparseCategoricalCrossentropy(from_logits=True)` per output, keyed by output name."""
        return {
            name: keras.losses.SparseCategoricalCrossentropy(from_logits=True)
            for name in self.LABEL_OUTPUTS.values()
        }

    @classmethod
    def labels_from_features(cls, features):
        """Renames the featurizer's label keys to output names: `{"start_logits": ..., ...}`.

        Args:
            features: dict with `start_positions` and `end_positions` (numpy arrays or
                tensors), e.g. from `question_answering_features(..., training=True)` or the
                labels dict of `feature_batches(..., label_keys=("start_positions",
                "end_positions"))`.

        Returns:
            dict of the same arrays keyed `start_logits` and `end_logits`.
        """
        missing = [key for key in cls.LABEL_OUTPUTS if key not in features]
        if missing:
            raise ValueError(
                f"features need {list(cls.LABEL_OUTPUTS)} (built with training=True);"
                f" missing {missing} among keys {sorted(features)}"
            )
        return {output: features[key] for key, output in cls.LABEL_OUTPUTS.items()}

    def _config(self):
        return {
            "dropout": self.dropout,
        }
