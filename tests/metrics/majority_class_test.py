import numpy as np
import pytest

from kbert.metrics.majority_class import NEAR_MAJORITY, at_majority, majority_accuracy

# 100 test labels, 60 of class 0: always answering 0 scores 0.60.
LABELS = np.array([0] * 60 + [1] * 40)


def _predictions_with_accuracy(correct):
    """Predictions for LABELS with exactly `correct` right answers, using both classes."""
    predictions = 1 - LABELS  # all wrong, both classes present
    predictions[:correct] = LABELS[:correct]
    return predictions


def test_majority_accuracy_is_the_most_frequent_class_share():
    assert majority_accuracy(LABELS) == pytest.approx(0.60)
    assert majority_accuracy([2, 2, 1]) == pytest.approx(2 / 3)


def test_a_run_answering_one_class_is_at_the_majority_whatever_its_accuracy():
    assert at_majority(np.zeros(100, int), LABELS)  # 0.60: the majority itself
    assert at_majority(np.ones(100, int), LABELS)  # 0.40: the minority class only


def test_a_run_within_one_point_of_the_majority_is_at_it_and_one_beyond_is_not():
    assert NEAR_MAJORITY == 0.01
    assert at_majority(_predictions_with_accuracy(50), LABELS)  # below the majority
    assert at_majority(_predictions_with_accuracy(60), LABELS)
    assert at_majority(_predictions_with_accuracy(61), LABELS)  # exactly one point above
    assert not at_majority(_predictions_with_accuracy(62), LABELS)
    assert not at_majority(_predictions_with_accuracy(62), LABELS, tolerance=0.0)
    assert at_majority(_predictions_with_accuracy(62), LABELS, tolerance=0.05)


@pytest.mark.parametrize(
    "predictions, labels, tolerance, message",
    [
        ([], [], 0.01, "predictions must be a non-empty"),
        ([0, 1], [0, 1, 1], 0.01, "one entry per example; received 2 and 3"),
        ([0.5, 1.0], [0, 1], 0.01, "predictions must hold class ids"),
        ([0, 1], [-1, 1], 0.01, "labels must hold class ids"),
        ([0, 1], [0, 1], 1.5, r"tolerance must be in \[0, 1\); received 1.5"),
        ([0, 1], [0, 1], "0.01", "tolerance must be a number"),
    ],
)
def test_bad_input_is_named(predictions, labels, tolerance, message):
    with pytest.raises(ValueError, match=message):
        at_majority(predictions, labels, tolerance=tolerance)
