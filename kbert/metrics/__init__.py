"""Evaluation: classification scores in numpy and the figures that go with them.

- `kbert.metrics.classification_metrics`: accuracy, confusion matrix, per-class
  precision/recall/F1, macro-F1 (scikit-learn's default convention), GLUE binary F1, multi-label
  scores, and a JSON-ready report.
- `kbert.metrics.plots`: confusion-matrix heatmaps and learning curves written to PNG files.
- `kbert.metrics.entity_metrics`: IOB2 decoding and repair, CoNLL entity F1, token accuracy.
- `kbert.metrics.squad_metrics`: the official SQuAD v1.1 exact match and token F1.
- `kbert.metrics.majority_class`: the majority class's accuracy and whether a run landed at it
  (all one class, or within a point of it), one definition for every report that counts them.
- `kbert.metrics.seed_comparison`: mean ± sd over seeds and the seed-paired difference to a
  baseline ("no difference" when it is inside its spread).

Running a model to be scored (predict, decode, then these) is `kbert.tasks`.
"""

from kbert.metrics.classification_metrics import (
    accuracy,
    binary_f1,
    classification_report,
    confusion_matrix,
    macro_f1,
    multi_label_scores,
    per_class_scores,
)
from kbert.metrics.entity_metrics import (
    bio_to_entities,
    entity_report,
    entity_scores,
    repair_bio,
    token_accuracy,
)
from kbert.metrics.majority_class import at_majority, majority_accuracy
from kbert.metrics.plots import confusion_matrix_png, data_size_curve_png, learning_curve_png
from kbert.metrics.seed_comparison import (
    format_difference,
    mean_sd,
    over_seeds,
    paired_difference,
    seed_summary,
    summarize_arms,
)
from kbert.metrics.squad_metrics import (
    exact_match_score,
    f1_score,
    metric_max_over_ground_truths,
    normalize_answer,
    squad_scores,
)

__all__ = [
    "accuracy",
    "binary_f1",
    "classification_report",
    "confusion_matrix",
    "confusion_matrix_png",
    "learning_curve_png",
    "data_size_curve_png",
    "macro_f1",
    "multi_label_scores",
    "per_class_scores",
    "bio_to_entities",
    "entity_report",
    "entity_scores",
    "repair_bio",
    "token_accuracy",
    "exact_match_score",
    "f1_score",
    "metric_max_over_ground_truths",
    "normalize_answer",
    "squad_scores",
    "at_majority",
    "majority_accuracy",
    "mean_sd",
    "over_seeds",
    "paired_difference",
    "seed_summary",
    "summarize_arms",
    "format_difference",
]
