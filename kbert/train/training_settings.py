"""The settings every fine-tuning entry point shares, written once and checked once.

`fine_tune_classifier`, `fine_tune_on_features`, `fine_tune_ner` and
`fine_tune_question_answerer` each take one `TrainingSettings`; `compile_and_fit`
(`kbert.train.fine_tuning`) reads it to build the optimizer and run `fit`.
"""

import dataclasses
import numbers

import keras

from kbert.checks import check_int, check_positive_int

VERBOSITIES = ("auto", 0, 1, 2)


def _check_real(name, value, minimum, maximum=None, minimum_excluded=False):
    """Returns `value` (as given) if it is a real number within its bounds, else raises."""
    low = "(" if minimum_excluded else "["
    expected = (
        f"a number > {minimum}"
        if minimum_excluded and maximum is None
        else f"a number >= {minimum}"
        if maximum is None
        else f"a number in {low}{minimum}, {maximum}]"
    )
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or value < minimum
        or (minimum_excluded and value == minimum)
        or (maximum is not None and value > maximum)
    ):
        raise ValueError(f"{name} must be {expected}; received {value!r}")
    return value


@dataclasses.dataclass(frozen=True)
class TrainingSettings:
    """How a fine-tuning run trains: schedule, batches, seed, and what watches it.

    The optimizer these name is `kbert.train.fine_tuning_optimizer`: AdamW with linear warmup
    then linear decay to 0 over exactly the run's updates, weight decay off biases and
    LayerNorms, global gradient-norm clipping at 1.0. Every field is checked on construction;
    a bad one raises a `ValueError` naming it. The settings are frozen: derive a variant with
    `replace`.

    Args:
        epochs: int >= 1, default 3.
        batch_size: int >= 1, default 32. Examples (or feature rows) per batch.
        learning_rate: float > 0, default 5e-5. The peak rate.
        warmup_fraction: float in [0, 1], default 0.1. Share of the updates spent warming up;
            ignored when `warmup_steps` is given.
        warmup_steps: int >= 0 or None, default None. An absolute number of warmup steps
            (the NAACL tutorial warms up for 10), capped at the run's length.
        weight_decay: float >= 0, default 0.01. Decoupled (AdamW) weight decay.
        seed: int >= 0, default 0. The shuffling seed (set Keras's global seed, with
            `keras.utils.set_random_seed`, for weights and dropout).
        gradient_accumulation_steps: int >= 1, default 1. Update once every N batches with
            their mean gradient: `batch_size × N` examples per update.
        jit_compile: bool or "auto", default False. Passed to `Model.compile`.
        callbacks: sequence of `keras.callbacks.Callback`, default (). Kept as a tuple.
        verbose: "auto", 0, 1 or 2, default 1. Passed to `Model.fit`.

    Example:
    >>> settings = TrainingSettings(epochs=2, learning_rate=1e-4)
    >>> settings.replace(batch_size=16).batch_size, settings.epochs
    (16, 2)
    >>> TrainingSettings(batch_size=0)
    Traceback (most recent call last):
    ...
    ValueError: batch_size must be a positive int; received 0
    """

    epochs: int = 3
    batch_size: int = 32
    learning_rate: float = 5e-5
    warmup_fraction: float = 0.1
    warmup_steps: int | None = None
    weight_decay: float = 0.01
    seed: int = 0
    gradient_accumulation_steps: int = 1
    jit_compile: bool | str = False
    callbacks: tuple = ()
    verbose: int | str = 1

    def __post_init__(self):
        checked = {
            "epochs": check_positive_int("epochs", self.epochs),
            "batch_size": check_positive_int("batch_size", self.batch_size),
            "learning_rate": _check_real(
                "learning_rate", self.learning_rate, 0, minimum_excluded=True
            ),
            "warmup_fraction": _check_real("warmup_fraction", self.warmup_fraction, 0, 1),
            "warmup_steps": None
            if self.warmup_steps is None
            else check_int(
                "warmup_steps", self.warmup_steps, minimum=0, expected="an int >= 0 or None"
            ),
            "weight_decay": _check_real("weight_decay", self.weight_decay, 0),
            "seed": check_int("seed", self.seed, minimum=0),
            "gradient_accumulation_steps": check_int(
                "gradient_accumulation_steps",
                self.gradient_accumulation_steps,
                minimum=1,
                expected="an int >= 1 (1 = no accumulation)",
            ),
            "callbacks": self._checked_callbacks(),
        }
        if not (isinstance(self.jit_compile, bool) or self.jit_compile == "auto"):
            raise ValueError(
                f'jit_compile must be True, False or "auto"; received {self.jit_compile!r}'
            )
        if isinstance(self.verbose, bool) or self.verbose not in VERBOSITIES:
            raise ValueError(f'verbose must be "auto", 0, 1 or 2; received {self.verbose!r}')
        for name, value in checked.items():  # ints as plain ints, callbacks as a tuple
            object.__setattr__(self, name, value)

    def _checked_callbacks(self):
        callbacks = self.callbacks
        if isinstance(callbacks, (str, bytes)) or not isinstance(callbacks, (list, tuple)):
            raise ValueError(
                f"callbacks must be a list or tuple of keras callbacks; received {callbacks!r}"
            )
        for callback in callbacks:
            if not isinstance(callback, keras.callbacks.Callback):
                raise ValueError(
                    "callbacks must hold keras.callbacks.Callback instances; received "
                    f"{callback!r} ({type(callback).__name__})"
                )
        return tuple(callbacks)

    def replace(self, **changes):
        """A copy with `changes` applied (and checked), like `dataclasses.replace`."""
        return dataclasses.replace(self, **changes)


DEFAULT_TRAINING = TrainingSettings()  # the sentence-level recipe's defaults
