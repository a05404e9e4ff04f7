import doctest
import itertools

import numpy as np
import pytest

from kbert.analysis import anisotropy
from kbert.analysis.anisotropy import (
    ZScorer,
    cosine_contributions,
    expected_cosine,
    layer_anisotropy,
    random_pairs,
    rogue_dimensions,
    word_in_context_similarity,
)

rng = np.random.default_rng(0)
ISOTROPIC = rng.normal(size=(2000, 64))  # (n, dim)
GROUPS = np.repeat(np.arange(100), 20)  # 100 "sentences" of 20 words


def test_random_pairs_distinct_and_uniform():
    first, second = random_pairs(5, 50000, seed=1)
    assert first.dtype == second.dtype == np.int64 and first.shape == (50000,)
    assert np.all(first != second)
    counts = np.zeros((5, 5))
    np.add.at(counts, (first, second), 1)
    off_diagonal = counts[~np.eye(5, dtype=bool)] / 50000
    np.testing.assert_allclose(off_diagonal, 1 / 20, atol=0.006)  # 20 ordered pairs, ~5 sigma


def test_random_pairs_respect_groups_and_are_uniform_over_cross_group_pairs():
    groups = np.array([7, 7, 7, 3, 9, 9])  # unequal, unsorted group sizes
    first, second = random_pairs(6, 60000, seed=2, groups=groups)
    assert np.all(groups[first] != groups[second])
    allowed = [(i, j) for i, j in itertools.permutations(range(6), 2) if groups[i] != groups[j]]
    counts = {pair: 0 for pair in allowed}
    for pair in zip(first.tolist(), second.tolist(), strict=True):
        counts[pair] += 1  # a KeyError would be a same-group pair
    np.testing.assert_allclose(
        np.array(list(counts.values())) / 60000, 1 / len(allowed), atol=0.005
    )


def test_random_pairs_deterministic_for_a_seed():
    a = random_pairs(100, 300, seed=5, groups=GROUPS[:100])
    b = random_pairs(100, 300, seed=5, groups=GROUPS[:100])
    c = random_pairs(100, 300, seed=6, groups=GROUPS[:100])
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    assert not np.array_equal(a[0], c[0])


def test_isotropic_vectors_have_expected_cosine_near_zero():
    assert abs(expected_cosine(ISOTROPIC)) < 0.01  # std of one cosine is 1/8, over 10000 pairs
    assert abs(expected_cosine(ISOTROPIC, groups=GROUPS)) < 0.01


def test_common_offset_gives_near_one_and_z_scoring_removes_it():
    shifted = ISOTROPIC + 20.0
    assert expected_cosine(shifted) > 0.99
    assert abs(expected_cosine(ZScorer().fit_transform(shifted))) < 0.01


def test_groups_change_what_is_measured():
    # Words of one sentence share a sentence vector (orthogonal across 10 sentences of 200
    # words): a pair from one sentence has cosine 0.9, a pair from two sentences 0.
    groups = np.arange(2000) // 200
    vectors = np.eye(64)[groups] * 24.0 + ISOTROPIC  # cosine 576 / (576 + 64) in a sentence
    assert abs(expected_cosine(vectors, groups=groups)) < 0.01
    assert expected_cosine(vectors) == pytest.approx(0.9 * 199 / 1999, abs=0.01)


def test_contributions_sum_to_expected_cosine():
    vectors = ISOTROPIC + rng.normal(size=64) * 2.0
    pairs = random_pairs(len(vectors), 3000, seed=3, groups=GROUPS)
    contributions = cosine_contributions(vectors, pairs)
    assert contributions.shape == (64,)
    assert contributions.sum() == pytest.approx(
        expected_cosine(vectors, num_pairs=3000, seed=3, groups=GROUPS), abs=1e-12
    )


