"""The standard BERT fine-tuning recipe: AdamW, warmup then linear decay to zero."""

import contextlib
import math
import time

import keras

from kbert.checks import check_int
from kbert.keras_internals import sublayers
from kbert.models.question_answerer import QuestionAnswerer
from kbert.models.sequence_classifier import SequenceClassifier
from kbert.models.slice_aware_classifier import SliceAwareClassifier
from kbert.models.span_classifier import SpanClassifier
from kbert.models.token_classifier import TokenClassifier
from kbert.train.build_before_tracing import BuildBeforeTracing
from kbert.train.fused_adamw import FusedAdamW
from kbert.train.schedules import LearningRateSchedule

# BERT excludes biases and LayerNorm parameters from weight decay.
NO_DECAY = ("bias", "gamma", "beta")


def count_batches(dataset):
    """Counts a finite dataset's batches by iterating it once (exact with length bucketing)."""
    return sum(1 for _ in dataset)


def reads_pooler(model):
    """Whether `model`'s outputs depend on its encoder's pooler (`pooled_output`).

    A `SequenceClassifier` reads it with `pooling="pooler"` only; the token and span models
    (`TokenClassifier`, `SpanClassifier`, `QuestionAnswerer`) read `sequence_output` alone. Any
    other model is assumed to read it.
    """
    if isinstance(model, (SequenceClassifier, SliceAwareClassifier)):
        return model.pooling == "pooler"
    return not isinstance(model, (TokenClassifier, SpanClassifier, QuestionAnswerer))


@contextlib.contextmanager
def unused_pooler_frozen(model):
    """Freezes the encoder's pooler inside the block when `model` does not read it.

    A pooler the loss does not depend on gets no gradient, and Keras warns at every fit
    ("Gradients do not exist for variables ['pooler/kernel', 'pooler/bias']"); not training it
    is the same computation, said plainly. The pooler's `trainable` comes back afterwards, so
    the encoder can serve a head that reads it next. Models saved inside the block (a best
    checkpoint) record it frozen, as it was.

    Args:
        model: a Keras model, usually with an `encoder` that has a `pooler`.

    Example:
    >>> from kbert.models import Encoder
    >>> classifier = SequenceClassifier(Encoder.from_preset("tiny"), 2, pooling="cls")
    >>> with unused_pooler_frozen(classifier):
    ...     classifier.encoder.pooler.trainable
    False
    >>> classifier.encoder.pooler.trainable
    True
    """
    pooler = getattr(getattr(model, "encoder", None), "pooler", None)
    unread = [] if pooler is None or reads_pooler(model) else [pooler]
    with layers_frozen(unread):
        yield


@contextlib.contextmanager
def poolers_frozen(model):
    """Freezes every encoder pooler inside `model` (by its layer name, `pooler`) in the block.

    For pretraining: no pretraining objective kbert's CLI offers reads `pooled_output` (NSP
    and SOP would), so the poolers of its encoders (ELECTRA has two) get no gradient, and Keras
    warns at every fit. Their `trainable` comes back afterwards, so an encoder saved after the
    block fine-tunes its pooler with a head that reads it.

    Args:
        model: a Keras model (a pretraining model and its encoders).
    """
    with layers_frozen(layer for layer in sublayers(model) if layer.name == "pooler"):
        yield


@contextlib.contextmanager
def layers_frozen(layers):
    """Sets `trainable = False` on each trainable layer of `layers` in the block, then back."""
    frozen = [layer for layer in layers if layer.trainable]
    for layer in frozen:
        layer.trainable = False
    try:
        yield
    finally:
        for layer in frozen:
            layer.trainable = True


def fine_tuning_optimizer(
    total_steps,
    learning_rate=1e-4,
    warmup_fraction=0.1,
    weight_decay=0.01,
    final_learning_rate=0.0,
    clipnorm=1.0,
    gradient_accumulation_steps=1,
):
    """AdamW with linear warmup then linear decay, decoupled weight decay off biases and norms.

    The NAACL tutorial fine-tunes with lr 6.5e-5 decaying linearly to 0 after warmup; BERT uses
    2e-5…5e-5 with 10% warmup. The schedule is a pure function of the step
    (`kbert.train.warmup_linear_decay`), so the rate any step used can be recomputed.

    Args:
        total_steps: int >= 1. Optimizer steps over the whole run (epochs × batches per epoch).
        learning_rate: float, default 1e-4. The peak rate.
        warmup_fraction: float, default 0.1. Share of `total_steps` spent warming up.
        weight_decay: float, default 0.01.
        final_learning_rate: float, default 0.0.
        clipnorm: float or None, default 1.0. Global gradient-norm clipping (of the
            accumulated gradient, when accumulating).
        gradient_accumulation_steps: int >= 1, default 1. Average the gradients of this many
            batches before each update (textbook §20.11.4): `batch_size × N` examples per
            update in the memory of one batch. `total_steps` still counts batches; the schedule
            counts the updates that happen (`total_steps // N`: Keras carries a window across
            epochs and never applies a last one of fewer than N batches), so the schedule spans
            exactly the updates a run makes.

    The Adam is bias-corrected (Keras's AdamW always divides its moments by 1 − β^t), so the
    first update moves each weight by about the rate; BERT's original optimizer skipped the
    correction, which Mosbach et al. 2021 name as a cause of failed runs on small sets.

    Returns:
        A `keras.optimizers.AdamW`.
    """
    total_steps = check_int("total_steps", total_steps, minimum=1, expected="an int >= 1")
    if not 0.0 <= warmup_fraction <= 1.0:
        raise ValueError(f"warmup_fraction must be in [0, 1]; received {warmup_fraction!r}")
    accumulation = check_accumulation_steps(gradient_accumulation_steps)
    if total_steps < accumulation:
        raise ValueError(
            f"total_steps ({total_steps}) must be at least gradient_accumulation_steps "
            f"({accumulation}): with fewer batches no update is ever applied"
        )
    updates = total_steps // accumulation
    schedule = LearningRateSchedule(
        "warmup_linear_decay",
        peak_learning_rate=learning_rate,
        total_steps=updates,
        warmup_steps=int(math.floor(warmup_fraction * updates)),
        final_learning_rate=final_learning_rate,
        steps_per_update=accumulation,
    )
    return decoupled_adamw(
        schedule,
        weight_decay,
        global_clipnorm=clipnorm,
        gradient_accumulation_steps=accumulation,
    )


