"""A classifier with one membership head and one expert head per data slice (Chen et al. 2019)."""

import keras
import numpy as np
from keras import ops

from kbert.checks import check_int
from kbert.layers.dropout import Dropout
from kbert.layers.sequence_pooling import POOLING_MODES, SequencePooling
from kbert.models.pretraining_utils import encoder_dtype_policy, symbolic_encoder_inputs
from kbert.models.slice_aware_loss import SliceAwareLoss
from kbert.models.task_model import TaskModel

OUTPUT_PARTS = ("logits", "slice_indicators", "slice_experts")


@keras.saving.register_keras_serializable(package="kbert")
class SliceAwareClassifier(TaskModel):
    """A shared encoder, a base head, and per slice a membership head and an expert head.

    A simpler variant of slice-based learning (Chen et al., NeurIPS 2019), which learns one
    representation per slice and mixes them by attention. Here, on the pooled vector x:

    - base logits `b = Dense(C)(x)`;
    - per slice k, a membership ("indicator") logit `i_k = Dense(1)(x)`, trained to predict
      whether the example is in slice k, from every example;
    - per slice k, an expert `e_k = Dense(C)(x)`, trained (as `b + e_k`) on slice k's members
      only: what the slice needs beyond the base head;
    - combined logits `b + Σ_k sigmoid(i_k) · e_k`: each expert weighted by the predicted
      membership, so at test time no slicing function is needed.

    The three losses are summed (`SliceAwareLoss`, from `default_loss()`). Output: float32
    `(batch, C + K + K·C)`, the combined logits, the K indicator logits, then the K experts'
    logits (`b + e_k`) flattened; `output_view("logits")` is the plain classifier (its weights
    shared) for `predict`, `kbert.tasks.evaluate_classifier` and export.

    Args:
        encoder: `kbert.models.Encoder`, shared (held as `self.encoder`).
        num_classes: int >= 2.
        num_slices: int >= 1. The K slices, in the order of the membership columns.
        pooling: str, default "cls". One of `kbert.layers.SequencePooling`'s modes.
        dropout: float, default 0.1. Before the heads.
        **kwargs: `name`, `trainable`.

    Example:
    >>> from kbert.models import Encoder
    >>> model = SliceAwareClassifier(Encoder.from_preset("tiny"), num_classes=3, num_slices=2)
    >>> inputs = {"token_ids": ops.array([[2, 5, 3]]), "segment_ids": ops.zeros((1, 3), "int32"),
    ...           "padding_mask": ops.ones((1, 3), "int32")}
    >>> tuple(model(inputs).shape), tuple(model.output_view("logits")(inputs).shape)
    ((1, 11), (1, 3))
    """

    def __init__(
        self,
        encoder,
        num_classes,
        num_slices,
        pooling="cls",
        dropout=0.1,
        **kwargs,
    ):
        if pooling not in POOLING_MODES:
            raise ValueError(f"pooling must be one of {POOLING_MODES}; received {pooling!r}")
        num_classes = check_int("num_classes", num_classes, minimum=2)
        num_slices = check_int("num_slices", num_slices, minimum=1)
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1); received {dropout!r}")
        policy = encoder_dtype_policy(encoder)

        # === Functional model ===
        inputs = symbolic_encoder_inputs()
        outputs = encoder(inputs)
        x = SequencePooling(pooling, dtype=policy, name="pooling")(
            outputs["sequence_output"], padding_mask=inputs["padding_mask"]
        )
        x = Dropout(dropout, dtype=policy, name="head_dropout")(x)

        def dense(units, name):  # logits in float32 whatever the encoder's policy
            initializer = keras.initializers.TruncatedNormal(stddev=0.02)
            return keras.layers.Dense(
                units, kernel_initializer=initializer, dtype="float32", name=name
            )(x)

        base = dense(num_classes, "logits_base")  # (batch, C)
        indicators = dense(num_slices, "slice_indicators")  # (batch, K)
        residuals = ops.reshape(
            dense(num_slices * num_classes, "slice_residuals"), (-1, num_slices, num_classes)
        )  # (batch, K, C)
        weights = ops.expand_dims(ops.sigmoid(indicators), -1)  # (batch, K, 1)
        combined = base + ops.sum(weights * residuals, axis=1)  # (batch, C)
        experts = ops.expand_dims(base, 1) + residuals  # (batch, K, C)
        packed = ops.concatenate(
            [combined, indicators, ops.reshape(experts, (-1, num_slices * num_classes))], axis=-1
        )  # (batch, C + K + K·C)
        super().__init__(inputs=inputs, outputs=packed, **kwargs)

        # === Config ===
        self.encoder = encoder
        self._parts = {"logits": combined, "slice_indicators": indicators, "slice_experts": experts}
        self.num_classes = num_classes
        self.num_slices = num_slices
        self.pooling = pooling
        self.dropout = dropout

    def default_loss(self, indicator_weight=1.0, expert_weight=1.0):
        """`SliceAwareLoss` for this model's classes and slices.

        Args:
            indicator_weight: float >= 0, default 1.0. Weight of the membership losses.
            expert_weight: float >= 0, default 1.0. Weight of the experts' losses.
        """
        return SliceAwareLoss(self.num_classes, self.num_slices, indicator_weight, expert_weight)

    def default_metrics(self):
        """None: the packed output has no plain accuracy (score `output_view("logits")`)."""
        return []

    def output_view(self, part="logits"):
        """A model on the same weights returning one part of the output.

        Args:
            part: str, default "logits". "logits" (combined, `(batch, C)`), "slice_indicators"
                (`(batch, K)` membership logits) or "slice_experts" (`(batch, K, C)`).
        """
        if part not in OUTPUT_PARTS:
            raise ValueError(f"part must be one of {OUTPUT_PARTS}; received {part!r}")
        return keras.Model(self.inputs, self._parts[part], name=f"{self.name}_{part}")

    @staticmethod
    def targets(labels, membership):
        """The `(n, 1 + K)` int32 targets `SliceAwareLoss` reads: class, then membership bits.

        Args:
            labels: int array-like `(n,)`.
            membership: bool array-like `(n, K)`, or a dict of K bool arrays `(n,)` (in order).
        """
        labels = np.asarray(labels)
        if isinstance(membership, dict):
            membership = np.stack([np.asarray(v) for v in membership.values()], axis=-1)
        membership = np.asarray(membership)
        if labels.ndim != 1 or membership.ndim != 2 or len(membership) != len(labels):
            raise ValueError(
                "labels must be (n,) and membership (n, slices) with the same n; received "
                f"shapes {labels.shape} and {membership.shape}"
            )
        return np.concatenate([labels[:, None], membership.astype(labels.dtype)], 1).astype(
            np.int32
        )

    def _config(self):
        return {
            "num_classes": self.num_classes,
            "num_slices": self.num_slices,
            "pooling": self.pooling,
            "dropout": self.dropout,
        }
