import doctest
import math

import numpy as np
import pytest

from kbert.analysis import association_tests
from kbert.analysis.association_tests import (
    against_draws,
    association_scores,
    association_test,
    effect_size,
    effect_size_from_scores,
    mean_gap_p_value,
    permutation_p_value,
)

# A toy case worked by hand: unit vectors in the plane, A = the x axis, B = the y axis, so
# s(w, A, B) = w_1 - w_2: X scores 1 and -0.2, Y scores -1 and 0.2.
X = [[1.0, 0.0], [0.6, 0.8]]
Y = [[0.0, 1.0], [0.8, 0.6]]
A, B = [[1.0, 0.0]], [[0.0, 1.0]]


def test_the_toy_case_matches_the_hand_computation():
    np.testing.assert_allclose(association_scores(X + Y, A, B), [1.0, -0.2, -1.0, 0.2])
    # mean_X - mean_Y = 0.4 - (-0.4); sample sd of (1, -0.2, -1, 0.2) = sqrt(2.08 / 3).
    assert effect_size(X, Y, A, B) == pytest.approx(0.8 / math.sqrt(2.08 / 3))
    result = association_test((X, Y), (A, B))
    # The 6 ways to pick X_i from 4 scores sum to 0.8 (observed), 0, 1.2, -1.2, 0, -0.8: only
    # 1.2 is larger.
    assert result["p_value"] == pytest.approx(1 / 6)
    assert result["exact"] is True and result["partitions"] == 6
    assert result["statistic"] == pytest.approx(1.6)
    assert result["mean_x"] == pytest.approx(0.4) and result["mean_y"] == pytest.approx(-0.4)


def test_swapping_the_targets_or_the_attributes_flips_the_sign():
    d = effect_size(X, Y, A, B)
    assert effect_size(Y, X, A, B) == pytest.approx(-d)
    assert effect_size(X, Y, B, A) == pytest.approx(-d)
    # Swapped targets: the partitions larger than -0.8 are 0.8, 0, 1.2 and 0.
    assert association_test((Y, X), (A, B))["p_value"] == pytest.approx(4 / 6)


def test_the_effect_size_reads_directions_only():
    rng = np.random.default_rng(0)
    x, y, a, b = (rng.normal(size=(5, 8)) for _ in range(4))
    scaled = effect_size(3.0 * x, 0.5 * y, 7.0 * a, b)
    assert scaled == pytest.approx(effect_size(x, y, a, b))


def test_a_sampled_p_value_agrees_with_the_exact_one():
    rng = np.random.default_rng(1)
    scores_x, scores_y = rng.normal(0.3, 1.0, size=8), rng.normal(size=8)  # 12,870 partitions
    exact = permutation_p_value(scores_x, scores_y, permutations=20_000)
    sampled = permutation_p_value(scores_x, scores_y, permutations=4_000, seed=3)
    assert exact["exact"] is True and exact["partitions"] == math.comb(16, 8)
    assert sampled["exact"] is False and sampled["partitions"] == 4_000
    # Binomial sd of a share near 0.3 over 4,000 draws is about 0.007: 4 sd.
    assert abs(sampled["p_value"] - exact["p_value"]) < 0.03
    again = permutation_p_value(scores_x, scores_y, permutations=4_000, seed=3)
    assert again == sampled


def test_a_sampled_p_value_is_never_zero():
    result = permutation_p_value(np.full(50, 1.0) + np.arange(50) * 1e-3, -np.ones(50), 999)
    assert result["exact"] is False and result["p_value"] == pytest.approx(1 / 1000)


def test_no_association_gives_uniform_p_values():
    rng = np.random.default_rng(2)
    p_values = [
        permutation_p_value(rng.normal(size=10), rng.normal(size=10), 500, seed=k)["p_value"]
        for k in range(200)
    ]
    # Under the null the p-values are uniform: their mean is 0.5 (sd of the mean ~0.02).
    assert abs(np.mean(p_values) - 0.5) < 0.08


def test_bad_inputs_are_named():
    with pytest.raises(ValueError, match="a holds a zero vector"):
        association_scores(X, [[0.0, 0.0]], B)
    with pytest.raises(ValueError, match="same width"):
        association_scores(X, [[1.0, 0.0, 0.0]], B)
    with pytest.raises(ValueError, match="vectors must be a 2-D array"):
        association_scores([1.0, 2.0], A, B)
    with pytest.raises(ValueError, match="permutations must be an int >= 1; received 0"):
        permutation_p_value([1.0], [2.0], permutations=0)
    with pytest.raises(ValueError, match="non-empty 1-D"):
        permutation_p_value([], [2.0])
    with pytest.raises(ValueError, match="y must be a 2-D array"):
        effect_size(X, np.zeros((0, 2)), A, B)
    with pytest.raises(ValueError, match="at least one score per target set"):
        effect_size_from_scores([1.0, 2.0], [])


def test_the_sets_come_in_pairs():
    with pytest.raises(ValueError, match="must be pairs"):
        association_test((X,), (A, B))


def test_equal_scores_have_no_effect_size():
    assert math.isnan(effect_size([[1.0, 0.0]], [[2.0, 0.0]], A, B))


def test_doctests():
    assert doctest.testmod(association_tests).failed == 0


def test_a_mean_gap_is_tested_two_sided_against_re_splits_of_the_same_items():
    high, low = [0.9, 0.91, 0.92, 0.93], [0.1, 0.11, 0.12]
    # No re-split of these 7 items into 4 and 3 gives a larger gap, either way round.
    assert mean_gap_p_value(high, low) == mean_gap_p_value(low, high) == 0.0
    # Scores that do not follow the groups: most splits give such a gap.
    assert mean_gap_p_value([0.9, 0.1, 0.5], [0.8, 0.2, 0.5]) > 0.5
    # Sampled re-splits (more partitions than `permutations`): one-sided p is at least 1/(1+n).
    rng = np.random.default_rng(0)
    first, second = rng.normal(1.0, 0.1, 12), rng.normal(0.0, 0.1, 12)
    assert mean_gap_p_value(first, second, permutations=200, seed=0) == pytest.approx(2 / 201)


def test_an_effect_size_is_read_against_the_random_draws_spread():
    assert against_draws(0.5, 0.2, 0.1) == {
        "difference": 0.3,
        "control_sd": 0.1,
        "verdict": "better",
    }
    assert against_draws(0.5, 0.0, 0.5)["verdict"] == "no difference"  # inside the sd
    assert against_draws(-0.5, 0.2, 0.1)["verdict"] == "worse"
    assert against_draws(0.5, 0.1, None)["verdict"] == "no difference"  # one draw: no spread
