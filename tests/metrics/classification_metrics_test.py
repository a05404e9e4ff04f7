"""Fast tests of the numpy classification scores, against hand-computed values.

scikit-learn is not a kbert dependency; when it is importable the scores are also checked against
it on random data. Either way they are checked against a loop-by-loop reference written from the
definitions (`_reference_scores`).
"""

import json

import numpy as np
import pytest

from kbert.metrics import (
    accuracy,
    binary_f1,
    classification_report,
    confusion_matrix,
    macro_f1,
    multi_label_scores,
    per_class_scores,
)

# 3 classes, 8 examples. Class 0: tp 2, fp 1, fn 1. Class 1: tp 2, fp 1, fn 1. Class 2: tp 1,
# fp 1, fn 1.
Y_TRUE = [0, 0, 0, 1, 1, 1, 2, 2]
Y_PRED = [0, 0, 1, 1, 1, 2, 2, 0]


def _reference_scores(y_true, y_pred, num_classes):
    """Per-class precision/recall/F1 from the definitions, 0 where a denominator is 0."""
    precision, recall, f1 = [], [], []
    for c in range(num_classes):
        tp = sum(1 for t, p in zip(y_true, y_pred, strict=True) if t == c and p == c)
        predicted = sum(1 for p in y_pred if p == c)
        actual = sum(1 for t in y_true if t == c)
        p_c = tp / predicted if predicted else 0.0
        r_c = tp / actual if actual else 0.0
        precision.append(p_c)
        recall.append(r_c)
        f1.append(2 * p_c * r_c / (p_c + r_c) if p_c + r_c else 0.0)
    return precision, recall, f1


def test_accuracy_counts_matches():
    assert accuracy(Y_TRUE, Y_PRED) == pytest.approx(5 / 8)
    assert accuracy(np.array([3, 3]), np.array([3, 3])) == 1.0
    assert accuracy([1], [0]) == 0.0


def test_confusion_matrix_rows_are_true_columns_predicted():
    matrix = confusion_matrix(Y_TRUE, Y_PRED, num_classes=3)
    assert matrix.dtype == np.int64 and matrix.shape == (3, 3)
    assert matrix.tolist() == [[2, 1, 0], [0, 2, 1], [1, 0, 1]]
    # An unused class still gets its row and column.
    assert confusion_matrix([0, 1], [1, 1], num_classes=4).tolist() == [
        [0, 1, 0, 0],
        [0, 1, 0, 0],
        [0, 0, 0, 0],
        [0, 0, 0, 0],
    ]


def test_per_class_scores_by_hand():
    scores = per_class_scores(Y_TRUE, Y_PRED, num_classes=3)
    np.testing.assert_allclose(scores["precision"], [2 / 3, 2 / 3, 1 / 2])
    np.testing.assert_allclose(scores["recall"], [2 / 3, 2 / 3, 1 / 2])
    np.testing.assert_allclose(scores["f1"], [2 / 3, 2 / 3, 1 / 2])
    assert scores["support"].tolist() == [3, 3, 2]
    assert scores["support"].dtype == np.int64


def test_a_class_never_predicted_scores_zero_not_nan():
    # Class 2 is in y_true but never predicted: precision 0/0 -> 0, recall 0, F1 0.
    scores = per_class_scores([0, 1, 2, 2], [0, 1, 0, 1], num_classes=3)
    assert scores["precision"].tolist() == [0.5, 0.5, 0.0]
    assert scores["recall"].tolist() == [1.0, 1.0, 0.0]
    np.testing.assert_allclose(scores["f1"], [2 / 3, 2 / 3, 0.0])
    assert not np.isnan(scores["f1"]).any()
    # It is present in y_true, so macro-F1 averages its 0 in.
    assert macro_f1([0, 1, 2, 2], [0, 1, 0, 1], num_classes=3) == pytest.approx(4 / 9)


def test_macro_f1_averages_over_classes_present_in_either_array():
    # Classes 0 and 1 occur; 2 and 3 occur in neither and are left out (sklearn's default).
    y_true, y_pred = [0, 0, 1, 1], [0, 1, 1, 1]
    assert macro_f1(y_true, y_pred, num_classes=4) == pytest.approx((2 / 3 + 0.8) / 2)
    # A class only predicted (never true) is present: its F1 of 0 counts.
    assert macro_f1([0, 0], [0, 1], num_classes=2) == pytest.approx((2 / 3 + 0.0) / 2)
    # The labels=range(num_classes) variant averages the absent classes in as 0.
    all_classes = per_class_scores(y_true, y_pred, num_classes=4)["f1"].mean()
    assert all_classes == pytest.approx((2 / 3 + 0.8) / 4)


