"""Classification scores in plain numpy: accuracy, confusion matrix, precision/recall/F1.

The conventions follow scikit-learn with `zero_division=0`, so results can be compared with
published numbers: a score whose denominator is zero (precision of a class never predicted, recall
of a class absent from `y_true`, F1 of a class with no true and no predicted examples) is 0.

Macro-F1 (`macro_f1`, and `classification_report`'s `macro_f1`) is the unweighted mean of the
per-class F1 over the classes that occur in `y_true` or `y_pred` (their union), which is what
`sklearn.metrics.f1_score(y_true, y_pred, average="macro")` computes with its default `labels=None`.
A class that occurs in neither is left out rather than averaged in as 0, so the score does not
depend on how many unused ids `num_classes` reserves. It differs from `f1_score(...,
labels=range(num_classes), average="macro")` only when some class occurs in neither array; that
variant is `per_class_scores(...)["f1"].mean()`.

Inputs are 1-D sequences of integer class ids (lists or numpy arrays), e.g. `np.argmax(logits, -1)`
for predictions; labels held as floats must be cast with `.astype(int)` first.
"""

import numbers

import numpy as np


def _check_num_classes(num_classes):
    if (
        not isinstance(num_classes, numbers.Integral)
        or isinstance(num_classes, bool)
        or num_classes < 1
    ):
        raise ValueError(f"num_classes must be a positive int; received {num_classes!r}")
    return int(num_classes)


def _class_ids(values, name, num_classes=None):
    """Returns `values` as a 1-D int64 array after checking shape, dtype and range."""
    array = np.asarray(values)
    if array.ndim != 1:
        raise ValueError(
            f"{name} must be a 1-D sequence of class ids; received shape {array.shape}"
        )
    if array.size == 0:
        raise ValueError(f"{name} must not be empty; received 0 class ids")
    if array.dtype == bool or not np.issubdtype(array.dtype, np.integer):
        raise ValueError(
            f"{name} must hold integer class ids; received dtype {array.dtype} (cast labels "
            "with .astype(int), predictions with np.argmax)"
        )
    if array.min() < 0:
        raise ValueError(f"{name} must hold class ids >= 0; received {array.min()}")
    if num_classes is not None and array.max() >= num_classes:
        raise ValueError(
            f"{name} must hold class ids in [0, {num_classes - 1}] (num_classes={num_classes}); "
            f"received {array.max()}"
        )
    return array.astype(np.int64)


def _pair(y_true, y_pred, num_classes=None):
    y_true = _class_ids(y_true, "y_true", num_classes)
    y_pred = _class_ids(y_pred, "y_pred", num_classes)
    if y_true.shape != y_pred.shape:
        raise ValueError(
            "y_true and y_pred must have the same length; received "
            f"len(y_true)={len(y_true)} and len(y_pred)={len(y_pred)}"
        )
    return y_true, y_pred


def _safe_divide(numerator, denominator):
    """Elementwise numerator / denominator, 0 where the denominator is 0 (zero_division=0)."""
    numerator = np.asarray(numerator, dtype=np.float64)
    denominator = np.asarray(denominator, dtype=np.float64)
    result = np.zeros(np.broadcast(numerator, denominator).shape)
    np.divide(numerator, denominator, out=result, where=denominator != 0)
    return result


def accuracy(y_true, y_pred):
    """Returns the fraction of examples whose predicted class equals the true class.

    Args:
        y_true: 1-D sequence of int class ids.
        y_pred: 1-D sequence of int class ids, the same length as `y_true`.

    Returns:
        float in [0, 1].

    Example:
    >>> accuracy([0, 1, 2, 2], [0, 2, 2, 2])
    0.75
    """
    y_true, y_pred = _pair(y_true, y_pred)
    return float(np.mean(y_true == y_pred))


def confusion_matrix(y_true, y_pred, num_classes):
    """Counts examples by (true class, predicted class).

    Args:
        y_true: 1-D sequence of int class ids in [0, num_classes).
        y_pred: 1-D sequence of int class ids in [0, num_classes), the same length as `y_true`.
        num_classes: int. Number of classes; fixes the matrix size even when some class occurs in
            neither array.

    Returns:
        int64 array of shape (num_classes, num_classes): entry [i, j] is the number of examples of
        true class i predicted as class j (rows = true class, columns = predicted class).

    Example:
    >>> confusion_matrix([0, 1, 1, 2], [0, 1, 0, 2], num_classes=3).tolist()
    [[1, 0, 0], [1, 1, 0], [0, 0, 1]]
    """
    num_classes = _check_num_classes(num_classes)
    y_true, y_pred = _pair(y_true, y_pred, num_classes)
    flat = np.bincount(y_true * num_classes + y_pred, minlength=num_classes * num_classes)
    return flat.reshape(num_classes, num_classes).astype(np.int64)


