"""TransferTransfo's double-heads dialog model (Wolf et al. 2019; NAACL 2019 tutorial 5.C)."""

import keras
from keras import ops

from kbert.models import pretraining_utils
from kbert.models.causal_language_model import CausalLanguageModel
from kbert.models.pretraining_utils import IGNORE_INDEX

INPUTS = ("token_ids", "segment_ids", "padding_mask", "classify_at")


@keras.saving.register_keras_serializable(package="kbert")
class DialogModel(keras.Model):
    """A causal LM over the gold reply plus a next-utterance classifier over candidate replies.

    Every example holds several candidate sequences (`kbert.data.dialog_inputs`: persona,
    history, one candidate reply); the encoder reads each, the tied LM head scores the reply's
    tokens (only where `labels` is not -100, i.e. on the gold candidate's reply), and a linear
    head on each candidate's last token gives one score per candidate, trained with softmax
    cross-entropy to pick the gold one. The loss is
    `language_model_weight · LM loss + choice_weight · choice loss` (TransferTransfo: 2 and 1).

    Inputs (dict): `token_ids`, `segment_ids`, `padding_mask` int32 `(batch, candidates, seq)`
    and `classify_at` int32 `(batch, candidates)` (each candidate's last-token index).
    Labels (dict): `labels` int32 `(batch, candidates, seq)` and `choice` int32 `(batch,)`.

    Args:
        encoder: `kbert.models.Encoder` with `config.causal=True` (segment embeddings let it
            tell the speakers apart: `add_segment_embeddings`).
        language_model_weight: float >= 0, default 2.0.
        choice_weight: float >= 0, default 1.0.

    Example:
    >>> from kbert.models import Encoder
    >>> model = DialogModel(Encoder.from_preset("tiny", causal=True))
    >>> x = {"token_ids": ops.ones((2, 3, 5), "int32"), "segment_ids": ops.zeros((2, 3, 5), "int32"),
    ...      "padding_mask": ops.ones((2, 3, 5), "int32"), "classify_at": ops.full((2, 3), 4)}
    >>> outputs = model(x)
    >>> tuple(outputs["lm_logits"].shape), tuple(outputs["choice_logits"].shape)
    ((2, 3, 5, 50), (2, 3))
    """

    def __init__(self, encoder, language_model_weight=2.0, choice_weight=1.0, **kwargs):
        super().__init__(**kwargs)
        for name, value in (
            ("language_model_weight", language_model_weight),
            ("choice_weight", choice_weight),
        ):
            if not isinstance(value, (int, float)) or value < 0:
                raise ValueError(f"{name} must be a number >= 0; received {value!r}")
        self.encoder = encoder
        self.language_model = CausalLanguageModel(encoder)
        self.language_model_weight = float(language_model_weight)
        self.choice_weight = float(choice_weight)
        self.choice_head = keras.layers.Dense(
            1,
            kernel_initializer=keras.initializers.TruncatedNormal(
                stddev=encoder.config.initializer_range
            ),
            name="choice_head",
        )
        self.choice_head.build((None, encoder.config.hidden_dim))
        self.lm_loss_tracker = keras.metrics.Mean(name="lm_loss")
        self.choice_loss_tracker = keras.metrics.Mean(name="choice_loss")
        self.choice_accuracy_tracker = keras.metrics.Mean(name="choice_accuracy")
        self.built = True

    @property
    def metrics(self):
        metrics = super().metrics
        for tracker in (
            self.lm_loss_tracker,
            self.choice_loss_tracker,
            self.choice_accuracy_tracker,
        ):
            if not any(metric is tracker for metric in metrics):
                metrics.append(tracker)
        return metrics

    def call(self, x, training=None):
        missing = [name for name in INPUTS if name not in x]
        if missing:
            raise ValueError(f"DialogModel inputs lack {missing}; expected the keys {INPUTS}")
        shape = ops.shape(x["token_ids"])  # (batch, candidates, seq)
        flat = {
            name: ops.reshape(x[name], (-1, shape[2]))  # (batch · candidates, seq)
            for name in ("token_ids", "segment_ids", "padding_mask")
        }
        outputs = self.encoder(flat, training=training)
        logits = self.language_model.call_head(outputs, flat, training=training)["logits"]
        hidden = outputs["sequence_output"]  # (batch · candidates, seq, hidden)
        last = pretraining_utils.gather_positions(hidden, ops.reshape(x["classify_at"], (-1, 1)))
        scores = self.choice_head(last[:, 0, :])  # (batch · candidates, 1)
        return {
            "lm_logits": ops.reshape(logits, (shape[0], shape[1], shape[2], -1)),
            "choice_logits": ops.reshape(ops.cast(scores, "float32"), (shape[0], shape[1])),
        }

    def losses_of(self, y, y_pred):
        """`(lm_loss, choice_loss, choice_correct)`: mean NLL of each scored next token, mean
        choice cross-entropy, and 1.0 per example whose best candidate is the gold one."""
        labels = ops.cast(y["labels"], "int32")[:, :, 1:]  # token t+1, predicted at t
        logits = y_pred["lm_logits"][:, :, :-1, :]
        scored = ops.cast(ops.not_equal(labels, IGNORE_INDEX), "float32")
        nll = pretraining_utils.sparse_cross_entropy(ops.maximum(labels, 0), logits)
        lm_loss = pretraining_utils.weighted_mean(nll, scored)
        choice = ops.cast(y["choice"], "int32")
        choice_nll = pretraining_utils.sparse_cross_entropy(choice, y_pred["choice_logits"])
        correct = pretraining_utils.predicted_correctly(choice, y_pred["choice_logits"])
        return lm_loss, ops.mean(choice_nll), correct

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        if not isinstance(y, dict) or "labels" not in y or "choice" not in y:
            raise ValueError(
                "DialogModel needs y as a dict with 'labels' (batch, candidates, seq) and "
                f"'choice' (batch,); received {type(y).__name__}"
            )
        if sample_weight is not None:
            raise ValueError("DialogModel scores tokens through labels (-100 is not scored)")
        lm_loss, choice_loss, correct = self.losses_of(y, y_pred)
        self.lm_loss_tracker.update_state(lm_loss)
        self.choice_loss_tracker.update_state(choice_loss)
        self.choice_accuracy_tracker.update_state(correct)
        loss = self.language_model_weight * lm_loss + self.choice_weight * choice_loss
        return pretraining_utils.with_regularization(self, loss)

    def get_config(self):
        return {
            "encoder": keras.saving.serialize_keras_object(self.encoder),
            "language_model_weight": self.language_model_weight,
            "choice_weight": self.choice_weight,
            "name": self.name,
            "trainable": self.trainable,
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        encoder = keras.saving.deserialize_keras_object(config.pop("encoder"))
        return cls(encoder, **config)