def test_one_class_only():
    assert accuracy([2, 2, 2], [2, 2, 2]) == 1.0
    assert macro_f1([2, 2, 2], [2, 2, 2], num_classes=3) == 1.0
    scores = per_class_scores([0, 0, 0], [0, 0, 0], num_classes=1)
    assert scores["f1"].tolist() == [1.0] and scores["support"].tolist() == [3]
    assert confusion_matrix([0, 0, 0], [0, 0, 0], num_classes=1).tolist() == [[3]]


def test_binary_f1_is_the_positive_class_f1():
    y_true, y_pred = [1, 1, 1, 0, 0, 0, 0], [1, 1, 0, 1, 0, 0, 0]
    # Positive 1: tp 2, fp 1, fn 1. Positive 0: tp 3, fp 1, fn 1.
    assert binary_f1(y_true, y_pred) == pytest.approx(2 * 2 / (2 * 2 + 1 + 1))
    assert binary_f1(y_true, y_pred, positive=0) == pytest.approx(2 * 3 / (2 * 3 + 1 + 1))
    # No positive anywhere: 0 (zero_division=0), not NaN.
    assert binary_f1([0, 0], [0, 0]) == 0.0
    assert binary_f1([1, 1], [1, 1]) == 1.0


def test_multi_label_scores_by_hand():
    y_true = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 0], [0, 0, 0]])
    y_pred = np.array([[1, 0, 0], [0, 1, 0], [1, 0, 1], [0, 0, 0]])
    scores = multi_label_scores(y_true, y_pred)
    # Label 0: tp 2 -> F1 1. Label 1: tp 1, fn 1 -> 2/3. Label 2: fp 1, fn 1 -> 0.
    assert scores["macro_f1"] == pytest.approx((1 + 2 / 3 + 0) / 3)
    # Pooled: tp 3, fp 1, fn 2 -> 6 / 9.
    assert scores["micro_f1"] == pytest.approx(6 / 9)
    assert scores["exact_match"] == pytest.approx(2 / 4)
    assert set(scores) == {"micro_f1", "macro_f1", "exact_match"}
    # A label column with no true and no predicted 1 counts as 0 in the macro average (sklearn).
    scores = multi_label_scores([[1, 0], [0, 0]], [[True, False], [False, False]])
    assert scores == {"micro_f1": 1.0, "macro_f1": 0.5, "exact_match": 1.0}


def test_classification_report_is_json_ready_and_consistent():
    names = ["cat", "dog", "bird"]
    report = classification_report(Y_TRUE, Y_PRED, names)
    assert json.loads(json.dumps(report)) == report
    assert report["num_examples"] == 8
    assert report["accuracy"] == pytest.approx(5 / 8)
    assert report["macro_f1"] == pytest.approx(macro_f1(Y_TRUE, Y_PRED, 3))
    assert list(report["per_class"]) == names
    assert report["per_class"]["bird"] == {"precision": 0.5, "recall": 0.5, "f1": 0.5, "support": 2}
    assert report["label_names"] == names
    assert report["confusion_matrix"] == [[2, 1, 0], [0, 2, 1], [1, 0, 1]]
    assert "binary_f1" not in report


def test_classification_report_adds_binary_f1_for_two_classes():
    report = classification_report(
        np.array([0, 1, 1]), np.array([0, 1, 0]), ["not_equivalent", "equivalent"]
    )
    assert report["binary_f1"] == pytest.approx(binary_f1([0, 1, 1], [0, 1, 0]))
    assert report["per_class"]["not_equivalent"]["precision"] == 0.5
    assert json.loads(json.dumps(report)) == report
    assert all(type(v["support"]) is int for v in report["per_class"].values())


def test_agrees_with_the_definitions_on_random_data():
    rng = np.random.default_rng(0)
    for num_classes, size in ((2, 50), (5, 200), (12, 30)):
        y_true = rng.integers(0, num_classes, size)
        # Mostly right, so every score is exercised; some classes may be missing entirely.
        y_pred = np.where(rng.random(size) < 0.6, y_true, rng.integers(0, num_classes, size))
        precision, recall, f1 = _reference_scores(y_true, y_pred, num_classes)
        scores = per_class_scores(y_true, y_pred, num_classes)
        np.testing.assert_allclose(scores["precision"], precision)
        np.testing.assert_allclose(scores["recall"], recall)
        np.testing.assert_allclose(scores["f1"], f1)
        present = sorted(set(y_true.tolist()) | set(y_pred.tolist()))
        assert macro_f1(y_true, y_pred, num_classes) == pytest.approx(
            np.mean([f1[c] for c in present])
        )


