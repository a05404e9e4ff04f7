"""Two-dimensional pictures of high-dimensional vectors: PCA and an exact t-SNE, in numpy.

`pca_2d` is a linear projection onto the two directions of largest variance: distances along
the axes mean something, and `explained_variance_ratio` says how much of the picture is missing.
`tsne_2d` (van der Maaten & Hinton 2008) is non-linear: it keeps each point's near neighbours
near and says little about distances between clusters or cluster sizes (Wattenberg et al. 2016,
"How to use t-SNE effectively"), which is what sense-cluster pictures such as J&M Fig. 11.7 need.

This t-SNE is the plain exact algorithm, for teaching: every pairwise affinity is computed, so
each of its `steps` gradient steps costs O(n^2) time and memory (a few n x n matrices: 32 MB each
in float64 at n = 2,000). On a laptop-class CPU core the default 1,000 steps take under a second
for a few hundred points and tens of seconds at the largest sizes. It is meant for up to about 2,000 points and
refuses more than `MAX_TSNE_POINTS`; for more, subsample or use an approximate (Barnes-Hut or
FFT) implementation.
"""

import numpy as np

# Past this many points the exact t-SNE's n x n matrices take 100-200 MB each and a run minutes;
# `tsne_2d` refuses rather than appearing to hang.
MAX_TSNE_POINTS = 5000

# The schedule of van der Maaten & Hinton (2008) as scikit-learn runs it: early exaggeration 12
# and momentum 0.5 for the first 250 steps, then no exaggeration and momentum 0.8.
_EXAGGERATION = 12.0
_EXAGGERATION_STEPS = 250
_MOMENTUM_EARLY, _MOMENTUM_LATE = 0.5, 0.8
_MIN_GAIN = 0.01
_PERPLEXITY_TOLERANCE = 1e-5  # in nats of entropy
_PERPLEXITY_SEARCH_STEPS = 100


def _checked_vectors(vectors, min_points, function):
    try:
        array = np.asarray(vectors, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"{function}: vectors must be a 2-D array of numbers (points x "
            f"features); received {type(vectors).__name__}"
        ) from None
    if array.ndim != 2:
        raise ValueError(
            f"{function}: vectors must be a 2-D array (points x features); received "
            f"shape {array.shape}"
        )
    if array.shape[0] < min_points:
        raise ValueError(
            f"{function}: vectors must have at least {min_points} points (rows); "
            f"received {array.shape[0]}"
        )
    if array.shape[1] < 1:
        raise ValueError(
            f"{function}: vectors must have at least 1 feature (column); received "
            f"shape {array.shape}"
        )
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{function}: vectors must be finite; received NaN or infinite entries")
    return array


def pca_2d(vectors):
    """Projects vectors onto their first two principal components.

    The vectors are centred and decomposed by SVD; each component's sign is fixed so that its
    largest-magnitude coordinate in `points` is positive, so the result does not depend on the
    SVD routine's sign choices.

    Args:
        vectors: array-like `(n, dim)` of numbers, n >= 2. With dim = 1 the second coordinate is
            0 (and so is its explained variance).

    Returns:
        Pair `(points, explained_variance_ratio)`: float64 `(n, 2)` coordinates along the first
        and second principal axes, and float64 `(2,)` fractions of the total variance those axes
        carry (the rest is what the picture leaves out).

    Raises:
        ValueError: `vectors` is not 2-D, has fewer than 2 rows, is not finite, or all its
            points are identical (no direction of variance).

    Example:
    >>> points, ratio = pca_2d([[0.0, 0.0, 1.0], [2.0, 0.0, 1.0], [4.0, 1.0, 1.0]])
    >>> points.shape, bool(ratio[0] > 0.9)
    ((3, 2), True)
    """
    array = _checked_vectors(vectors, 2, "pca_2d")
    centered = array - array.mean(axis=0)
    left, singular, _ = np.linalg.svd(centered, full_matrices=False)  # left (n, k), singular (k,)
    total = float(np.sum(singular**2))
    if total <= 0.0:
        raise ValueError(
            "pca_2d: vectors must not all be the same point; received "
            f"{array.shape[0]} identical rows (no variance to project)"
        )
    points = np.zeros((array.shape[0], 2))
    ratio = np.zeros(2)
    for k in range(min(2, singular.shape[0])):
        column = left[:, k] * singular[k]  # (n,) coordinates along principal axis k
        if column[np.argmax(np.abs(column))] < 0:
            column = -column
        points[:, k] = column
        ratio[k] = singular[k] ** 2 / total
    return points, ratio