def _scores_from_matrix(matrix):
    true_positives = np.diag(matrix)
    predicted = matrix.sum(axis=0)  # column sums: examples predicted as each class
    support = matrix.sum(axis=1)  # row sums: examples of each true class
    false_positives = predicted - true_positives
    false_negatives = support - true_positives
    return {
        "precision": _safe_divide(true_positives, predicted),
        "recall": _safe_divide(true_positives, support),
        # 2tp / (2tp + fp + fn) equals 2PR / (P + R) where both are defined, and is 0 (not NaN)
        # when P = R = 0, as in scikit-learn.
        "f1": _safe_divide(
            2 * true_positives, 2 * true_positives + false_positives + false_negatives
        ),
        "support": support.astype(np.int64),
    }


def per_class_scores(y_true, y_pred, num_classes):
    """Precision, recall, F1 and support of each class (one-vs-rest).

    A score whose denominator is zero is 0, as scikit-learn's
    `precision_recall_fscore_support(..., labels=range(num_classes), zero_division=0)`.

    Args:
        y_true: 1-D sequence of int class ids in [0, num_classes).
        y_pred: 1-D sequence of int class ids in [0, num_classes), the same length as `y_true`.
        num_classes: int. Number of classes; every class gets an entry, used or not.

    Returns:
        dict with keys "precision", "recall", "f1" (float64 arrays of shape (num_classes,)) and
        "support" (int64 array of shape (num_classes,): examples of each class in `y_true`).

    Example:
    >>> scores = per_class_scores([0, 0, 1, 1], [0, 1, 1, 1], num_classes=3)
    >>> scores["precision"].round(3).tolist(), scores["recall"].tolist()
    ([1.0, 0.667, 0.0], [0.5, 1.0, 0.0])
    """
    return _scores_from_matrix(confusion_matrix(y_true, y_pred, num_classes))


def _macro_f1_from_matrix(matrix):
    present = (matrix.sum(axis=0) + matrix.sum(axis=1)) > 0
    return float(np.mean(_scores_from_matrix(matrix)["f1"][present]))


def macro_f1(y_true, y_pred, num_classes):
    """Unweighted mean of the per-class F1 over the classes present in `y_true` or `y_pred`.

    This is scikit-learn's default `f1_score(y_true, y_pred, average="macro")` (`labels=None`: the
    sorted union of the labels in both arrays). Classes in neither array are left out; averaging
    them in as 0 instead (`labels=range(num_classes)`) is `per_class_scores(...)["f1"].mean()`.

    Args:
        y_true: 1-D sequence of int class ids in [0, num_classes).
        y_pred: 1-D sequence of int class ids in [0, num_classes), the same length as `y_true`.
        num_classes: int. Number of classes (checks the range of the ids).

    Returns:
        float in [0, 1].

    Example:
    >>> # Class 0: F1 = 2/3; class 1: F1 = 0.8; class 2 occurs in neither array.
    >>> round(macro_f1([0, 0, 1, 1], [0, 1, 1, 1], num_classes=3), 4)
    0.7333
    """
    return _macro_f1_from_matrix(confusion_matrix(y_true, y_pred, num_classes))


def binary_f1(y_true, y_pred, positive=1):
    """F1 of the positive class of a 0/1 task, as GLUE reports it for MRPC and QQP.

    Equals `sklearn.metrics.f1_score(y_true, y_pred, pos_label=positive, zero_division=0)`: 0 when
    the positive class occurs in neither array.

    Args:
        y_true: 1-D sequence of class ids, each 0 or 1.
        y_pred: 1-D sequence of class ids, each 0 or 1, the same length as `y_true`.
        positive: int, 0 or 1 (default 1). The class whose F1 is returned.

    Returns:
        float in [0, 1].

    Example:
    >>> # tp = 2, fp = 1, fn = 1: F1 = 2 * 2 / (2 * 2 + 1 + 1).
    >>> round(binary_f1([1, 1, 1, 0, 0], [1, 1, 0, 1, 0]), 4)
    0.6667
    """
    if isinstance(positive, bool) or positive not in (0, 1):
        raise ValueError(f"positive must be 0 or 1; received {positive!r}")
    return float(per_class_scores(y_true, y_pred, num_classes=2)["f1"][positive])


def _indicator_matrix(values, name):
    array = np.asarray(values)
    if array.ndim != 2:
        raise ValueError(
            f"{name} must be a 2-D 0/1 matrix of shape (examples, labels); received shape "
            f"{array.shape}"
        )
    if array.size == 0:
        raise ValueError(f"{name} must not be empty; received shape {array.shape}")
    if array.dtype != bool and not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"{name} must hold 0/1 integers or bools; received dtype {array.dtype}")
    if not np.isin(array, (0, 1)).all():
        unexpected = np.setdiff1d(np.unique(array), (0, 1))
        raise ValueError(f"{name} must hold only 0 and 1; received {unexpected.tolist()}")
    return array.astype(bool)


