"""Knowledge distillation: a frozen teacher classifier trains a smaller student."""

import keras
from keras import ops

from kbert.models import pretraining_utils
from kbert.models.classifier_ensemble import ClassifierEnsemble
from kbert.models.task_model import num_classes_of


def logits_and_sequence_output(model, argument):
    """A functional model returning a classifier's logits and its encoder's last hidden state.

    Both come from one pass: the new model reuses `model`'s graph (and weights), reading the
    last entry of the encoder's `hidden_states` output (its `sequence_output`) from the
    symbolic outputs the classifier kept when it called its encoder (`encoder_outputs`).

    Args:
        model: functional classifier with `encoder_outputs` (e.g. `SequenceClassifier`).
        argument: str. The argument name for error messages ("teacher" or "student").

    Returns:
        `keras.Model` mapping the classifier's inputs to `[logits, last hidden state]`.
    """
    if getattr(model, "encoder", None) is None:
        raise ValueError(
            f"{argument} must have an `.encoder` attribute when hidden_weight > 0 "
            f"(the hidden-state loss reads it); received "
            f"{type(model).__name__} without one"
        )
    encoder_outputs = getattr(model, "encoder_outputs", None)
    if not isinstance(encoder_outputs, dict) or "hidden_states" not in encoder_outputs:
        raise ValueError(
            f"{argument} must be a functional classifier that keeps its kbert Encoder's "
            f"outputs (`encoder_outputs` with `hidden_states`, as SequenceClassifier does) when "
            f"hidden_weight > 0; received {type(model).__name__} without them"
        )
    return keras.Model(
        model.input,
        [model.output, encoder_outputs["hidden_states"][-1]],
        name=f"{model.name}_with_hidden",
    )


def _masked_cosine_distance(student_hidden, teacher_hidden, padding_mask, sample_weight=None):
    """Mean of `1 - cos(student, teacher)` over real tokens (float32 scalar)."""
    student_hidden = ops.cast(student_hidden, "float32")
    teacher_hidden = ops.cast(teacher_hidden, "float32")
    dot = ops.sum(student_hidden * teacher_hidden, axis=-1)  # (batch, seq)
    norms = ops.sqrt(ops.maximum(ops.sum(ops.square(student_hidden), axis=-1), 1e-12)) * ops.sqrt(
        ops.maximum(ops.sum(ops.square(teacher_hidden), axis=-1), 1e-12)
    )
    distance = 1.0 - dot / norms  # (batch, seq)
    weights = ops.cast(padding_mask, "float32")
    if sample_weight is not None:
        weights = weights * ops.reshape(ops.cast(sample_weight, "float32"), (-1, 1))
    return pretraining_utils.weighted_mean(distance, weights)


def _check_loss_settings(temperature, soft_weight, hidden_weight):
    """Raises `ValueError` for a temperature <= 0, a soft weight outside [0, 1], a hidden
    weight < 0."""
    if (
        isinstance(temperature, bool)
        or not isinstance(temperature, (int, float))
        or not temperature > 0
    ):
        raise ValueError(f"temperature must be a number > 0; received {temperature!r}")
    if (
        isinstance(soft_weight, bool)
        or not isinstance(soft_weight, (int, float))
        or not 0.0 <= soft_weight <= 1.0
    ):
        raise ValueError(f"soft_weight must be a number in [0, 1]; received {soft_weight!r}")
    if (
        isinstance(hidden_weight, bool)
        or not isinstance(hidden_weight, (int, float))
        or not hidden_weight >= 0.0
    ):
        raise ValueError(f"hidden_weight must be a number >= 0; received {hidden_weight!r}")