def test_one_dimension_with_a_huge_mean_is_the_rogue_dimension():
    vectors = ISOTROPIC.copy()
    vectors[:, 17] += 100.0
    rogue = rogue_dimensions(vectors, num_pairs=5000, groups=GROUPS, top_k=3)
    assert rogue["dimensions"][0] == 17 and rogue["dimensions"].shape == (3,)
    assert rogue["share"] == pytest.approx(1.0, abs=0.01)
    assert rogue["contributions"][0] == pytest.approx(rogue["expected_cosine"], rel=0.01)
    assert rogue["expected_cosine"] > 0.99
    # A shifted mean adds no variance: the rogue dimension has its 1/64 of it.
    assert rogue["variance_share"] == pytest.approx(3 / 64, abs=0.01)

    scaled = ISOTROPIC.copy()
    scaled[:, 4] = 30.0 * scaled[:, 4] + 100.0  # a huge mean and a huge variance
    rogue = rogue_dimensions(scaled, top_k=1)
    assert rogue["dimensions"][0] == 4 and rogue["variance_share"] > 0.9


def test_share_is_the_plain_ratio_when_no_contribution_is_negative():
    vectors = np.abs(ISOTROPIC)  # positive orthant: every contribution is positive
    rogue = rogue_dimensions(vectors, top_k=5)
    pairs = random_pairs(len(vectors), 10000)
    contributions = cosine_contributions(vectors, pairs)
    assert np.all(contributions > 0)
    assert rogue["share"] == pytest.approx(np.sort(contributions)[-5:].sum() / contributions.sum())


