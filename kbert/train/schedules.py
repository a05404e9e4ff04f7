"""Learning-rate schedules as pure functions of the step, plus one Keras wrapper.

Each function maps a step (a Python number or a tensor) to a learning rate, so it can be
unit-tested and plotted; `LearningRateSchedule` makes any of them a
`keras.optimizers.schedules.LearningRateSchedule` that serializes with the model.
"""

import math

import keras
from keras import ops

from kbert.checks import check_int


def _check(peak_learning_rate, total_steps, warmup_steps):
    if peak_learning_rate <= 0:
        raise ValueError(f"peak_learning_rate must be > 0; received {peak_learning_rate}")
    if total_steps is not None and total_steps < 1:
        raise ValueError(f"total_steps must be >= 1; received {total_steps}")
    if warmup_steps < 0 or (total_steps is not None and warmup_steps > total_steps):
        raise ValueError(
            f"warmup_steps must be in [0, total_steps={total_steps}]; received {warmup_steps}"
        )


def _warmup(step, peak_learning_rate, warmup_steps):
    # Step 0 gets a small non-zero rate: the first update should not be wasted.
    return peak_learning_rate * (step + 1.0) / max(warmup_steps, 1)


def warmup_linear_decay(
    step, peak_learning_rate, total_steps, warmup_steps=0, final_learning_rate=0.0
):
    """Linear warmup to the peak, then linear decay to `final_learning_rate` (BERT).

    Args:
        step: int or tensor. The optimizer step (0-based).
        peak_learning_rate: float. Rate at the end of warmup.
        total_steps: int. Step at which the final rate is reached (and kept).
        warmup_steps: int, default 0.
        final_learning_rate: float, default 0.0.

    Returns:
        The learning rate at `step` (a float tensor).

    Example:
    >>> round(float(warmup_linear_decay(5, 1e-3, total_steps=10, warmup_steps=0)), 6)
    0.0005
    """
    _check(peak_learning_rate, total_steps, warmup_steps)
    step = ops.cast(step, "float32")
    progress = (step - warmup_steps) / max(total_steps - warmup_steps, 1)
    decayed = peak_learning_rate + (final_learning_rate - peak_learning_rate) * ops.clip(
        progress, 0.0, 1.0
    )
    return ops.where(step < warmup_steps, _warmup(step, peak_learning_rate, warmup_steps), decayed)


def warmup_cosine_decay(
    step, peak_learning_rate, total_steps, warmup_steps=0, final_learning_rate=0.0
):
    """Linear warmup, then half a cosine down to `final_learning_rate` (the tutorial's choice).

    Args: as `warmup_linear_decay`.

    Example:
    >>> round(float(warmup_cosine_decay(5, 1e-3, total_steps=10)), 6)
    0.0005
    """
    _check(peak_learning_rate, total_steps, warmup_steps)
    step = ops.cast(step, "float32")
    progress = ops.clip((step - warmup_steps) / max(total_steps - warmup_steps, 1), 0.0, 1.0)
    cosine = 0.5 * (1.0 + ops.cos(math.pi * progress))
    decayed = final_learning_rate + (peak_learning_rate - final_learning_rate) * cosine
    return ops.where(step < warmup_steps, _warmup(step, peak_learning_rate, warmup_steps), decayed)


def warmup_inverse_sqrt(step, peak_learning_rate, warmup_steps):
    """Linear warmup, then decay with 1/sqrt(step) (Vaswani et al. 2017), no end step.

    Example:
    >>> round(float(warmup_inverse_sqrt(399, 1e-3, warmup_steps=100)), 6)
    0.0005
    """
    _check(peak_learning_rate, None, warmup_steps)
    if warmup_steps < 1:
        raise ValueError(f"warmup_steps must be >= 1 for inverse sqrt; received {warmup_steps}")
    step = ops.cast(step, "float32")
    decayed = peak_learning_rate * ops.sqrt(warmup_steps / ops.maximum(step + 1.0, 1.0))
    return ops.where(step < warmup_steps, _warmup(step, peak_learning_rate, warmup_steps), decayed)


