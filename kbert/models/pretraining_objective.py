"""The shape every pretraining objective shares: an encoder, a head, a loss read from `x`."""

import keras

from kbert.models import pretraining_utils


@keras.saving.register_keras_serializable(package="kbert")
class PretrainingObjective(keras.Model):
    """Base class: a head on an encoder that computes its own loss from the input dict.

    A subclass names the extra input keys it reads (`selection_keys`, `extra_keys`), builds its
    head layers in `__init__`, and implements two methods:

    - `call_head(encoder_outputs, x, training)`: the head's predictions (a dict of tensors);
    - `objective_loss(x, y_pred)`: the scalar loss, updating the objective's own metrics.

    `call(x)` runs the encoder then the head; `compute_loss` calls `objective_loss`, so
    `model.fit(dataset_of_x_dicts)` and `evaluate` work with no separate targets.
    `PretrainingModel` calls the same two methods of several objectives on one encoder pass.

    Metrics are named `{metric_prefix}_{what}` (e.g. `mlm_loss`, `mlm_accuracy`), so several
    objectives report side by side; Keras adds `loss`, the total that is minimized.

    Args:
        encoder: `kbert.models.Encoder`. Held as `self.encoder`; several objectives may share it.
        metric_prefix: str, default None (the subclass's `default_metric_prefix`).
        dtype: dtype policy, default None (the encoder's, so a `mixed_float16` encoder gets loss
            scaling when compiled).
        **kwargs: `name`, `trainable`.
    """

    default_metric_prefix = "objective"
    # Keys of `x` holding `(batch, max_selections)` tensors that must agree in shape.
    selection_keys = ()
    # Other keys of `x` the objective reads.
    extra_keys = ()

    def __init__(self, encoder, metric_prefix=None, dtype=None, **kwargs):
        if dtype is None:
            dtype = pretraining_utils.encoder_dtype_policy(encoder)
        super().__init__(dtype=dtype, **kwargs)
        self.encoder = encoder
        self.metric_prefix = metric_prefix or self.default_metric_prefix
        self.loss_metric = keras.metrics.Mean(name=f"{self.metric_prefix}_loss")

    @property
    def required_keys(self):
        """Every key of `x` this objective reads (the encoder's and its own)."""
        return (
            pretraining_utils.REQUIRED_ENCODER_KEYS
            + tuple(self.selection_keys)
            + tuple(self.extra_keys)
        )

    @property
    def objective_metrics(self):
        """This objective's own metrics (without Keras's compiled `loss` tracker)."""
        return [self.loss_metric]

    def validate_inputs(self, x):
        """Raises a ValueError when `x` lacks a key this objective reads or shapes disagree."""
        owner = type(self).__name__
        pretraining_utils.require_inputs(x, self.required_keys, owner)
        if self.selection_keys:
            pretraining_utils.check_same_shape(x, self.selection_keys, owner)

    def call(self, x, training=None):
        self.validate_inputs(x)
        encoder_outputs = self.encoder(pretraining_utils.encoder_inputs(x), training=training)
        return self.call_head(encoder_outputs, x, training=training)

    def call_head(self, encoder_outputs, x, training=None):
        """The head's predictions from the encoder's outputs.

        Args:
            encoder_outputs: dict. The encoder's outputs for `x`.
            x: dict. The model input (masked positions, labels...).
            training: bool, default None.

        Returns:
            dict of tensors (at least `logits`).
        """
        raise NotImplementedError(f"{type(self).__name__} must implement call_head")

    def objective_loss(self, x, y_pred):
        """The objective's float32 scalar loss; also updates its metrics.

        Args:
            x: dict. The model input.
            y_pred: dict. What `call_head` returned for `x`.

        Returns:
            Float32 scalar.
        """
        raise NotImplementedError(f"{type(self).__name__} must implement objective_loss")

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        return pretraining_utils.total_loss(self, self.objective_loss(x, y_pred), y)

    def get_config(self):
        return {
            "encoder": keras.saving.serialize_keras_object(self.encoder),
            "metric_prefix": self.metric_prefix,
            "name": self.name,
            "trainable": self.trainable,
            "dtype": keras.dtype_policies.serialize(self.dtype_policy),
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        # `PretrainingModel.from_config` passes an already-built shared encoder.
        if isinstance(config["encoder"], dict):
            config["encoder"] = keras.saving.deserialize_keras_object(config["encoder"])
        if isinstance(config.get("dtype"), dict):
            config["dtype"] = keras.dtype_policies.deserialize(config["dtype"])
        return cls(**config)