def _squared_distances(array):
    squares = np.sum(array**2, axis=1)  # (n,)
    distances = squares[:, None] + squares[None, :] - 2.0 * array @ array.T  # (n, n)
    np.maximum(distances, 0.0, out=distances)  # rounding can leave tiny negatives
    np.fill_diagonal(distances, 0.0)
    return distances


def _conditional_probabilities(distances, perplexity):
    """p_{j|i} with each row's Gaussian precision found by bisection to match the perplexity.

    All rows are searched at once: each step halves every row's bracket on beta = 1 / (2 sigma^2)
    (doubling or halving while the bracket is still open on one side).
    """
    n = distances.shape[0]
    off_diagonal = ~np.eye(n, dtype=bool)
    # Shifting each row by its nearest distance leaves p_{j|i} unchanged and keeps exp() from
    # underflowing to 0 for the nearest neighbour, whatever the scale of the vectors.
    nearest = np.min(np.where(off_diagonal, distances, np.inf), axis=1, keepdims=True)  # (n, 1)
    shifted = np.where(off_diagonal, distances - nearest, 0.0)  # (n, n)
    target = np.log(perplexity)  # entropy in nats
    scale = np.sum(shifted, axis=1) / (n - 1)  # (n,) mean shifted distance
    beta = 1.0 / np.where(scale > 0, scale, 1.0)  # (n,)
    low = np.zeros(n)
    high = np.full(n, np.inf)
    for _ in range(_PERPLEXITY_SEARCH_STEPS):
        weights = np.exp(-shifted * beta[:, None]) * off_diagonal  # (n, n)
        totals = np.sum(weights, axis=1)  # (n,), >= 1 thanks to the shift
        entropy = np.log(totals) + beta * np.sum(shifted * weights, axis=1) / totals  # (n,)
        error = entropy - target
        if np.all(np.abs(error) < _PERPLEXITY_TOLERANCE):
            break
        too_flat = error > 0  # entropy too high: sharpen (raise beta)
        low = np.where(too_flat, beta, low)
        high = np.where(too_flat, high, beta)
        beta = np.where(np.isinf(high), beta * 2.0, (low + high) / 2.0)
    return weights / totals[:, None]