def check_accumulation_steps(gradient_accumulation_steps):
    """Returns `gradient_accumulation_steps` as an int >= 1, or raises a ValueError naming it."""
    return check_int(
        "gradient_accumulation_steps",
        gradient_accumulation_steps,
        minimum=1,
        expected="an int >= 1 (1 = no accumulation)",
    )


def decoupled_adamw(
    learning_rate, weight_decay=0.01, global_clipnorm=None, gradient_accumulation_steps=1
):
    """AdamW whose decoupled weight decay skips biases and LayerNorm parameters (BERT's rule).

    Args:
        learning_rate: float, schedule, or callable.
        weight_decay: float, default 0.01.
        global_clipnorm: float or None, default None.
        gradient_accumulation_steps: int >= 1, default 1. Keras's own accumulation: the
            optimizer averages this many batches' gradients, then clips, decays and updates.
            A schedule given here is called with the batch count; see
            `LearningRateSchedule(steps_per_update=...)`.

    Returns:
        A `FusedAdamW` (`keras.optimizers.AdamW` with a fused update, `kbert.train.fused_adamw`).
    """
    accumulation = check_accumulation_steps(gradient_accumulation_steps)
    optimizer = FusedAdamW(
        learning_rate=learning_rate,
        weight_decay=weight_decay,
        global_clipnorm=global_clipnorm,
        gradient_accumulation_steps=accumulation if accumulation > 1 else None,
    )
    optimizer.exclude_from_weight_decay(var_names=list(NO_DECAY))
    return optimizer


def compile_and_fit(
    model,
    settings,
    train_batches,
    validation_batches,
    batches_per_epoch,
    loss,
    metrics=None,
    optimizer=None,
):
    """Compiles `model` with the standard recipe and fits it; returns `(history, seconds)`.

    The tail every fine-tuning entry point shares: the optimizer over exactly the run's steps
    (`fine_tuning_optimizer`, or `optimizer(total_steps)`), compile, then a timed `fit` with
    the encoder's pooler frozen when the model does not read it (`unused_pooler_frozen`).

    Args:
        model: a Keras model.
        settings: `kbert.train.TrainingSettings`.
        train_batches: a `tf.data.Dataset` of `(inputs, labels)` batches that reshuffles
            itself each epoch (`fit` is told not to shuffle).
        validation_batches: a `tf.data.Dataset` or None. Evaluated after every epoch.
        batches_per_epoch: int >= 1. The training batches in one epoch; the schedule spans
            `batches_per_epoch × settings.epochs` steps.
        loss: a Keras loss.
        metrics: Keras metrics, default None.
        optimizer: callable or None, default None. `optimizer(total_steps)` returns the
            optimizer to use instead of the standard one; with accumulation it must
            accumulate `settings.gradient_accumulation_steps` batches itself.

    Returns:
        `(keras.callbacks.History, training seconds)`.
    """
    steps = batches_per_epoch * settings.epochs
    warmup_fraction = settings.warmup_fraction
    if settings.warmup_steps is not None:
        warmup_fraction = min(settings.warmup_steps / steps, 1.0)
    accumulation = settings.gradient_accumulation_steps
    if optimizer is None:
        compiled_optimizer = fine_tuning_optimizer(
            steps,
            settings.learning_rate,
            warmup_fraction,
            settings.weight_decay,
            gradient_accumulation_steps=accumulation,
        )
    else:
        compiled_optimizer = optimizer(steps)
        if not isinstance(compiled_optimizer, keras.optimizers.Optimizer):
            raise ValueError(
                "optimizer must be a callable returning a keras Optimizer from the "
                f"step count; it returned {type(compiled_optimizer).__name__}"
            )
        if (compiled_optimizer.gradient_accumulation_steps or 1) != accumulation:
            raise ValueError(
                f"gradient_accumulation_steps={accumulation} but the optimizer from "
                "`optimizer(total_steps)` accumulates "
                f"{compiled_optimizer.gradient_accumulation_steps or 1}; make it with "
                f"gradient_accumulation_steps={accumulation}"
            )
    with unused_pooler_frozen(model):  # a pooler the head does not read gets no gradient
        model.compile(
            optimizer=compiled_optimizer,
            loss=loss,
            metrics=metrics,
            jit_compile=settings.jit_compile,
        )
        start = time.perf_counter()
        history = model.fit(
            train_batches,
            validation_data=validation_batches,
            epochs=settings.epochs,
            shuffle=False,  # the batches reshuffle themselves every epoch; Keras would only warn
            # BuildBeforeTracing goes last: see its docstring.
            callbacks=[*settings.callbacks, BuildBeforeTracing(train_batches)],
            verbose=settings.verbose,
        )
    return history, time.perf_counter() - start
