"""Training: schedules, the fine-tuning optimizer, callbacks, distribution strategies."""

from kbert.train.best_checkpoint import BestCheckpoint
from kbert.train.classifier_fine_tuning import fine_tune_classifier
from kbert.train.distribute import make_strategy, split_cpu
from kbert.train.fine_tuning import count_batches, fine_tuning_optimizer
from kbert.train.resumable_backup import ResumableBackup
from kbert.train.schedules import (
    LearningRateSchedule,
    slanted_triangular,
    warmup_cosine_decay,
    warmup_inverse_sqrt,
    warmup_linear_decay,
)

__all__ = [
    "BestCheckpoint",
    "LearningRateSchedule",
    "ResumableBackup",
    "count_batches",
    "fine_tune_classifier",
    "fine_tuning_optimizer",
    "make_strategy",
    "slanted_triangular",
    "split_cpu",
    "warmup_cosine_decay",
    "warmup_inverse_sqrt",
    "warmup_linear_decay",
]
