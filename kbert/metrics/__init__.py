"""Evaluation: classification scores in numpy and the figures that go with them.

- `kbert.metrics.classification_metrics`: accuracy, confusion matrix, per-class
  precision/recall/F1, macro-F1 (scikit-learn's default convention), GLUE binary F1, multi-label
  scores, and a JSON-ready report.
- `kbert.metrics.plots`: confusion-matrix heatmaps and learning curves written to PNG files.
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
from kbert.metrics.classifier_evaluation import evaluate_classifier
from kbert.metrics.plots import confusion_matrix_png, learning_curve_png

__all__ = [
    "accuracy",
    "binary_f1",
    "classification_report",
    "confusion_matrix",
    "confusion_matrix_png",
    "evaluate_classifier",
    "learning_curve_png",
    "macro_f1",
    "multi_label_scores",
    "per_class_scores",
]
