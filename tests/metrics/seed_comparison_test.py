import math

import pytest

from kbert.metrics.seed_comparison import (
    format_difference,
    mean_sd,
    over_seeds,
    paired_difference,
    seed_summary,
    summarize_arms,
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


def test_over_seeds_averages_each_metric_and_spreads_the_chosen():
    runs = [{"f1": 90.0, "seconds": 10.0}, {"f1": 92.0, "seconds": 14.0}]
    row = over_seeds(runs, ("f1", "seconds"), spread=("f1",), digits=2)
    assert row == {"f1": 91.0, "f1_sd": 1.41, "seconds": 12.0}
    whole = over_seeds(runs, ("f1",))
    assert whole["f1_sd"] == pytest.approx(math.sqrt(2.0))
    assert over_seeds(runs[:1], ("f1",)) == {"f1": 90.0, "f1_sd": None}


@pytest.mark.parametrize(
    "runs, message",
    [
        ([], "empty list"),
        ([{"f1": 1.0}, {"em": 1.0}], r"every run must hold 'f1'; runs \[1\] lack it"),
        ([{"f1": 1.0}, {"f1": float("nan")}], "'f1' over seeds: values must be finite"),
    ],
)
def test_over_seeds_names_bad_runs(runs, message):
    with pytest.raises(ValueError, match=message):
        over_seeds(runs, ("f1",))


def test_seed_summary_is_a_rounded_cell_with_its_runs():
    cell = seed_summary([0.81234, 0.83456])
    assert cell == {"mean": 0.8235, "sd": 0.0157, "runs": [0.81234, 0.83456]}
    assert seed_summary([0.5])["sd"] is None


def test_summarize_arms_pairs_every_arm_with_the_baseline():
    rows = summarize_arms({"alone": [0.80, 0.82, 0.81], "twice": [0.85, 0.88, 0.86]}, "alone")
    assert "vs_alone" not in rows["alone"]
    assert rows["twice"]["vs_alone"]["verdict"] == "better"
    assert rows["twice"]["vs_alone"]["mean"] == pytest.approx(0.0533, abs=1e-4)
    assert rows["twice"]["mean"] == pytest.approx(0.8633, abs=1e-4)
    # without the baseline among the arms there is nothing to pair with
    assert "vs_masked" not in summarize_arms({"nsp": [0.6, 0.62]}, "masked")["nsp"]
