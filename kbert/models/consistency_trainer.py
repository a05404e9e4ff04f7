"""Semi-supervised consistency training (UDA): labels where there are some, agreement elsewhere."""

import numbers

import keras
from keras import ops

from kbert.models import pretraining_utils

INPUT_KEYS = ("labelled", "unlabelled", "perturbed")


def consistency_loss(target_logits, perturbed_logits, confidence_threshold=0.45, temperature=0.85):
    """UDA's masked, sharpened consistency loss and the share of examples it counts.

    `mean over the batch of 1[max p(y|x) > β] · KL(softmax(t / τ) ‖ softmax(s))` with `t` the
    logits on the unlabelled originals (no gradient flows into them), `s` those on their
    perturbed copies, `β` the confidence threshold (read on the unsharpened `softmax(t)`)
    and `τ` the target's temperature (τ < 1 sharpens it). Masked-out examples count as zero in
    the mean, as in UDA's code (`aug_loss * unsup_loss_mask`, then `reduce_mean`).

    Args:
        target_logits: float tensor `(batch, classes)`. The model's logits on the originals.
        perturbed_logits: float tensor `(batch, classes)`. Its logits on the perturbed copies.
        confidence_threshold: float in [0, 1), default 0.45 (UDA's text setting). A
            negative value turns the mask off.
        temperature: float > 0, default 0.85 (UDA's text setting). 1 leaves the target as is.

    Returns:
        `(loss, confident_share)`: two float32 scalars.

    Example:
    >>> import numpy as np
    >>> same = np.array([[2.0, 0.0]])
    >>> float(consistency_loss(same, same, temperature=1.0)[0])
    0.0
    """
    target_logits = ops.stop_gradient(ops.cast(target_logits, "float32"))
    perturbed_logits = ops.cast(perturbed_logits, "float32")
    confident = ops.cast(
        ops.max(ops.softmax(target_logits, axis=-1), axis=-1) > confidence_threshold, "float32"
    )  # (batch,)
    target_log_probs = ops.log_softmax(target_logits / temperature, axis=-1)
    perturbed_log_probs = ops.log_softmax(perturbed_logits, axis=-1)
    kl = ops.sum(
        ops.exp(target_log_probs) * (target_log_probs - perturbed_log_probs), axis=-1
    )  # (batch,)
    return ops.mean(kl * confident), ops.mean(confident)


