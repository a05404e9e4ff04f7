"""Tests of PCA and the numpy t-SNE: known axes, kept neighbourhoods, checked inputs."""

import doctest

import numpy as np
import pytest

from kbert.analysis import projection
from kbert.analysis.projection import MAX_TSNE_POINTS, pca_2d, tsne_2d


def test_pca_finds_known_principal_axes():
    rng = np.random.default_rng(0)
    # Independent coordinates with standard deviations 5, 2, 0.1, rotated into 3-D and shifted.
    latent = rng.normal(size=(500, 3)) * np.array([5.0, 2.0, 0.1])
    latent -= latent.mean(0)
    rotation, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    vectors = latent @ rotation.T + np.array([10.0, -3.0, 7.0])
    points, ratio = pca_2d(vectors)
    assert points.shape == (500, 2) and ratio.shape == (2,)
    # The coordinates are the first two latent ones, up to sign (and a little leakage).
    for k in range(2):
        assert abs(np.corrcoef(points[:, k], latent[:, k])[0, 1]) > 0.999
    # The ratios are the top eigenvalues of the sample covariance over their sum; close to the
    # design's 25 : 4 : 0.01 (the sample's latent coordinates are only nearly uncorrelated).
    eigenvalues = np.linalg.eigvalsh(np.cov(vectors.T))[::-1]
    np.testing.assert_allclose(ratio, eigenvalues[:2] / eigenvalues.sum(), rtol=1e-9)
    np.testing.assert_allclose(ratio, np.array([25.0, 4.0]) / 29.01, atol=0.02)
    np.testing.assert_allclose(points.mean(0), 0.0, atol=1e-9)
    # Signs are fixed: the result does not depend on the input's sign or order of features.
    np.testing.assert_allclose(pca_2d(-vectors[:, ::-1])[0], points, atol=1e-9)


def test_pca_edge_cases_and_errors():
    points, ratio = pca_2d([[1.0], [2.0], [4.0]])  # one feature: the second axis is empty
    np.testing.assert_allclose(ratio, [1.0, 0.0])
    np.testing.assert_allclose(points[:, 1], 0.0)
    points, ratio = pca_2d([[0.0, 0.0], [1.0, 1.0]])  # two points: one direction
    np.testing.assert_allclose(ratio, [1.0, 0.0], atol=1e-12)
    with pytest.raises(ValueError, match=r"vectors must be a 2-D array .* received shape \(5,\)"):
        pca_2d(np.ones(5))
    with pytest.raises(ValueError, match="vectors must have at least 2 points .* received 1"):
        pca_2d(np.ones((1, 4)))
    with pytest.raises(ValueError, match="vectors must be finite"):
        pca_2d([[0.0, np.nan], [1.0, 2.0]])
    with pytest.raises(ValueError, match="vectors must not all be the same point"):
        pca_2d(np.ones((4, 3)))


def _clusters(points_per_cluster=30, dim=20, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(3, dim)) * 10.0
    vectors = np.concatenate([c + rng.normal(size=(points_per_cluster, dim)) for c in centres])
    return vectors, np.repeat(np.arange(3), points_per_cluster)


def _neighbour_purity(points, labels, k=5):
    distances = np.sum((points[:, None] - points[None]) ** 2, axis=-1)
    np.fill_diagonal(distances, np.inf)
    neighbours = np.argsort(distances, axis=1)[:, :k]  # (n, k)
    return float(np.mean(labels[neighbours] == labels[:, None]))


def test_tsne_keeps_clusters_apart_and_is_deterministic():
    vectors, labels = _clusters()
    points = tsne_2d(vectors, perplexity=10.0, steps=400)
    assert points.shape == (90, 2) and points.dtype == np.float64
    assert np.all(np.isfinite(points))
    assert _neighbour_purity(points, labels) > 0.95
    np.testing.assert_allclose(points.mean(0), 0.0, atol=1e-3)
    # Same seed, same layout; another seed, another layout (same clusters).
    np.testing.assert_array_equal(tsne_2d(vectors, perplexity=10.0, steps=400), points)
    other = tsne_2d(vectors, perplexity=10.0, steps=400, seed=1, learning_rate=100.0)
    assert not np.allclose(other, points)
    assert _neighbour_purity(other, labels) > 0.95


def test_tsne_affinities_match_the_perplexity():
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(60, 8)) * np.array([100.0] + [1.0] * 7)  # a badly scaled axis
    for perplexity in (2.0, 10.0, 40.0):
        conditional = projection._conditional_probabilities(
            projection._squared_distances(vectors), perplexity
        )
        np.testing.assert_allclose(conditional.sum(1), 1.0, atol=1e-12)
        assert np.all(np.diag(conditional) == 0.0)
        logs = np.log(np.where(conditional > 0, conditional, 1.0))
        entropy = -np.sum(conditional * logs, axis=1)  # nats
        np.testing.assert_allclose(np.exp(entropy), perplexity, rtol=1e-4)


def test_tsne_rejects_bad_inputs():
    vectors, _ = _clusters(points_per_cluster=4)
    with pytest.raises(ValueError, match=r"tsne_2d: vectors must be a 2-D array .* shape \(3,\)"):
        tsne_2d(np.ones(3))
    with pytest.raises(ValueError, match="vectors must have at least 3 points .* received 2"):
        tsne_2d(np.ones((2, 4)), perplexity=1.0)
    with pytest.raises(ValueError, match=rf"at most {MAX_TSNE_POINTS} points .* received 5001"):
        tsne_2d(np.zeros((MAX_TSNE_POINTS + 1, 2)))
    with pytest.raises(
        ValueError,
        match=r"perplexity must be a number in \[1, n\) with n = 12 "
        r"points .* received 30.0",
    ):
        tsne_2d(vectors)  # the default perplexity needs more than 30 points
    with pytest.raises(ValueError, match="perplexity must be a number in"):
        tsne_2d(vectors, perplexity=0.5)
    with pytest.raises(ValueError, match="steps must be an int above 250 .* received 100"):
        tsne_2d(vectors, perplexity=3.0, steps=100)
    with pytest.raises(ValueError, match='learning_rate must be a positive number or "auto"'):
        tsne_2d(vectors, perplexity=3.0, learning_rate=-1.0)
    with pytest.raises(ValueError, match="seed must be an int"):
        tsne_2d(vectors, perplexity=3.0, seed=0.5)
    with pytest.raises(ValueError, match="vectors must be finite"):
        tsne_2d(np.full((5, 2), np.inf), perplexity=2.0)


def test_docstring_examples_run():
    results = doctest.testmod(projection)
    assert results.attempted > 0 and results.failed == 0
