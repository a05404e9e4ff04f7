"""The loss of `SliceAwareClassifier`: the task, each slice's membership, each slice's expert."""

import keras
from keras import ops

from kbert.checks import check_int


@keras.saving.register_keras_serializable(package="kbert")
class SliceAwareLoss(keras.losses.Loss):
    """Sum of the slice-aware model's three losses, per example, on its packed outputs.

    With C classes and K slices, `y_pred` is `SliceAwareClassifier`'s output `(batch, C + K +
    K·C)`: the combined logits, then K membership logits, then K expert logits of C classes each.
    `y_true` is `(batch, 1 + K)` ints: the class, then K membership bits
    (`SliceAwareClassifier.targets`). Per example the loss is

        CE(combined, class) + indicator_weight · Σ_k BCE(membership_k)
                            + expert_weight · Σ_k member_k · CE(expert_k, class)

    so each expert learns only from its slice's members and each indicator from everyone.

    Args:
        num_classes: int >= 2.
        num_slices: int >= 1.
        indicator_weight: float >= 0, default 1.0.
        expert_weight: float >= 0, default 1.0.
        **kwargs: `name`, `reduction`.
    """

    def __init__(self, num_classes, num_slices, indicator_weight=1.0, expert_weight=1.0, **kwargs):
        kwargs.setdefault("name", "slice_aware_loss")
        super().__init__(**kwargs)
        self.num_classes = check_int("num_classes", num_classes, minimum=2)
        self.num_slices = check_int("num_slices", num_slices, minimum=1)
        for name, value in (
            ("indicator_weight", indicator_weight),
            ("expert_weight", expert_weight),
        ):
            if not value >= 0:
                raise ValueError(f"{name} must be a float >= 0; received {value!r}")
        self.indicator_weight = float(indicator_weight)
        self.expert_weight = float(expert_weight)

    def call(self, y_true, y_pred):
        classes, slices = self.num_classes, self.num_slices
        y_true = ops.cast(y_true, "int32")
        labels = y_true[:, 0]  # (batch,)
        members = ops.cast(y_true[:, 1:], "float32")  # (batch, K)
        y_pred = ops.cast(y_pred, "float32")
        combined = y_pred[:, :classes]  # (batch, C)
        indicators = y_pred[:, classes : classes + slices]  # (batch, K)
        experts = ops.reshape(y_pred[:, classes + slices :], (-1, slices, classes))  # (b, K, C)
        task = keras.losses.sparse_categorical_crossentropy(labels, combined, from_logits=True)
        membership = ops.sum(
            ops.maximum(indicators, 0.0)
            - indicators * members
            + ops.log1p(ops.exp(-ops.abs(indicators))),  # BCE with logits, stable form
            axis=-1,
        )
        expert_labels = ops.repeat(ops.expand_dims(labels, 1), slices, axis=1)  # (batch, K)
        expert = keras.losses.sparse_categorical_crossentropy(
            expert_labels, experts, from_logits=True
        )  # (batch, K)
        expert = ops.sum(expert * members, axis=-1)
        return task + self.indicator_weight * membership + self.expert_weight * expert

    def get_config(self):
        return {
            **super().get_config(),
            "num_classes": self.num_classes,
            "num_slices": self.num_slices,
            "indicator_weight": self.indicator_weight,
            "expert_weight": self.expert_weight,
        }