def test_agrees_with_scikit_learn_on_random_data():
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(1)
    for num_classes, size in ((2, 40), (6, 300), (20, 25)):
        y_true = rng.integers(0, num_classes, size)
        y_pred = np.where(rng.random(size) < 0.5, y_true, rng.integers(0, num_classes, size))
        labels = list(range(num_classes))
        assert accuracy(y_true, y_pred) == pytest.approx(
            sklearn_metrics.accuracy_score(y_true, y_pred)
        )
        np.testing.assert_array_equal(
            confusion_matrix(y_true, y_pred, num_classes),
            sklearn_metrics.confusion_matrix(y_true, y_pred, labels=labels),
        )
        precision, recall, f1, support = sklearn_metrics.precision_recall_fscore_support(
            y_true, y_pred, labels=labels, zero_division=0
        )
        scores = per_class_scores(y_true, y_pred, num_classes)
        np.testing.assert_allclose(scores["precision"], precision)
        np.testing.assert_allclose(scores["recall"], recall)
        np.testing.assert_allclose(scores["f1"], f1)
        np.testing.assert_array_equal(scores["support"], support)
        assert macro_f1(y_true, y_pred, num_classes) == pytest.approx(
            sklearn_metrics.f1_score(y_true, y_pred, average="macro", zero_division=0)
        )
        if num_classes == 2:
            assert binary_f1(y_true, y_pred) == pytest.approx(
                sklearn_metrics.f1_score(y_true, y_pred, zero_division=0)
            )
    y_true = rng.integers(0, 2, (40, 7))
    y_pred = np.where(rng.random((40, 7)) < 0.7, y_true, 1 - y_true)
    y_pred[:, 6] = y_true[:, 6] = 0  # a label never used
    scores = multi_label_scores(y_true, y_pred)
    for average in ("micro", "macro"):
        assert scores[f"{average}_f1"] == pytest.approx(
            sklearn_metrics.f1_score(y_true, y_pred, average=average, zero_division=0)
        )
    assert scores["exact_match"] == pytest.approx(sklearn_metrics.accuracy_score(y_true, y_pred))


def test_errors_name_the_argument():
    with pytest.raises(
        ValueError, match=r"same length; received len\(y_true\)=3 and len\(y_pred\)=2"
    ):
        accuracy([0, 1, 1], [0, 1])
    with pytest.raises(ValueError, match="y_true must not be empty"):
        accuracy([], [])
    with pytest.raises(ValueError, match="y_pred must not be empty"):
        confusion_matrix([0], [], num_classes=2)
    with pytest.raises(ValueError, match=r"y_pred must hold class ids in \[0, 2\] .*received 3"):
        confusion_matrix([0, 1], [0, 3], num_classes=3)
    with pytest.raises(ValueError, match="y_true must hold class ids >= 0; received -1"):
        macro_f1([-1, 0], [0, 0], num_classes=2)
    with pytest.raises(ValueError, match="y_true must hold integer class ids; received dtype f"):
        accuracy([0.0, 1.0], [0, 1])
    with pytest.raises(ValueError, match=r"y_pred must be a 1-D sequence .* shape \(2, 2\)"):
        accuracy([0, 1], [[0, 1], [1, 0]])
    with pytest.raises(ValueError, match="num_classes must be a positive int; received 0"):
        per_class_scores([0], [0], num_classes=0)
    with pytest.raises(ValueError, match=r"y_true must hold class ids in \[0, 1\]"):
        binary_f1([0, 2], [0, 1])
    with pytest.raises(ValueError, match="positive must be 0 or 1; received 2"):
        binary_f1([0, 1], [0, 1], positive=2)
    with pytest.raises(ValueError, match=r"y_pred must hold only 0 and 1; received \[2\]"):
        multi_label_scores([[0, 1]], [[0, 2]])
    with pytest.raises(ValueError, match=r"y_true must be a 2-D 0/1 matrix .* shape \(3,\)"):
        multi_label_scores([0, 1, 1], [[0, 1]])
    with pytest.raises(ValueError, match=r"same shape .* received \(1, 2\) and \(1, 3\)"):
        multi_label_scores([[0, 1]], [[0, 1, 0]])
    with pytest.raises(ValueError, match=r"y_true must hold class ids in \[0, 1\] \(num_classes=2"):
        classification_report([0, 2], [0, 1], ["a", "b"])
    with pytest.raises(ValueError, match="label_names must be distinct; received duplicates"):
        classification_report([0, 1], [0, 1], ["a", "a"])
    with pytest.raises(ValueError, match="label_names must be a list of str; received str"):
        classification_report([0, 1], [0, 1], "ab")
