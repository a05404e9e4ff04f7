import pytest

from kbert.analysis.worst_slices import worst_slices
from kbert.metrics.slice_accuracy import slice_accuracy


def test_the_worst_slices_are_the_largest_gaps_among_big_enough_slices():
    labels = [0] * 10
    predictions = [0, 0, 0, 0, 0, 0, 1, 1, 1, 1]
    slices = {
        "tail": [False] * 6 + [True] * 4,  # all wrong
        "half": [False] * 4 + [True] * 4 + [False] * 2,  # half wrong
        "tiny": [False] * 9 + [True],  # wrong but one example
        "head": [True] * 6 + [False] * 4,  # all right
    }
    report = slice_accuracy(labels, predictions, slices)
    assert report["overall"] == pytest.approx(0.6)
    assert report["slices"]["half"] == {"examples": 4, "accuracy": 0.5, "gap": pytest.approx(-0.1)}
    assert worst_slices(report, min_examples=2, count=3) == ["tail", "half"]  # no gap >= 0
    assert worst_slices(report, min_examples=1, count=1) == ["tail"]  # tied: by name
    assert worst_slices(report, min_examples=5, count=2) == []


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"report": {"overall": 1.0}}, "report must be slice_accuracy's dict"),
        ({"report": {"slices": {}}, "min_examples": 0}, "min_examples must be an int >= 1"),
        ({"report": {"slices": {}}, "count": 0}, "count must be an int >= 1"),
    ],
)
def test_bad_settings_are_refused(arguments, message):
    with pytest.raises(ValueError, match=message):
        worst_slices(**arguments)
