"""Changing a loss weight while `fit` runs: an annealed auxiliary loss.

An auxiliary language-modelling loss helps most early in fine-tuning (it keeps the encoder
near what it learned in pretraining) and can be turned down later (Chronopoulou et al. 2019,
"An embarrassingly simple approach for transfer learning from pretrained language models":
the LM weight decays during fine-tuning). `LossWeightAnnealing` sets one of
`MultitaskModel`'s loss weights from a schedule, a pure function of the step such as
`linear_annealing`. The weights are variables, so the compiled train step reads each new
value without retracing.
"""

import keras
from keras import ops

from kbert.checks import check_int


def linear_annealing(step, start_value, end_value, total_steps):
    """Goes linearly from `start_value` at step 0 to `end_value` at `total_steps`, then stays.

    Args:
        step: int or tensor. The step (0-based); negative steps give `start_value`.
        start_value: float. The value at step 0.
        end_value: float. The value from `total_steps` on.
        total_steps: int >= 1.

    Returns:
        The value at `step` (a float32 tensor).

    Example:
    >>> float(linear_annealing(5, 1.0, 0.0, total_steps=10))
    0.5
    >>> float(linear_annealing(50, 1.0, 0.0, total_steps=10))
    0.0
    """
    check_int("total_steps", total_steps, minimum=1)
    progress = ops.clip(ops.cast(step, "float32") / float(total_steps), 0.0, 1.0)
    return start_value + (end_value - start_value) * progress


class LossWeightAnnealing(keras.callbacks.Callback):
    """Sets `model.set_loss_weight(name, schedule(step))` as training goes.

    With `every="step"`, at the start of every training batch, `step` being the optimizer's
    `iterations` (it keeps counting across `fit` calls; with `steps_per_execution > 1` Keras
    calls batch hooks once per execution). Under gradient accumulation `iterations` counts
    updates, so every batch of one update gets the same weight; a learning-rate schedule is
    called with the batch count instead (see `kbert.train.LearningRateSchedule`). With
    `every="epoch"`, at the start of every epoch, `step` being the epoch index.

    Args:
        name: str. A task name, or "language_model" (see `MultitaskModel.loss_weight_names`).
        schedule: callable from step to a float >= 0, e.g.
            `functools.partial(linear_annealing, start_value=0.5, end_value=0.0,
            total_steps=1000)`.
        every: str, default "step". "step" or "epoch".

    Attributes:
        history: list of `(step, value)` pairs, one per update.

    Example:
    >>> import functools
    >>> annealing = LossWeightAnnealing("language_model", functools.partial(
    ...     linear_annealing, start_value=0.5, end_value=0.0, total_steps=100))
    >>> annealing.every
    'step'
    """

    def __init__(self, name, schedule, every="step"):
        super().__init__()
        if not isinstance(name, str) or not name:
            raise ValueError(
                f"name must be a loss-weight name (a task or 'language_model'); received {name!r}"
            )
        if not callable(schedule):
            raise ValueError(
                f"schedule must be a callable from step to weight; received "
                f"{type(schedule).__name__}"
            )
        if every not in ("step", "epoch"):
            raise ValueError(f'every must be "step" or "epoch"; received {every!r}')
        self.name = name
        self.schedule = schedule
        self.every = every
        self.history = []

    def on_train_begin(self, logs=None):
        names = getattr(self.model, "loss_weight_names", None)
        if names is None or not hasattr(self.model, "set_loss_weight"):
            raise ValueError(
                f"LossWeightAnnealing needs a model with set_loss_weight (a "
                f"kbert MultitaskModel); received {type(self.model).__name__}"
            )
        if self.name not in names:
            raise ValueError(
                f"the model has no loss weight named {self.name!r}; expected one of {list(names)}"
            )

    def _update(self, step):
        value = float(ops.convert_to_numpy(self.schedule(step)))
        self.model.set_loss_weight(self.name, value)
        self.history.append((step, value))

    def on_train_batch_begin(self, batch, logs=None):
        if self.every == "step":
            self._update(int(ops.convert_to_numpy(self.model.optimizer.iterations)))

    def on_epoch_begin(self, epoch, logs=None):
        if self.every == "epoch":
            self._update(int(epoch))
