"""The standard BERT fine-tuning recipe: AdamW, warmup then linear decay to zero."""

import math

import keras

from kbert.checks import check_int
from kbert.train.schedules import LearningRateSchedule

# BERT excludes biases and LayerNorm parameters from weight decay.
NO_DECAY = ("bias", "gamma", "beta")


def count_batches(dataset):
    """Counts a finite dataset's batches by iterating it once (exact with length bucketing)."""
    return sum(1 for _ in dataset)


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
        A `keras.optimizers.AdamW`.
    """
    accumulation = check_accumulation_steps(gradient_accumulation_steps)
    optimizer = keras.optimizers.AdamW(
        learning_rate=learning_rate,
        weight_decay=weight_decay,
        global_clipnorm=global_clipnorm,
        gradient_accumulation_steps=accumulation if accumulation > 1 else None,
    )
    optimizer.exclude_from_weight_decay(var_names=list(NO_DECAY))
    return optimizer