def test_z_scorer():
    vectors = np.column_stack([rng.normal(3.0, 2.0, 500), np.full(500, 4.0)])
    scorer = ZScorer().fit(vectors)
    z = scorer.transform(vectors)
    np.testing.assert_allclose(z.mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(z.std(axis=0), [1.0, 0.0], atol=1e-12)  # constant: centred only
    assert scorer.std[1] == 1.0
    assert scorer.transform(vectors.astype("float32")).dtype == np.float32
    assert scorer.transform(vectors[None]).shape == (1, 500, 2)  # any leading axes
    np.testing.assert_array_equal(ZScorer().fit_transform(vectors), z)
    with pytest.raises(ValueError, match="call fit"):
        ZScorer().transform(vectors)
    with pytest.raises(ValueError, match="vectors must have 2 dimensions"):
        scorer.transform(np.zeros((3, 5)))


def test_layer_anisotropy():
    layers = np.stack([ISOTROPIC, ISOTROPIC + 20.0, ISOTROPIC], axis=1)  # (n, 3, 64)
    layers[:, 2, 9] *= 50.0
    layers[:, 2, 9] += 200.0  # a rogue dimension: large mean and variance
    rows = layer_anisotropy(layers, groups=GROUPS, num_pairs=4000, top_k=2)
    assert len(rows) == 3
    assert set(rows[0]) == {
        "expected_cosine",
        "expected_cosine_z",
        "rogue_share",
        "rogue_share_z",
        "rogue_dimensions",
    }
    assert abs(rows[0]["expected_cosine"]) < 0.02 and rows[1]["expected_cosine"] > 0.99
    assert rows[2]["expected_cosine"] > 0.5 and rows[2]["rogue_dimensions"][0] == 9
    assert rows[2]["rogue_share"] > 0.95
    for row in rows:
        assert abs(row["expected_cosine_z"]) < 0.02
        assert row["rogue_share_z"] < 0.2  # no dimension dominates after z-scoring
    # The same pairs serve every layer: identical layers give identical numbers.
    assert rows[0]["expected_cosine_z"] == pytest.approx(rows[2]["expected_cosine_z"], abs=1e-12)
    single = expected_cosine(layers[:, 1], num_pairs=4000, groups=GROUPS)
    assert rows[1]["expected_cosine"] == pytest.approx(single, abs=1e-12)


def test_word_in_context_auc_perfect_random_and_counts():
    # Two lemmas, two senses each; senses are far apart directions.
    directions = np.eye(4)[[0, 0, 0, 1, 1, 2, 2, 2, 3, 3]] * 10.0
    vectors = directions + rng.normal(scale=0.1, size=(10, 4))
    lemmas = np.array([0, 0, 0, 0, 0, 1, 1, 1, 1, 1])
    senses = np.array([0, 0, 0, 1, 1, 2, 2, 2, 3, 3])
    result = word_in_context_similarity(vectors, lemmas, senses)
    assert result["auc"] == 1.0
    assert result["pairs_same"] == 2 * (3 + 1) and result["pairs_different"] == 2 * 6
    assert result["same_sense_cosine"] > 0.99 and abs(result["different_sense_cosine"]) < 0.05
    assert result["gap"] == pytest.approx(
        result["same_sense_cosine"] - result["different_sense_cosine"]
    )

    noise = rng.normal(size=(600, 16))
    random_result = word_in_context_similarity(
        noise, np.arange(600) % 20, rng.integers(0, 3, size=600)
    )
    assert random_result["pairs_same"] + random_result["pairs_different"] == 20 * 30 * 29 // 2
    assert random_result["auc"] == pytest.approx(0.5, abs=0.04)


def test_word_in_context_auc_matches_brute_force_with_ties():
    vectors = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    lemmas = [0, 0, 0, 0, 0]
    senses = [0, 0, 1, 1, 0]
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    same, different = [], []
    for i, j in itertools.combinations(range(5), 2):
        (same if senses[i] == senses[j] else different).append(unit[i] @ unit[j])
    expected = np.mean([1.0 if s > d else 0.5 if s == d else 0.0 for s in same for d in different])
    result = word_in_context_similarity(vectors, lemmas, senses)
    assert result["auc"] == pytest.approx(expected)
    assert (result["pairs_same"], result["pairs_different"]) == (len(same), len(different))


def test_word_in_context_samples_max_pairs_without_repeats():
    vectors = rng.normal(size=(300, 8))
    lemmas = np.zeros(300, int)  # 44850 pairs
    result = word_in_context_similarity(vectors, lemmas, np.arange(300) % 2, max_pairs=1000)
    assert result["pairs_same"] + result["pairs_different"] == 1000
    first, second = anisotropy._same_lemma_pairs(lemmas, 44850, np.random.default_rng(0))
    assert np.all(first < second)  # every unordered pair exactly once
    assert len({(int(a), int(b)) for a, b in zip(first, second, strict=True)}) == 44850


def test_word_in_context_missing_kind_gives_nan():
    result = word_in_context_similarity(rng.normal(size=(4, 3)), [0, 0, 1, 1], [5, 5, 6, 6])
    assert result["pairs_different"] == 0 and np.isnan(result["auc"])


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: expected_cosine(np.zeros(5)), "vectors must be a 2-D array"),
        (lambda: expected_cosine(np.zeros((1, 4))), "vectors must hold at least 2 vectors"),
        (lambda: expected_cosine(ISOTROPIC, num_pairs=0), "num_pairs must be an int >= 1"),
        (lambda: expected_cosine(ISOTROPIC, groups=GROUPS[:10]), "groups must be a 1-D array"),
        (lambda: expected_cosine(ISOTROPIC, groups=np.zeros(2000)), "at least 2 distinct ids"),
        (lambda: random_pairs(1, 10), "n must be an int >= 2"),
        (
            lambda: cosine_contributions(ISOTROPIC, (np.array([0]), np.array([1, 2]))),
            "pairs must hold two non-empty 1-D index arrays",
        ),
        (
            lambda: cosine_contributions(ISOTROPIC, (np.array([0]), np.array([2000]))),
            r"pairs must hold indices in \[0, 1999\]",
        ),
        (lambda: rogue_dimensions(ISOTROPIC, top_k=65), "top_k must be at most"),
        (lambda: layer_anisotropy(ISOTROPIC), "layer_vectors must be a 3-D array"),
        (lambda: layer_anisotropy(ISOTROPIC[:, None], num_pairs=-1), "num_pairs must be an int"),
        (
            lambda: word_in_context_similarity(ISOTROPIC, np.zeros(3), np.zeros(2000)),
            "lemma_ids must be a 1-D array with one id per vector",
        ),
        (
            lambda: word_in_context_similarity(ISOTROPIC, np.zeros(2000), np.zeros(5)),
            "sense_ids must be a 1-D array",
        ),
        (
            lambda: word_in_context_similarity(ISOTROPIC, np.arange(2000), np.zeros(2000)),
            "lemma_ids must repeat",
        ),
        (
            lambda: word_in_context_similarity(
                ISOTROPIC, np.zeros(2000), np.zeros(2000), max_pairs=0
            ),
            "max_pairs must be an int >= 1",
        ),
    ],
)
def test_bad_input_raises_value_error_naming_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_docstring_examples_run():
    results = doctest.testmod(anisotropy)
    assert results.attempted > 0 and results.failed == 0