def _check_number(name, value, accepts, expected):
    """Returns `value` as a float if it is a real number `accepts` holds for, else raises."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not accepts(value):
        raise ValueError(f"{name} must be {expected}; received {value!r}")
    return float(value)


@keras.saving.register_keras_serializable(package="kbert")
class ConsistencyTrainer(keras.Model):
    """Trains a classifier on labelled examples plus UDA's consistency on unlabelled ones.

    The loss Keras minimizes (and logs as `loss`) is

        CE(y, f(x_labelled)) + consistency_weight · consistency_loss(f(x_unlabelled),
                                                                      f(x_perturbed))

    (`consistency_loss`: KL from the sharpened, confidence-masked prediction on an unlabelled
    text to the prediction on its perturbed copy; Xie et al. 2019). The target pass runs in
    inference mode (no dropout) and without gradient; UDA's code reads it from the same
    training-mode pass as the rest, a noisier target at no extra cost on its hardware.

    Training batches are `(x, y)` with `x` a dict of three encoder-input dicts: "labelled"
    (the batch `y` labels), "unlabelled" (texts without labels) and "perturbed" (the same
    texts perturbed, row by row: `kbert.text.token_perturbation.TokenPerturbation`).
    With only "labelled" the step is plain supervised training, so a baseline can see the
    very same labelled batches. Any other `x` (the encoder's own input dict) goes straight to
    the classifier: `evaluate` and `predict` measure it, validation included. Each term is
    also logged: `supervised_loss`, `consistency_loss` and `confident_share` (the share of
    unlabelled examples above the threshold).

    The trainer is a wrapper and is not saved; keep or save `trainer.classifier`.

    Args:
        classifier: keras.Model. Takes the encoder's input dict, returns logits
            (e.g. `SequenceClassifier`).
        consistency_weight: float >= 0, default 1.0 (UDA's λ).
        confidence_threshold: float in [-1, 1), default 0.45. β; negative: no masking.
        temperature: float > 0, default 0.85. τ of the target's softmax.
        **kwargs: `name`.

    Example:
    >>> import numpy as np
    >>> from kbert.models import Encoder, SequenceClassifier
    >>> classifier = SequenceClassifier(Encoder.from_preset("tiny"), 2)
    >>> trainer = ConsistencyTrainer(classifier)
    >>> trainer.compile("adam", metrics=["accuracy"])
    >>> inputs = lambda ids: {"token_ids": np.array(ids), "segment_ids": np.zeros((2, 3), "int32"),
    ...                       "padding_mask": np.ones((2, 3), "int32")}
    >>> x = {"labelled": inputs([[2, 5, 3], [2, 7, 3]]),
    ...      "unlabelled": inputs([[2, 6, 3], [2, 8, 3]]),
    ...      "perturbed": inputs([[2, 4, 3], [2, 4, 3]])}
    >>> history = trainer.fit(x, np.array([0, 1]), epochs=1, verbose=0)
    >>> sorted(history.history)
    ['accuracy', 'confident_share', 'consistency_loss', 'loss', 'supervised_loss']
    """

    def __init__(
        self,
        classifier,
        consistency_weight=1.0,
        confidence_threshold=0.45,
        temperature=0.85,
        **kwargs,
    ):
        if not isinstance(classifier, keras.Model):
            raise ValueError(
                f"classifier must be a keras.Model returning logits; received "
                f"{type(classifier).__name__}"
            )
        self.consistency_weight = _check_number(
            "consistency_weight", consistency_weight, lambda v: v >= 0, "a number >= 0"
        )
        self.confidence_threshold = _check_number(
            "confidence_threshold",
            confidence_threshold,
            lambda v: -1 <= v < 1,
            "a number in [-1, 1)",
        )
        self.temperature = _check_number(
            "temperature", temperature, lambda v: v > 0, "a number > 0"
        )
        super().__init__(**kwargs)
        self.classifier = classifier
        self.supervised_tracker = keras.metrics.Mean(name="supervised_loss")
        self.consistency_tracker = keras.metrics.Mean(name="consistency_loss")
        self.confident_tracker = keras.metrics.Mean(name="confident_share")
        self.built = True

    @property
    def metrics(self):
        metrics = super().metrics
        for tracker in (self.supervised_tracker, self.consistency_tracker, self.confident_tracker):
            if not any(metric is tracker for metric in metrics):
                metrics.append(tracker)
        return metrics

    @staticmethod
    def _parts(x):
        """`x`'s dicts by role, checked: a training dict, or the classifier's own inputs."""
        if not isinstance(x, dict) or "labelled" not in x:
            return None
        unknown = set(x) - set(INPUT_KEYS)
        if unknown or (("unlabelled" in x) != ("perturbed" in x)):
            raise ValueError(
                f"x must hold 'labelled' and optionally both 'unlabelled' and 'perturbed'; "
                f"received keys {sorted(x)}"
            )
        return x

    def call(self, x, training=None):
        parts = self._parts(x)
        return self.classifier(x if parts is None else parts["labelled"], training=training)

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        if y is None:
            raise ValueError("ConsistencyTrainer needs labels y for its labelled batch")
        cross_entropy = pretraining_utils.sparse_cross_entropy(
            ops.reshape(y, (-1,)), ops.cast(y_pred, "float32")
        )  # (batch,)
        weights = (
            ops.ones_like(cross_entropy)
            if sample_weight is None
            else ops.reshape(ops.cast(sample_weight, "float32"), (-1,))
        )
        supervised = pretraining_utils.weighted_mean(cross_entropy, weights)
        parts = self._parts(x)
        if parts is not None and "unlabelled" in parts:
            target = self.classifier(parts["unlabelled"], training=False)
            perturbed = self.classifier(parts["perturbed"], training=training)
            consistency, confident = consistency_loss(
                target, perturbed, self.confidence_threshold, self.temperature
            )
        else:
            consistency = confident = ops.zeros((), "float32")
        self.supervised_tracker.update_state(supervised)
        self.consistency_tracker.update_state(consistency)
        self.confident_tracker.update_state(confident)
        loss = supervised + self.consistency_weight * consistency
        for regularization in self.losses:
            loss = loss + ops.cast(regularization, "float32")
        return loss

    def get_config(self):
        raise NotImplementedError(
            "ConsistencyTrainer is a training wrapper and is not serialized; save the trained "
            "`trainer.classifier` instead"
        )