def multi_label_scores(y_true, y_pred):
    """Micro-F1, macro-F1 and exact-match accuracy of multi-label predictions.

    Conventions are scikit-learn's on indicator matrices, with `zero_division=0`: micro-F1 pools
    true/false positives and false negatives over all labels (`f1_score(average="micro")`);
    macro-F1 is the mean F1 over *every* label column (`f1_score(average="macro")`, which on
    indicator matrices uses all columns), a column with no true and no predicted 1 counting as 0;
    exact match is the fraction of examples whose whole label set is right (`accuracy_score`).

    Args:
        y_true: 0/1 (or bool) matrix of shape (examples, labels).
        y_pred: 0/1 (or bool) matrix of the same shape, e.g. `probabilities > 0.5`.

    Returns:
        dict of floats with keys "micro_f1", "macro_f1" and "exact_match".

    Example:
    >>> scores = multi_label_scores([[1, 0], [1, 1]], [[1, 0], [0, 1]])
    >>> {k: round(v, 4) for k, v in scores.items()}
    {'micro_f1': 0.8, 'macro_f1': 0.8333, 'exact_match': 0.5}
    """
    y_true = _indicator_matrix(y_true, "y_true")
    y_pred = _indicator_matrix(y_pred, "y_pred")
    if y_true.shape != y_pred.shape:
        raise ValueError(
            "y_true and y_pred must have the same shape (examples, labels); received "
            f"{y_true.shape} and {y_pred.shape}"
        )
    true_positives = np.sum(y_true & y_pred, axis=0)  # (labels,)
    false_positives = np.sum(~y_true & y_pred, axis=0)  # (labels,)
    false_negatives = np.sum(y_true & ~y_pred, axis=0)  # (labels,)
    per_label_f1 = _safe_divide(
        2 * true_positives, 2 * true_positives + false_positives + false_negatives
    )
    micro = _safe_divide(
        2 * true_positives.sum(),
        2 * true_positives.sum() + false_positives.sum() + false_negatives.sum(),
    )
    return {
        "micro_f1": float(micro),
        "macro_f1": float(np.mean(per_label_f1)),
        "exact_match": float(np.mean(np.all(y_true == y_pred, axis=1))),
    }


def classification_report(y_true, y_pred, label_names):
    """All the single-label scores of one evaluation, as a JSON-serialisable dict.

    Args:
        y_true: 1-D sequence of int class ids in [0, len(label_names)).
        y_pred: 1-D sequence of int class ids in [0, len(label_names)), the same length.
        label_names: sequence of distinct str; `label_names[i]` names class id i.

    Returns:
        dict with plain Python values:
        - "num_examples": int.
        - "accuracy": float.
        - "macro_f1": float, over the classes present in `y_true` or `y_pred` (see `macro_f1`).
        - "per_class": {label name: {"precision", "recall", "f1": float, "support": int}}, every
          class in `label_names` order (0 where undefined).
        - "label_names": list of str, the row/column order of the confusion matrix.
        - "confusion_matrix": list of lists of int, rows = true class, columns = predicted.
        - "binary_f1": float, only when there are exactly 2 classes: F1 of class 1
          (`label_names[1]`), as GLUE reports for MRPC.

    Example:
    >>> report = classification_report([0, 1, 1], [0, 1, 0], ["negative", "positive"])
    >>> round(report["accuracy"], 4), round(report["binary_f1"], 4), report["confusion_matrix"]
    (0.6667, 0.6667, [[1, 0], [1, 1]])
    """
    if isinstance(label_names, str) or not isinstance(label_names, (list, tuple, np.ndarray)):
        raise ValueError(
            f"label_names must be a list of str; received {type(label_names).__name__}"
        )
    label_names = [str(name) if isinstance(name, np.str_) else name for name in label_names]
    if not label_names or not all(isinstance(name, str) for name in label_names):
        raise ValueError(f"label_names must be a non-empty list of str; received {label_names!r}")
    if len(set(label_names)) != len(label_names):
        duplicates = sorted({name for name in label_names if label_names.count(name) > 1})
        raise ValueError(f"label_names must be distinct; received duplicates {duplicates}")
    matrix = confusion_matrix(y_true, y_pred, num_classes=len(label_names))
    scores = _scores_from_matrix(matrix)
    report = {
        "num_examples": int(matrix.sum()),
        "accuracy": float(np.trace(matrix) / matrix.sum()),
        "macro_f1": _macro_f1_from_matrix(matrix),
        "per_class": {
            name: {
                "precision": float(scores["precision"][i]),
                "recall": float(scores["recall"][i]),
                "f1": float(scores["f1"][i]),
                "support": int(scores["support"][i]),
            }
            for i, name in enumerate(label_names)
        },
        "label_names": list(label_names),
        "confusion_matrix": matrix.tolist(),
    }
    if len(label_names) == 2:
        report["binary_f1"] = float(scores["f1"][1])
    return report
