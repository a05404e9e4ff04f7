"""Association tests on vectors: WEAT/SEAT's effect size and its permutation test.

Caliskan et al. (Science 2017) measure how much more two target sets X and Y (European and
African American names, say) are associated with attribute set A than with B (pleasant and
unpleasant words) in an embedding. For one vector w,

    s(w, A, B) = mean_{a in A} cos(w, a) - mean_{b in B} cos(w, b)

and the effect size is Cohen's d of s between the targets, with the sample sd over X ∪ Y:

    d = (mean_{x in X} s(x, A, B) - mean_{y in Y} s(y, A, B)) / sd_{w in X ∪ Y} s(w, A, B)

d > 0: X goes with A and Y with B. The test statistic s(X, Y, A, B) = sum_X s(x) - sum_Y s(y) is
compared with its value over the re-partitions (X_i, Y_i) of X ∪ Y into sets of the same sizes:
the one-sided p-value is the share of partitions with a larger statistic. May et al. (NAACL
2019) apply the same test to sentence vectors (SEAT). File reading: `kbert.data.seat`.

Example:
>>> x, y = [[1.0, 0.0], [0.9, 0.1]], [[0.0, 1.0], [0.1, 0.9]]
>>> a, b = [[1.0, 0.0]], [[0.0, 1.0]]
>>> result = association_test((x, y), (a, b))
>>> round(result["effect_size"], 3), result["p_value"], result["exact"]
(1.729, 0.0, True)
"""

import itertools
import math

import numpy as np

from kbert.checks import check_int
from kbert.metrics.seed_comparison import verdict

_CHUNK = 4096  # partitions scored per array (bounds memory with a few thousand targets)


def _unit_rows(vectors, name):
    array = np.asarray(vectors, dtype=np.float64)
    if array.ndim != 2 or array.shape[0] == 0 or array.shape[1] == 0:
        raise ValueError(
            f"{name} must be a 2-D array (vectors, dim) with at least one vector; received shape "
            f"{array.shape}"
        )
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must hold finite numbers")
    norms = np.linalg.norm(array, axis=1, keepdims=True)  # (vectors, 1)
    if np.any(norms == 0):
        raise ValueError(f"{name} holds a zero vector: its cosine is undefined")
    return array / norms


def association_scores(vectors, a, b, name="vectors"):
    """s(w, A, B) for each row w of `vectors`: mean cosine with A minus mean cosine with B.

    Args:
        vectors: float array `(n, dim)`.
        a: float array `(n_a, dim)`, attribute set A.
        b: float array `(n_b, dim)`, attribute set B.
        name: str, default "vectors". What errors call `vectors` ("x", "y").

    Returns:
        float64 array `(n,)`.

    Raises:
        ValueError: an array that is not 2-D and non-empty, holds a zero or non-finite vector,
            or whose width differs from the others'.
    """
    w, a, b = _unit_rows(vectors, name), _unit_rows(a, "a"), _unit_rows(b, "b")
    if not w.shape[1] == a.shape[1] == b.shape[1]:
        raise ValueError(
            f"{name}, a and b must have the same width; received {w.shape[1]}, {a.shape[1]}, "
            f"{b.shape[1]}"
        )
    return (w @ a.T).mean(axis=1) - (w @ b.T).mean(axis=1)  # (n,)


def effect_size_from_scores(scores_x, scores_y):
    """Cohen's d of the association scores: mean over X minus mean over Y, over the sample sd
    of X ∪ Y (Caliskan et al. 2017). NaN when all scores are equal (no spread to scale by)."""
    scores_x, scores_y = np.asarray(scores_x, np.float64), np.asarray(scores_y, np.float64)
    if scores_x.size + scores_y.size < 2 or min(scores_x.size, scores_y.size) == 0:
        raise ValueError(
            "an effect size needs at least one score per target set and two in all; received "
            f"{scores_x.size} and {scores_y.size}"
        )
    spread = np.std(np.concatenate([scores_x, scores_y]), ddof=1)
    if spread == 0:
        return math.nan
    return float((scores_x.mean() - scores_y.mean()) / spread)


def effect_size(x, y, a, b):
    """WEAT/SEAT effect size d of targets `x` vs `y` on attributes `a` vs `b` (arrays of rows)."""
    return effect_size_from_scores(
        association_scores(x, a, b, "x"), association_scores(y, a, b, "y")
    )


def _partition_sums(scores, size, permutations, rng):
    """Sums of `scores` over the subsets of `size` that stand for X_i: all, or a random sample."""
    total = math.comb(len(scores), size)
    if total <= permutations:
        for chunk in _batched(itertools.combinations(range(len(scores)), size), _CHUNK):
            yield scores[np.array(chunk, dtype=np.int64)].sum(axis=1)  # (chunk,)
        return
    left = permutations
    while left:
        count = min(left, _CHUNK)
        keys = rng.random((count, len(scores)))  # a uniform random subset: the `size` smallest
        chosen = np.argpartition(keys, size - 1, axis=1)[:, :size]  # (count, size)
        yield scores[chosen].sum(axis=1)
        left -= count


def _batched(iterable, size):
    iterator = iter(iterable)
    while chunk := list(itertools.islice(iterator, size)):
        yield chunk


