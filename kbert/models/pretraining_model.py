"""Several pretraining objectives on one encoder pass, their losses summed with weights."""

import keras

from kbert.models import pretraining_utils
from kbert.models.pretraining_objective import PretrainingObjective


@keras.saving.register_keras_serializable(package="kbert")
class PretrainingModel(keras.Model):
    """Runs the encoder once and sums the weighted losses of several objective heads.

    BERT is MLM + NSP, ALBERT MLM + SOP, SpanBERT MLM + SBO: each is a list of objectives built
    on the same encoder. The loss Keras minimizes (and logs as `loss`) is
    `Σ loss_weights[k] · objectives[k].objective_loss`; each objective also logs its own
    unweighted loss and metrics under its prefix (`mlm_loss`, `nsp_accuracy`, ...).

    Input `x`: the union of the keys the objectives read.

    Args:
        encoder: `kbert.models.Encoder`. Every objective must hold this same encoder.
        objectives: list of `PretrainingObjective` (e.g. `MaskedLanguageModel`,
            `NextSentencePrediction`) with distinct `metric_prefix`es.
        loss_weights: list of float, default None (all 1.0).
        dtype: dtype policy, default None (the encoder's).
        **kwargs: `name`, `trainable`.

    Returns (from `call`):
        dict from each objective's `metric_prefix` to its predictions (`{"logits": ...}`).

    Example:
    >>> from keras import ops
    >>> from kbert.models import Encoder, MaskedLanguageModel, NextSentencePrediction
    >>> encoder = Encoder.from_preset("tiny")
    >>> bert = PretrainingModel(encoder, [MaskedLanguageModel(encoder),
    ...                                   NextSentencePrediction(encoder)])
    >>> x = {"token_ids": ops.array([[2, 4, 3, 9, 3]]), "padding_mask": ops.ones((1, 5), "int32"),
    ...      "segment_ids": ops.array([[0, 0, 0, 1, 1]]), "mask_positions": ops.array([[1]]),
    ...      "mask_ids": ops.array([[7]]), "mask_weights": ops.array([[1.0]]),
    ...      "next_sentence_labels": ops.array([1])}
    >>> sorted(bert(x))
    ['mlm', 'nsp']
    """

    def __init__(self, encoder, objectives, loss_weights=None, dtype=None, **kwargs):
        objectives = list(objectives)
        if not objectives:
            raise ValueError("PretrainingModel needs at least one objective; received none")
        for index, objective in enumerate(objectives):
            if not isinstance(objective, PretrainingObjective):
                raise ValueError(
                    f"objectives[{index}] must be a PretrainingObjective; "
                    f"received {type(objective).__name__}"
                )
            if objective.encoder is not encoder:
                raise ValueError(
                    f"objectives[{index}] ({type(objective).__name__}) holds a different "
                    f"encoder; expected every objective built on the encoder passed here"
                )
        prefixes = [objective.metric_prefix for objective in objectives]
        if len(set(prefixes)) != len(prefixes):
            raise ValueError(
                f"objectives need distinct metric_prefix values (their metrics "
                f"would collide); received {prefixes}"
            )
        if loss_weights is None:
            loss_weights = [1.0] * len(objectives)
        loss_weights = [float(weight) for weight in loss_weights]
        if len(loss_weights) != len(objectives):
            raise ValueError(
                f"loss_weights must have one entry per objective "
                f"({len(objectives)}); received {len(loss_weights)}"
            )
        if dtype is None:
            dtype = pretraining_utils.encoder_dtype_policy(encoder)
        super().__init__(dtype=dtype, **kwargs)
        self.encoder = encoder
        self.objectives = objectives
        self.loss_weights = loss_weights
        self.built = True

    @property
    def metrics(self):
        # Keras skips the metrics of sub-models (each would be a separate trainer); here the
        # objectives are parts of this one, so their metrics are reported too.
        metrics = super().metrics
        for objective in self.objectives:
            metrics.extend(objective.objective_metrics)
        return metrics

    def call(self, x, training=None):
        for objective in self.objectives:
            objective.validate_inputs(x)
        encoder_outputs = self.encoder(pretraining_utils.encoder_inputs(x), training=training)
        return {
            objective.metric_prefix: objective.call_head(encoder_outputs, x, training=training)
            for objective in self.objectives
        }

    def objective_loss(self, x, y_pred):
        """`Σ loss_weights[k] · objectives[k].objective_loss`, without regularization terms."""
        loss = 0.0
        for objective, weight in zip(self.objectives, self.loss_weights, strict=True):
            loss = loss + weight * objective.objective_loss(x, y_pred[objective.metric_prefix])
        return loss

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        return pretraining_utils.total_loss(self, self.objective_loss(x, y_pred), y)

    def get_config(self):
        # The shared encoder is stored once, not inside every objective.
        objectives = [
            pretraining_utils.serialize_objective(objective) for objective in self.objectives
        ]
        return {
            "encoder": keras.saving.serialize_keras_object(self.encoder),
            "objectives": objectives,
            "loss_weights": list(self.loss_weights),
            "name": self.name,
            "trainable": self.trainable,
            "dtype": keras.dtype_policies.serialize(self.dtype_policy),
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        encoder = keras.saving.deserialize_keras_object(config.pop("encoder"))
        objectives = [
            pretraining_utils.deserialize_objective(spec, encoder)
            for spec in config.pop("objectives")
        ]
        if isinstance(config.get("dtype"), dict):
            config["dtype"] = keras.dtype_policies.deserialize(config["dtype"])
        return cls(encoder, objectives, **config)