@keras.saving.register_keras_serializable(package="kbert")
class Distiller(keras.Model):
    """Trains a student classifier to match a frozen teacher (Hinton et al. 2015; DistilBERT).

    The loss Keras minimizes (and logs as `loss`) is

        soft_weight · T² · KL(softmax(t / T) ‖ softmax(s / T))
        + (1 − soft_weight) · CE(y, s)
        + hidden_weight · mean over real tokens of (1 − cos(P h_s, h_t))

    with `t`, `s` the teacher's and student's logits, `h_t`, `h_s` their encoders' last hidden
    states (`sequence_output`) and `P` a learned Dense projection from the student's width to
    the teacher's (owned by the Distiller, present only when the widths differ; identity
    otherwise). The T² keeps the soft term's gradients on the same scale whatever the
    temperature (Hinton et al. 2015); the cosine term is DistilBERT's. The teacher's logits and
    hidden states are computed inside every training step, in one teacher pass in inference
    mode, so data augmentation and dropout in the student see fresh targets.

    Each term is also logged before its weight: `distill_soft_loss` (T² · KL),
    `distill_hard_loss` (CE; 0 when `y` is None) and `distill_hidden_loss` (1 − cos). With
    `compile(metrics=["accuracy"])` the accuracy compares `y` with the student's logits:
    `call` returns the student's logits, so `predict` runs the student alone and `evaluate`'s
    metrics measure the student (its `loss` is the distillation loss, for which the teacher
    runs). With `soft_weight=1` no labels are needed: fit on `x` alone.

    The teacher is frozen (`teacher.trainable = False`, set here on the object passed in, and
    on an ensemble teacher's members).
    After training, keep or export `distiller.student`: the Distiller is a training wrapper
    and cannot be saved itself (`get_config` raises `NotImplementedError`).

    Input `x`: the classifiers' input dict (`token_ids`, `segment_ids`, `padding_mask`).
    Output (from `call`): the student's float32 logits `(batch, num_classes)`.

    Args:
        teacher: keras.Model. A fine-tuned classifier (e.g. `SequenceClassifier`) returning
            float32 logits; with `hidden_weight > 0` a functional one with an `.encoder`. A
            `ClassifierEnsemble` (no hidden-state loss) teaches its members' softened
            distributions averaged: `ClassifierEnsemble.tempered_logits`.
        student: keras.Model. The classifier to train, same inputs and number of classes
            (e.g. `SequenceClassifier(student_encoder(teacher.encoder, 3), num_classes)`).
        temperature: float > 0, default 2.0. Softens both distributions in the soft term.
        soft_weight: float in [0, 1], default 0.5. Weight of the soft term; the hard
            cross-entropy on the labels gets `1 - soft_weight`.
        hidden_weight: float >= 0, default 0.0. Weight of the hidden-state cosine term.
        **kwargs: `name`.

    Raises:
        ValueError: `temperature <= 0`, `soft_weight` outside [0, 1], `hidden_weight < 0`,
            teacher and student with different class counts, a majority-vote ensemble
            teacher, or (when `hidden_weight > 0`)
            a teacher or student without an `.encoder` called once in its graph.

    Example:
    >>> import numpy as np
    >>> from kbert.models import Encoder, SequenceClassifier, student_encoder
    >>> teacher = SequenceClassifier(Encoder.from_preset("tiny", num_layers=4), 2)
    >>> student = SequenceClassifier(student_encoder(teacher.encoder, 2), 2)
    >>> distiller = Distiller(teacher, student, temperature=2.0, soft_weight=0.5)
    >>> distiller.compile("adam", metrics=["accuracy"])
    >>> x = {"token_ids": np.array([[2, 5, 3], [2, 7, 3]]),
    ...      "segment_ids": np.zeros((2, 3), "int32"), "padding_mask": np.ones((2, 3), "int32")}
    >>> history = distiller.fit(x, np.array([0, 1]), epochs=1, verbose=0)
    >>> sorted(history.history)
    ['accuracy', 'distill_hard_loss', 'distill_hidden_loss', 'distill_soft_loss', 'loss']
    """

    def __init__(
        self, teacher, student, temperature=2.0, soft_weight=0.5, hidden_weight=0.0, **kwargs
    ):
        _check_loss_settings(temperature, soft_weight, hidden_weight)
        for argument, model in (("teacher", teacher), ("student", student)):
            if not isinstance(model, keras.Model):
                raise ValueError(
                    f"{argument} must be a keras.Model classifier; received {type(model).__name__}"
                )
        teacher_classes, student_classes = num_classes_of(teacher), num_classes_of(student)
        if (
            teacher_classes is not None
            and student_classes is not None
            and teacher_classes != student_classes
        ):
            raise ValueError(
                f"teacher and student must predict the same classes; received "
                f"teacher with {teacher_classes} and student with "
                f"{student_classes}"
            )
        if isinstance(teacher, ClassifierEnsemble) and teacher.method == "majority_vote":
            raise ValueError(
                "teacher is a majority_vote ClassifierEnsemble, which has no soft targets; "
                "expected method 'mean_probabilities' or 'mean_logits'"
            )
        if hidden_weight > 0:
            teacher_pair = logits_and_sequence_output(teacher, "teacher")
            student_pair = logits_and_sequence_output(student, "student")
        super().__init__(**kwargs)

        # === Models ===
        teacher.trainable = False
        # An ensemble's own flag does not reach members added after its constructor ran.
        members = teacher.models if isinstance(teacher, ClassifierEnsemble) else []
        for member in members:
            member.trainable = False
        self.teacher = teacher
        self.student = student
        self.temperature = float(temperature)
        self.soft_weight = float(soft_weight)
        self.hidden_weight = float(hidden_weight)
        self.hidden_projection = None
        if hidden_weight > 0:
            self._teacher_pair = teacher_pair
            self._student_pair = student_pair
            teacher_width = teacher_pair.outputs[1].shape[-1]
            student_width = student_pair.outputs[1].shape[-1]
            if teacher_width != student_width:
                # Trained with the student; float32 because the cosine is computed in float32.
                self.hidden_projection = keras.layers.Dense(
                    teacher_width, dtype="float32", name="hidden_projection"
                )
                self.hidden_projection.build((None, None, student_width))
        # The student's hidden states from the last `call`, for `compute_loss` (same trace).
        self._student_outputs = None

        # === Metrics ===
        self.soft_loss_tracker = keras.metrics.Mean(name="distill_soft_loss")
        self.hard_loss_tracker = keras.metrics.Mean(name="distill_hard_loss")
        self.hidden_loss_tracker = keras.metrics.Mean(name="distill_hidden_loss")
        self.built = True

    @property
    def metrics(self):
        metrics = super().metrics
        for tracker in (self.soft_loss_tracker, self.hard_loss_tracker, self.hidden_loss_tracker):
            if not any(metric is tracker for metric in metrics):
                metrics.append(tracker)
        return metrics

    def call(self, x, training=None):
        if self.hidden_weight > 0:
            logits, hidden = self._student_pair(x, training=training)
            self._student_outputs = (logits, hidden)
            return logits
        return self.student(x, training=training)

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        if y is None and self.soft_weight < 1.0:
            raise ValueError(
                f"Distiller needs labels y for the hard loss when soft_weight < 1; "
                f"received y=None with soft_weight={self.soft_weight}"
            )
        student_logits = ops.cast(y_pred, "float32")
        # The teacher runs in inference mode, inside the step; no gradient reaches it.
        if self.hidden_weight > 0:
            teacher_logits, teacher_hidden = self._teacher_pair(x, training=False)
            teacher_hidden = ops.stop_gradient(teacher_hidden)
        elif isinstance(self.teacher, ClassifierEnsemble):
            # Soft targets of an ensemble: its members' softened distributions, averaged.
            teacher_logits = self.teacher.tempered_logits(x, self.temperature)
        else:
            teacher_logits = self.teacher(x, training=False)
        teacher_logits = ops.stop_gradient(ops.cast(teacher_logits, "float32"))

        # Soft term: T² · KL(p_t ‖ p_s) on temperature-softened distributions.
        teacher_log_probs = ops.log_softmax(teacher_logits / self.temperature, axis=-1)
        student_log_probs = ops.log_softmax(student_logits / self.temperature, axis=-1)
        kl = ops.sum(
            ops.exp(teacher_log_probs) * (teacher_log_probs - student_log_probs), axis=-1
        )  # (batch,)
        example_weights = (
            ops.ones_like(kl)
            if sample_weight is None
            else ops.reshape(ops.cast(sample_weight, "float32"), (-1,))
        )
        soft_loss = self.temperature**2 * pretraining_utils.weighted_mean(kl, example_weights)

        if y is None:
            hard_loss = ops.zeros((), "float32")
        else:
            cross_entropy = pretraining_utils.sparse_cross_entropy(
                ops.reshape(y, (-1,)), student_logits
            )  # (batch,)
            hard_loss = pretraining_utils.weighted_mean(cross_entropy, example_weights)

        if self.hidden_weight > 0:
            cached = self._student_outputs
            if cached is not None and cached[0] is y_pred:
                student_hidden = cached[1]
            else:
                # y_pred did not come from this model's last `call`: one more student pass.
                student_hidden = self._student_pair(x, training=training)[1]
            student_hidden = ops.cast(student_hidden, "float32")
            if self.hidden_projection is not None:
                student_hidden = self.hidden_projection(student_hidden)
            hidden_loss = _masked_cosine_distance(
                student_hidden, teacher_hidden, x["padding_mask"], sample_weight
            )
        else:
            hidden_loss = ops.zeros((), "float32")

        self.soft_loss_tracker.update_state(soft_loss)
        self.hard_loss_tracker.update_state(hard_loss)
        self.hidden_loss_tracker.update_state(hidden_loss)
        loss = (
            self.soft_weight * soft_loss
            + (1.0 - self.soft_weight) * hard_loss
            + self.hidden_weight * hidden_loss
        )
        for regularization in self.losses:
            loss = loss + ops.cast(regularization, "float32")
        return loss

    def get_config(self):
        raise NotImplementedError(
            "Distiller is a training wrapper and is not serialized; save the trained "
            "`distiller.student` instead (e.g. `distiller.student.save('student.keras')`)"
        )
