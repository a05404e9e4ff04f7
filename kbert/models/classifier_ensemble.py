"""An ensemble of fine-tuned classifiers: their predictions on the same input, combined."""

import math

import keras
from keras import ops

from kbert.models.task_model import num_classes_of

ENSEMBLE_METHODS = ("mean_probabilities", "mean_logits", "majority_vote")

# Weighted vote counts closer than this are a tie (the weights are normalized floats).
_VOTE_TIE_TOLERANCE = 1e-6


@keras.saving.register_keras_serializable(package="kbert")
class ClassifierEnsemble(keras.Model):
    """Combines the predictions of several fine-tuned classifiers on the same input.

    Every member gets the same input dict and returns logits `(batch, num_classes)` (e.g.
    `SequenceClassifier`s fine-tuned from different seeds, checkpoints or encoders); the
    ensemble combines them with normalized `weights` (`w_k / Σ w`):

    - `"mean_probabilities"`: `Σ w_k softmax(logits_k)`. Output: probabilities (rows sum to 1).
    - `"mean_logits"`: `Σ w_k logits_k`. Output: logits (apply a softmax for probabilities).
    - `"majority_vote"`: each member votes for its arg-max with weight `w_k`. Output: the
      one-hot vector of the class with most votes, ties broken by the higher mean probability
      (`"mean_probabilities"`'s output).

    Every output's arg-max is the predicted class, so `compile(metrics=["accuracy"])` with
    integer labels measures the ensemble's accuracy whatever the method (compiled without a
    loss, `evaluate` reports a loss of 0). Members run in
    inference mode (no dropout) and are not trained: the ensemble is built with
    `trainable=False` unless told otherwise. Members with sigmoid (multi-label) heads are not
    supported.

    Input: the members' input dict (`token_ids`, `segment_ids`, `padding_mask`).
    Output: float32 `(batch, num_classes)`, as described for each method.

    Args:
        models: list of keras.Model. The members, each returning logits for the same classes.
        method: str, default "mean_probabilities". One of `ENSEMBLE_METHODS`.
        weights: list of float, default None (equal weights). One non-negative weight per
            member, not all zero; normalized to sum to 1.
        **kwargs: `name`, `trainable` (default False).

    Raises:
        ValueError: no members, members with different class counts or multi-label heads,
            `weights` of the wrong length, negative or all zero, or an unknown `method`.

    Example:
    >>> import numpy as np
    >>> from kbert.models import Encoder, SequenceClassifier
    >>> members = [SequenceClassifier(Encoder.from_preset("tiny"), 3) for _ in range(2)]
    >>> ensemble = ClassifierEnsemble(members, method="mean_probabilities")
    >>> x = {"token_ids": np.array([[2, 5, 3]]), "segment_ids": np.zeros((1, 3), "int32"),
    ...      "padding_mask": np.ones((1, 3), "int32")}
    >>> probabilities = ensemble(x)
    >>> tuple(probabilities.shape)
    (1, 3)
    """

    def __init__(self, models, method="mean_probabilities", weights=None, **kwargs):
        models = list(models)
        if not models:
            raise ValueError("models must hold at least one classifier; received an empty list")
        for index, model in enumerate(models):
            if not isinstance(model, keras.Model):
                raise ValueError(
                    f"models[{index}] must be a keras.Model classifier; received "
                    f"{type(model).__name__}"
                )
            if getattr(model, "multi_label", False):
                raise ValueError(
                    f"models[{index}] is multi-label (sigmoid outputs); expected "
                    f"softmax classifiers"
                )
        counts = [num_classes_of(model) for model in models]
        known = {count for count in counts if count is not None}
        if len(known) > 1:
            raise ValueError(
                f"models must all predict the same number of classes; received "
                f"class counts {counts}"
            )
        if method not in ENSEMBLE_METHODS:
            raise ValueError(f"method must be one of {ENSEMBLE_METHODS}; received {method!r}")
        if weights is not None:
            weights = [float(weight) for weight in weights]
            if len(weights) != len(models):
                raise ValueError(
                    f"weights must have one entry per model ({len(models)}); "
                    f"received {len(weights)}"
                )
            if any(weight < 0 for weight in weights) or sum(weights) <= 0:
                raise ValueError(
                    f"weights must be non-negative and not all zero; received {weights}"
                )
        kwargs.setdefault("trainable", False)
        super().__init__(**kwargs)
        self.models = models
        self.method = method
        self.weights_argument = weights
        self.num_classes = known.pop() if known else None
        raw = weights if weights is not None else [1.0] * len(models)
        self.normalized_weights = [weight / sum(raw) for weight in raw]
        self.built = True

    def call(self, x, training=None):
        # Members are fine-tuned already: inference mode unless the ensemble itself trains.
        member_training = training if self.trainable else False
        logits = [ops.cast(model(x, training=member_training), "float32") for model in self.models]
        if self.method == "mean_logits":
            return self._weighted_sum(logits)
        probabilities = self._weighted_sum([ops.softmax(value, axis=-1) for value in logits])
        if self.method == "mean_probabilities":
            return probabilities
        num_classes = ops.shape(logits[0])[-1]
        votes = self._weighted_sum(
            [ops.one_hot(ops.argmax(value, axis=-1), num_classes) for value in logits]
        )  # (batch, classes)
        is_top = votes >= ops.max(votes, axis=-1, keepdims=True) - _VOTE_TIE_TOLERANCE
        # Among the classes with most votes, the one the members find most probable.
        winner = ops.argmax(ops.where(is_top, probabilities, -1.0), axis=-1)  # (batch,)
        return ops.one_hot(winner, num_classes, dtype="float32")

    def tempered_logits(self, x, temperature):
        """Logits `t` whose `softmax(t / temperature)` is the ensemble's soft targets at T.

        A distillation loss softens its teacher's logits: `softmax(t / T)`. An ensemble of
        probabilities has no logits of its own, and `log p̄` (the log of its mean
        probabilities) softened gives `p̄^(1/T)` renormalized: the mean distribution
        sharpened or flattened, not the members' soft targets. Hinton et al. (2015) distil an
        ensemble into the arithmetic mean of its members' softened distributions
        (`"mean_probabilities"`) or their normalized geometric mean (`"mean_logits"`), so:

        - `"mean_probabilities"`: `t = T · log Σ_k w_k softmax(z_k / T)`; then
          `softmax(t / T) = Σ_k w_k softmax(z_k / T)` exactly (the sum is already a
          distribution). At T = 1, `t = log p̄`, the log of the ensemble's own output.
        - `"mean_logits"`: `t = Σ_k w_k z_k` (`softmax(t / T) ∝ Π_k softmax(z_k / T)^w_k`).

        Args:
            x: the members' input dict.
            temperature: float > 0.

        Returns:
            float32 `(batch, num_classes)`.

        Raises:
            ValueError: `temperature` is not a number > 0, or the method is
                `"majority_vote"` (one-hot votes have no soft distribution).
        """
        if (
            isinstance(temperature, bool)
            or not isinstance(temperature, (int, float))
            or not temperature > 0
        ):
            raise ValueError(f"temperature must be a number > 0; received {temperature!r}")
        if self.method == "majority_vote":
            raise ValueError(
                "a majority_vote ensemble has no soft targets to distil; use method "
                "'mean_probabilities' or 'mean_logits'"
            )
        logits = [ops.cast(model(x, training=False), "float32") for model in self.models]
        if self.method == "mean_logits":
            return self._weighted_sum(logits)
        # log Σ_k w_k softmax(z_k / T) as a log-sum-exp over members, stable for large logits.
        log_terms = ops.stack(
            [
                ops.log_softmax(value / temperature, axis=-1) + math.log(weight)
                for value, weight in zip(logits, self.normalized_weights, strict=True)
                if weight > 0
            ]
        )  # (members, batch, classes)
        return temperature * ops.logsumexp(log_terms, axis=0)

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        # Compiled without a loss (`compile(metrics=["accuracy"])`), `evaluate` still reports
        # the metrics: the loss is 0, as nothing is trained.
        if self._compile_loss is None and not self.losses:
            return ops.zeros((), "float32")
        return super().compute_loss(x, y, y_pred, sample_weight, training=training)

    def _weighted_sum(self, values):
        total = values[0] * self.normalized_weights[0]
        for value, weight in zip(values[1:], self.normalized_weights[1:], strict=True):
            total = total + value * weight
        return total

    def get_config(self):
        return {
            "models": [keras.saving.serialize_keras_object(model) for model in self.models],
            "method": self.method,
            "weights": self.weights_argument,
            "name": self.name,
            "trainable": self.trainable,
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["models"] = [
            keras.saving.deserialize_keras_object(model) if isinstance(model, dict) else model
            for model in config["models"]
        ]
        return cls(**config)