def tsne_2d(vectors, perplexity=30.0, steps=1000, seed=0, learning_rate="auto"):
    """Embeds vectors in 2-D with exact t-SNE (van der Maaten & Hinton 2008).

    The algorithm: Gaussian affinities p_{j|i} whose per-point width is found by bisection so
    each point has the given perplexity (an effective number of neighbours), symmetrized as
    p_ij = (p_{j|i} + p_{i|j}) / 2n; Student-t (one degree of freedom) affinities q_ij in the
    plane; gradient descent on KL(P || Q) from a small Gaussian start (sd 1e-4), with early
    exaggeration (P x 12 for the first 250 steps), momentum 0.5 then 0.8, and per-coordinate
    adaptive gains (Jacobs 1988: +0.2 while a coordinate keeps moving the way its gradient
    points, x0.8 once it overshoots, at least 0.01). Each step costs O(n^2); about 2,000 points is the intended maximum.

    Args:
        vectors: array-like `(n, dim)` of numbers, 3 <= n <= `MAX_TSNE_POINTS` (5,000).
        perplexity: float, default 30.0. Effective number of neighbours, in [1, n); typical
            values are 5 to 50 (use fewer for small n).
        steps: int, default 1000. Gradient steps, more than the 250 of early exaggeration.
        seed: int, default 0. Seed of the starting layout; one seed gives one result.
        learning_rate: float > 0 or "auto" (default), which is max(n / 12 / 4, 50) (Belkina et
            al. 2019, scikit-learn's default).

    Returns:
        float64 numpy array `(n, 2)`, centred on the origin. Only neighbourhoods are meaningful:
        not the axes, not distances between clusters, not cluster sizes.

    Raises:
        ValueError: `vectors` is not 2-D, not finite, has fewer than 3 or more than
            `MAX_TSNE_POINTS` rows; `perplexity` is not in [1, n); `steps` is not an int above
            250; `learning_rate` is neither a positive number nor "auto"; `seed` is not an int.

    Example:
    >>> rng = np.random.default_rng(0)
    >>> vectors = np.concatenate([rng.normal(0, 1, (20, 5)), rng.normal(8, 1, (20, 5))])
    >>> tsne_2d(vectors, perplexity=5.0, steps=300).shape
    (40, 2)
    """
    array = _checked_vectors(vectors, 3, "tsne_2d")
    n = array.shape[0]
    if n > MAX_TSNE_POINTS:
        raise ValueError(
            f"tsne_2d: vectors must have at most {MAX_TSNE_POINTS} points (exact t-SNE is O(n^2) "
            f"in time and memory; subsample first); received {n}"
        )
    if (
        isinstance(perplexity, bool)
        or not isinstance(perplexity, (int, float, np.number))
        or not 1.0 <= float(perplexity) < n
    ):
        raise ValueError(
            f"tsne_2d: perplexity must be a number in [1, n) with n = {n} points (an effective "
            f"number of neighbours); received {perplexity!r}"
        )
    if (
        isinstance(steps, bool)
        or not isinstance(steps, (int, np.integer))
        or steps <= _EXAGGERATION_STEPS
    ):
        raise ValueError(
            f"tsne_2d: steps must be an int above {_EXAGGERATION_STEPS} (the early-exaggeration "
            f"phase); received {steps!r}"
        )
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"tsne_2d: seed must be an int; received {seed!r}")
    if isinstance(learning_rate, str) and learning_rate == "auto":
        rate = max(n / _EXAGGERATION / 4.0, 50.0)
    elif (
        not isinstance(learning_rate, bool)
        and isinstance(learning_rate, (int, float, np.number))
        and np.isfinite(learning_rate)
        and learning_rate > 0
    ):
        rate = float(learning_rate)
    else:
        raise ValueError(
            f'tsne_2d: learning_rate must be a positive number or "auto"; received '
            f"{learning_rate!r}"
        )

    conditional = _conditional_probabilities(_squared_distances(array), float(perplexity))
    joint = (conditional + conditional.T) / (2.0 * n)  # (n, n), sums to 1
    # The descent runs in float32: each step is memory-bound, so this makes it markedly faster,
    # and the layout does not need more digits (the affinities above are found in float64).
    joint = np.maximum(joint, 1e-12).astype(np.float32)

    rng = np.random.default_rng(seed)
    points = rng.normal(0.0, 1e-4, size=(n, 2)).astype(np.float32)  # (n, 2)
    update = np.zeros_like(points)
    gains = np.ones_like(points)
    exaggerated = joint * _EXAGGERATION
    for step in range(steps):
        early = step < _EXAGGERATION_STEPS
        p = exaggerated if early else joint
        momentum = _MOMENTUM_EARLY if early else _MOMENTUM_LATE

        # In place, two n x n buffers: each step is memory-bound, and temporaries cost time.
        squares = np.sum(points**2, axis=1)  # (n,)
        kernel = points @ points.T  # (n, n)
        kernel *= np.float32(-2.0)
        kernel += squares[:, None]
        kernel += squares[None, :]
        kernel += np.float32(1.0)
        np.reciprocal(kernel, out=kernel)  # Student-t (1 + |y_i - y_j|^2)^-1, unnormalized
        np.fill_diagonal(kernel, 0.0)
        forces = kernel / np.sum(kernel)  # q_ij, (n, n)
        np.subtract(p, forces, out=forces)
        forces *= kernel  # (p_ij - q_ij)(1 + |y_i - y_j|^2)^-1
        # dC/dy_i = 4 sum_j (p_ij - q_ij)(1 + |y_i - y_j|^2)^-1 (y_i - y_j)
        gradient = np.float32(4.0) * (
            np.sum(forces, axis=1)[:, None] * points - forces @ points
        )  # (n, 2)

        same_direction = np.sign(gradient) == np.sign(update)
        gains = np.where(same_direction, gains * np.float32(0.8), gains + np.float32(0.2))
        np.maximum(gains, np.float32(_MIN_GAIN), out=gains)
        update = np.float32(momentum) * update - np.float32(rate) * gains * gradient
        points = points + update
        points -= points.mean(axis=0)
    return points.astype(np.float64)
