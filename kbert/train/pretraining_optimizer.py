"""The optimizer of pretraining from scratch: AdamW, warmup then decay, clipping.

lab01 and `kbert pretrain` compile every objective's model the same way: AdamW (weight decay
0.01) on a warmup + cosine (the tutorial's) or linear (BERT's; with a long warmup, Cramming's
one-cycle) schedule that counts optimizer updates, gradients clipped to a global norm of 1, and
optional gradient accumulation (the update then averages N batches).
"""

from kbert.checks import check_int
from kbert.train.fused_adamw import FusedAdamW
from kbert.train.schedules import LearningRateSchedule

SCHEDULES = {"cosine": "warmup_cosine_decay", "linear": "warmup_linear_decay"}


def compile_for_pretraining(
    model,
    peak_learning_rate,
    total_steps,
    warmup_steps,
    gradient_accumulation=1,
    jit_compile=False,
    schedule="cosine",
):
    """Compiles `model` with AdamW on a warmup + cosine or linear decay schedule.

    Args:
        model: a kbert pretraining model (it computes its own loss).
        peak_learning_rate: float > 0. The rate after warmup.
        total_steps: int >= 1. Training batches (updates × `gradient_accumulation`).
        warmup_steps: int >= 0. Updates of linear warmup (capped at the updates there are).
        gradient_accumulation: int, default 1. Batches averaged per update.
        jit_compile: bool, default False. XLA.
        schedule: str, default "cosine". "cosine" or "linear": the decay to 0 after warmup.

    Example:
    >>> model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    >>> compile_for_pretraining(model, 1e-3, total_steps=10, warmup_steps=2)
    >>> model.optimizer.__class__.__name__
    'AdamW'
    """
    if not peak_learning_rate > 0:
        raise ValueError(
            f"peak_learning_rate must be a number > 0; received {peak_learning_rate!r}"
        )
    check_int("total_steps", total_steps, minimum=1, expected="an int >= 1")
    check_int("warmup_steps", warmup_steps, minimum=0, expected="an int >= 0")
    check_int("gradient_accumulation", gradient_accumulation, minimum=1, expected="an int >= 1")
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {sorted(SCHEDULES)}; received {schedule!r}")
    # Keras calls the schedule with the batch count; steps_per_update makes it count updates.
    updates = max(total_steps // gradient_accumulation, 1)
    schedule = LearningRateSchedule(
        SCHEDULES[schedule],
        peak_learning_rate=peak_learning_rate,
        total_steps=updates,
        warmup_steps=min(warmup_steps, updates),
        steps_per_update=gradient_accumulation,
    )
    model.compile(
        optimizer=FusedAdamW(
            schedule,
            weight_decay=0.01,
            global_clipnorm=1.0,
            gradient_accumulation_steps=gradient_accumulation
            if gradient_accumulation > 1
            else None,
        ),
        jit_compile=jit_compile,
    )


__all__ = ["SCHEDULES", "compile_for_pretraining"]
