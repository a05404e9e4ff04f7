import math

import pytest

from kbert.metrics.seed_comparison import (
    format_difference,
    mean_sd,
    paired_difference,
    verdict,
)


def test_paired_difference_pairs_seed_by_seed():
    # The methods differ little in the mean over seeds (0.920 vs 0.903) yet the same way on
    # every seed: the paired sd is small, so the difference is real.
    difference = paired_difference([0.93, 0.92, 0.91], [0.91, 0.90, 0.90])
    assert difference["mean"] == pytest.approx(0.0166667, abs=1e-6)
    assert difference["sd"] == pytest.approx(0.0057735, abs=1e-6)
    assert difference["n"] == 3
    assert difference["verdict"] == "better"


def test_a_difference_inside_its_spread_is_no_difference():
    assert paired_difference([0.95, 0.90, 0.93], [0.92, 0.92, 0.92])["verdict"] == "no difference"
    assert paired_difference([0.80, 0.81], [0.90, 0.92])["verdict"] == "worse"
    # One seed: no spread to compare with.
    assert paired_difference([0.99], [0.50]) == {
        "mean": pytest.approx(0.49),
        "sd": None,
        "n": 1,
        "verdict": "no difference",
    }


def test_verdict_boundary_is_inside():
    assert verdict(0.01, 0.01) == "no difference"
    assert verdict(0.0101, 0.01) == "better"
    assert verdict(-0.0101, 0.01) == "worse"


def test_mean_sd():
    assert mean_sd([1.0, 3.0]) == (2.0, pytest.approx(math.sqrt(2)))
    assert mean_sd([0.5]) == (0.5, None)


@pytest.mark.parametrize(
    ("values", "baseline", "message"),
    [
        ([], [], "values must hold at least one number"),
        ([0.5, 0.6], [0.5], "pair seed by seed; received 2 and 1"),
        ([0.5, float("nan")], [0.5, 0.5], "values must be finite numbers"),
        ([0.5], ["0.5"], "baseline must be finite numbers"),
    ],
)
def test_bad_input_is_named(values, baseline, message):
    with pytest.raises(ValueError, match=message):
        paired_difference(values, baseline)


def test_format_difference_in_points():
    assert format_difference({"mean": 0.012, "sd": 0.004, "n": 3, "verdict": "better"}) == (
        "+1.20 ± 0.40 (better)"
    )
    assert format_difference(None) == "–"
    assert format_difference({"mean": -0.01, "sd": None, "n": 1, "verdict": "no difference"}) == (
        "-1.00 (no difference)"
    )
