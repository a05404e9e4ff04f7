"""Training: schedules, the fine-tuning optimizer, callbacks, distribution strategies, and which
weights train when (freezing by layer group, gradual unfreezing, chain-thaw, per-group learning
rates)."""

from kbert.train.best_checkpoint import BestCheckpoint
from kbert.train.build_before_tracing import BuildBeforeTracing
from kbert.train.classifier_fine_tuning import fine_tune_classifier
from kbert.train.discriminative_learning_rates import (
    DiscriminativeOptimizer,
    layerwise_learning_rates,
    layerwise_schedules,
)
from kbert.train.distribute import make_strategy, split_cpu
from kbert.train.fine_tuning import count_batches, fine_tuning_optimizer
from kbert.train.freezing import (
    format_trainable_report,
    freeze,
    freeze_all_but_top,
    freeze_embeddings,
    freeze_for_feature_extraction,
    layer_groups,
    trainable_report,
    unfreeze,
)
from kbert.train.fused_adamw import FusedAdamW
from kbert.train.loss_weight_annealing import LossWeightAnnealing, linear_annealing
from kbert.train.pretrained_anchor import (
    PretrainedAnchor,
    anchor_penalty,
    anchor_to_pretrained,
    estimate_diagonal_fisher,
    release_anchor,
)
from kbert.train.resumable_backup import ResumableBackup
from kbert.train.schedules import (
    LearningRateSchedule,
    slanted_triangular,
    warmup_cosine_decay,
    warmup_inverse_sqrt,
    warmup_linear_decay,
)
from kbert.train.time_budget import plan_time_budget
from kbert.train.training_settings import TrainingSettings
from kbert.train.unfreezing import ChainThaw, GradualUnfreezing

__all__ = [
    "FusedAdamW",
    "BestCheckpoint",
    "BuildBeforeTracing",
    "LearningRateSchedule",
    "ResumableBackup",
    "TrainingSettings",
    "count_batches",
    "fine_tune_classifier",
    "fine_tuning_optimizer",
    "make_strategy",
    "plan_time_budget",
    "slanted_triangular",
    "split_cpu",
    "warmup_cosine_decay",
    "warmup_inverse_sqrt",
    "warmup_linear_decay",
]
# Which weights train, and when (the NAACL 2019 tutorial's §4.2).
__all__ += [
    "ChainThaw",
    "DiscriminativeOptimizer",
    "GradualUnfreezing",
    "format_trainable_report",
    "freeze",
    "freeze_all_but_top",
    "freeze_embeddings",
    "freeze_for_feature_extraction",
    "layer_groups",
    "layerwise_learning_rates",
    "layerwise_schedules",
    "trainable_report",
    "unfreeze",
]
# Loss weights changed while fit runs (an annealed auxiliary LM loss).
__all__ += ["LossWeightAnnealing", "linear_annealing"]
# Regularisation toward the pretrained weights (L2-SP, EWC with a diagonal Fisher).
__all__ += [
    "PretrainedAnchor",
    "anchor_penalty",
    "anchor_to_pretrained",
    "estimate_diagonal_fisher",
    "release_anchor",
]
