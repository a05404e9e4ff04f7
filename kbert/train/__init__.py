"""Training: schedules (and, as the adaptation issues land, freezing and optimizers)."""

from kbert.train.schedules import (
    LearningRateSchedule,
    slanted_triangular,
    warmup_cosine_decay,
    warmup_inverse_sqrt,
    warmup_linear_decay,
)

__all__ = ["LearningRateSchedule", "slanted_triangular", "warmup_cosine_decay",
           "warmup_inverse_sqrt", "warmup_linear_decay"]
