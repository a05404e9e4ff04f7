import pytest

from kbert.metrics.slice_accuracy import slice_accuracy


def test_an_empty_slice_has_no_accuracy():
    report = slice_accuracy([0, 1], [0, 0], {"none": [False, False], "all": [True, True]})
    assert report["slices"]["none"] == {"examples": 0, "accuracy": None, "gap": None}
    assert report["slices"]["all"]["gap"] == 0.0


def test_mismatched_shapes_are_refused():
    with pytest.raises(ValueError, match="labels and predictions must be"):
        slice_accuracy([0, 1], [0], {})
    with pytest.raises(ValueError, match="slice 'short' must be a bool array of 2"):
        slice_accuracy([0, 1], [0, 1], {"short": [True]})