def permutation_p_value(scores_x, scores_y, permutations=10_000, seed=0):
    """One-sided permutation p-value of s(X, Y, A, B) = sum_X s - sum_Y s.

    Every partition of X ∪ Y into sets of X's and Y's sizes has the statistic
    `2 * sum_{X_i} s - sum_{X ∪ Y} s`, so the partitions are ranked by `sum_{X_i} s`. When there
    are at most `permutations` partitions all are scored (exact, Caliskan et al.'s definition:
    the share of partitions, the observed one among them, whose statistic is larger). Otherwise
    `permutations` random partitions are drawn with `seed` and the p-value is
    `(1 + larger) / (1 + permutations)` (the observed partition counted as one draw, so a
    sampled p-value is never 0; Phipson & Smyth 2010).

    Args:
        scores_x: float array `(n_x,)`, s(x, A, B) for each target of X.
        scores_y: float array `(n_y,)`.
        permutations: int >= 1, default 10,000. The most partitions scored.
        seed: int >= 0, default 0. Draws the sampled partitions.

    Returns:
        dict: `p_value`, `exact` (bool), `partitions` (how many were scored), `statistic`.
    """
    permutations = check_int("permutations", permutations, minimum=1)
    seed = check_int("seed", seed, minimum=0)
    scores_x, scores_y = np.asarray(scores_x, np.float64), np.asarray(scores_y, np.float64)
    if scores_x.ndim != 1 or scores_y.ndim != 1 or not scores_x.size or not scores_y.size:
        raise ValueError(
            f"scores_x and scores_y must be non-empty 1-D arrays; received shapes "
            f"{scores_x.shape} and {scores_y.shape}"
        )
    scores = np.concatenate([scores_x, scores_y])
    observed = scores_x.sum()
    # Sums of the same numbers in another order differ in the last bits: a partition counts as
    # larger only beyond that rounding, so the observed one never counts against itself.
    tolerance = 1e-9 * (np.abs(scores).sum() + 1.0)
    exact = math.comb(len(scores), len(scores_x)) <= permutations
    larger = scored = 0
    rng = np.random.default_rng(seed)
    for sums in _partition_sums(scores, len(scores_x), permutations, rng):
        larger += int(np.sum(sums > observed + tolerance))
        scored += len(sums)
    p_value = larger / scored if exact else (1 + larger) / (1 + scored)
    return {
        "p_value": float(p_value),
        "exact": exact,
        "partitions": scored,
        "statistic": float(observed - scores_y.sum()),
    }


def association_test(targets, attributes, permutations=10_000, seed=0):
    """The WEAT/SEAT test on vectors: effect size, p-value, and the mean association per target.

    Args:
        targets: pair `(x, y)` of float arrays `(n_x, dim)`, `(n_y, dim)`: X's and Y's vectors.
        attributes: pair `(a, b)` of float arrays `(n_a, dim)`, `(n_b, dim)`: A's and B's.
        permutations: int >= 1, default 10,000. See `permutation_p_value`.
        seed: int >= 0, default 0.

    Returns:
        dict: `effect_size` (Cohen's d; > 0 when X goes with A), `p_value`, `exact`,
        `partitions`, `statistic`, and `mean_x` and `mean_y` (mean s(w, A, B) of each target).
    """
    if len(targets) != 2 or len(attributes) != 2:
        raise ValueError(
            f"targets and attributes must be pairs (x, y) and (a, b); received "
            f"{len(targets)} and {len(attributes)} arrays"
        )
    (x, y), (a, b) = targets, attributes
    scores_x, scores_y = association_scores(x, a, b, "x"), association_scores(y, a, b, "y")
    return {
        "effect_size": effect_size_from_scores(scores_x, scores_y),
        **permutation_p_value(scores_x, scores_y, permutations, seed),
        "mean_x": float(scores_x.mean()),
        "mean_y": float(scores_y.mean()),
    }


def mean_gap_p_value(first, second, permutations=10_000, seed=0):
    """Two-sided permutation p-value of mean(first) − mean(second): twice the smaller of the two
    one-sided p-values (`permutation_p_value` each way; exact when the re-partitions of
    first ∪ second into groups of the same sizes number at most `permutations`), at most 1.
    For group gaps such as a classifier's mean score on names of one group minus another's:
    any two lists give some gap, and this says how often a split of the same items does too.

        >>> mean_gap_p_value([0.9, 0.8, 0.85], [0.1, 0.2, 0.15])  # no split's gap is larger
        0.0
        >>> mean_gap_p_value([0.9, 0.1, 0.5], [0.8, 0.2, 0.5])  # splits give such gaps often
        0.8
    """
    upper = permutation_p_value(first, second, permutations, seed)["p_value"]
    lower = permutation_p_value(second, first, permutations, seed)["p_value"]
    return min(1.0, 2 * min(upper, lower))


def against_draws(value, draws_mean, draws_sd):
    """`value` (an effect size on trained vectors) minus the mean over random draws (vectors of
    an untrained encoder of the same shape), with its verdict against the draws' sd: "better"
    (above), "worse" (below) or "no difference" (inside it, or with one draw and no sd).

        >>> against_draws(0.5, 0.2, 0.1)["verdict"]
        'better'
    """
    difference = value - draws_mean
    return {
        "difference": round(difference, 5),
        "control_sd": None if draws_sd is None else round(draws_sd, 5),
        "verdict": verdict(difference, draws_sd),
    }
