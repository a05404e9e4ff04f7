"""Training: schedules, distribution strategies callbacks (and, later, freezing and optimizers)."""

from kbert.train.distribute import make_strategy, split_cpu
from kbert.train.resumable_backup import ResumableBackup
from kbert.train.schedules import (
    LearningRateSchedule,
    slanted_triangular,
    warmup_cosine_decay,
    warmup_inverse_sqrt,
    warmup_linear_decay,
)

__all__ = ["LearningRateSchedule", "ResumableBackup", "make_strategy", "slanted_triangular", "split_cpu",
           "warmup_cosine_decay", "warmup_inverse_sqrt", "warmup_linear_decay"]