def slanted_triangular(step, peak_learning_rate, total_steps, cut_fraction=0.1, ratio=32):
    """ULMFiT's slanted triangular rate (Howard & Ruder 2018, eq. 3).

    Rises linearly for `cut_fraction` of the steps, then falls linearly; the lowest rate is
    `peak_learning_rate / ratio`.

    Example:
    >>> round(float(slanted_triangular(10, 0.01, total_steps=100)), 6)
    0.01
    """
    _check(peak_learning_rate, total_steps, 0)
    if not 0.0 < cut_fraction < 1.0:
        raise ValueError(f"cut_fraction must be in (0, 1); received {cut_fraction}")
    if ratio < 1:
        raise ValueError(f"ratio must be >= 1; received {ratio}")
    step = ops.cast(step, "float32")
    cut = math.floor(total_steps * cut_fraction)
    p = ops.where(
        step < cut,
        step / max(cut, 1),
        1.0 - (step - cut) / max(cut * (1.0 / cut_fraction - 1.0), 1.0),
    )
    p = ops.clip(p, 0.0, 1.0)
    return peak_learning_rate * (1.0 + p * (ratio - 1.0)) / ratio


_SCHEDULES = {
    "warmup_linear_decay": warmup_linear_decay,
    "warmup_cosine_decay": warmup_cosine_decay,
    "warmup_inverse_sqrt": warmup_inverse_sqrt,
    "slanted_triangular": slanted_triangular,
}


@keras.saving.register_keras_serializable(package="kbert")
class LearningRateSchedule(keras.optimizers.schedules.LearningRateSchedule):
    """Wraps one of this module's functions as a Keras schedule.

    One convention for every optimizer kbert builds (a Keras optimizer, and each group of a
    `kbert.train.DiscriminativeOptimizer`): the schedule is called with the number of batches
    the optimizer has been applied to, as Keras calls its own schedules. Under gradient
    accumulation of N batches per update that is not `optimizer.iterations`, which counts
    updates. `steps_per_update=N` floor-divides the batch count by N, so the function sees the
    update index: update k (from 0) uses the function's rate at step k, `total_steps` and
    `warmup_steps` count updates, and the rate an optimizer reports between two updates (the
    one `keras.callbacks.TensorBoard` logs) is the rate of the next update. Pass the
    optimizer's `gradient_accumulation_steps` as `steps_per_update`.

    Args:
        name: str. One of "warmup_linear_decay", "warmup_cosine_decay", "warmup_inverse_sqrt",
            "slanted_triangular".
        steps_per_update: int >= 1, default 1. Batches per optimizer update (the optimizer's
            `gradient_accumulation_steps`).
        **arguments: the function's arguments except `step`.

    Example:
    >>> schedule = LearningRateSchedule("warmup_linear_decay", peak_learning_rate=6.5e-5,
    ...                                 total_steps=1000, warmup_steps=100)
    >>> optimizer = keras.optimizers.AdamW(learning_rate=schedule)
    >>> every_4 = LearningRateSchedule("warmup_linear_decay", peak_learning_rate=1e-3,
    ...                                total_steps=10, steps_per_update=4)
    >>> [round(float(every_4(step)), 6) for step in (0, 3, 4, 39)]
    [0.001, 0.001, 0.0009, 0.0001]
    """

    def __init__(self, name, steps_per_update=1, **arguments):
        if name not in _SCHEDULES:
            raise ValueError(f"unknown schedule {name!r}; expected one of {sorted(_SCHEDULES)}")
        steps_per_update = check_int("steps_per_update", steps_per_update, minimum=1)
        _SCHEDULES[name](0, **arguments)  # validates the arguments now, not at the first step
        self.name = name
        self.steps_per_update = steps_per_update
        self.arguments = arguments

    def __call__(self, step):
        if self.steps_per_update > 1:
            step = ops.floor_divide(step, self.steps_per_update)
        return _SCHEDULES[self.name](step, **self.arguments)

    def get_config(self):
        extra = {"steps_per_update": self.steps_per_update} if self.steps_per_update > 1 else {}
        return {"name": self.name, **extra, **self.arguments}
