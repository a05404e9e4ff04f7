"""Anisotropy of contextual word vectors: expected cosine, rogue dimensions, z-scoring.

Contextual vectors are anisotropic (J&M §11.3.2): they occupy a narrow cone, so two random
words have a clearly positive cosine. Ethayarajh (2019) measures this as the expected cosine of
two words drawn at random from different contexts (`expected_cosine` with `groups`). Timkey and
van Schijndel (2021) split a cosine into per-dimension terms, `cos(u, v) = sum_d u_d v_d /
(|u| |v|)`, and find that a few "rogue" dimensions with large values carry most of it
(`cosine_contributions`, `rogue_dimensions`); z-scoring each dimension over a corpus (`ZScorer`)
removes the common offset and the rogue scale, and with them most of the anisotropy.
`word_in_context_similarity` asks whether cosine still tells word senses apart: do two
occurrences of a lemma with the same sense have a higher cosine than two with different senses?

All functions take numpy arrays computed elsewhere: one layer's vectors `(n, dim)`, or every
layer's `(n, num_layers + 1, dim)` (axis 1: the embedding output, then each block). They compute
in float64 and never read files or print.
"""

import numpy as np

from kbert.checks import check_int

_PAIR_CHUNK = 4096  # pairs per vectorized step: bounds memory at (chunk, dim) floats


def _check_vectors(vectors, name="vectors", ndim=2):
    array = np.asarray(vectors)
    shape = "(n, dim)" if ndim == 2 else "(n, num_layers + 1, dim)"
    if array.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-D array {shape}; received shape {array.shape}")
    if (
        not (np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer))
        or array.dtype == bool
    ):
        raise ValueError(f"{name} must hold real numbers; received dtype {array.dtype}")
    if array.shape[0] < 2:
        raise ValueError(f"{name} must hold at least 2 vectors (axis 0); received {array.shape[0]}")
    if array.shape[-1] < 1:
        raise ValueError(
            f"{name} must have at least 1 dimension (last axis); received shape {array.shape}"
        )
    return array.astype(np.float64, copy=False)


def _check_ids(ids, name, n):
    array = np.asarray(ids)
    if array.ndim != 1 or len(array) != n:
        raise ValueError(
            f"{name} must be a 1-D array with one id per vector ({n}); received shape {array.shape}"
        )
    return array


def _unit_rows(vectors):
    """Rows scaled to length 1; a zero row stays zero (its cosine with anything is 0)."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)  # (n, 1)
    return vectors / np.where(norms > 0, norms, 1.0)


def _check_pairs(pairs, n):
    if not isinstance(pairs, (tuple, list)) or len(pairs) != 2:
        raise ValueError(
            "pairs must be a tuple (first, second) of index arrays, as returned by "
            f"random_pairs; received {type(pairs).__name__}"
        )
    first, second = (np.asarray(p) for p in pairs)
    if first.ndim != 1 or first.shape != second.shape or len(first) == 0:
        raise ValueError(
            "pairs must hold two non-empty 1-D index arrays of equal length; "
            f"received shapes {first.shape} and {second.shape}"
        )
    for array in (first, second):
        if not np.issubdtype(array.dtype, np.integer):
            raise ValueError(f"pairs must hold integer indices; received dtype {array.dtype}")
        if array.min() < 0 or array.max() >= n:
            raise ValueError(
                f"pairs must hold indices in [0, {n - 1}] (one per vector); "
                f"received {array.min()} .. {array.max()}"
            )
    return first, second


def random_pairs(n, num_pairs, seed=0, groups=None):
    """Draws random ordered pairs of distinct indices, optionally from different groups.

    Without `groups`, each pair is uniform over the `n * (n - 1)` ordered pairs `i != j`. With
    `groups` (e.g. the sentence each vector came from), each pair is uniform over the ordered
    pairs whose two vectors belong to different groups: Ethayarajh's (2019) "randomly sampled
    words from different contexts", so that words of one sentence, which share context, do not
    inflate the baseline. Pairs are drawn with replacement, without rejection sampling.

    Args:
        n: int >= 2. Number of vectors.
        num_pairs: int >= 1. Pairs to draw.
        seed: int, default 0. Seed of the numpy generator.
        groups: 1-D array of `n` ids, default None. With it, `i` and `j` of every pair come
            from different groups.

    Returns:
        `(first, second)`: two int64 arrays `(num_pairs,)` with `first != second` (and
        `groups[first] != groups[second]` when `groups` is given).

    Raises:
        ValueError: `n < 2`, `num_pairs < 1`, `groups` of the wrong shape, or `groups` with
            fewer than 2 distinct ids.

    Example:
    >>> first, second = random_pairs(4, 1000, groups=[0, 0, 1, 1])
    >>> bool(np.all(first // 2 != second // 2))
    True
    """
    n = check_int("n", n, 2)
    num_pairs = check_int("num_pairs", num_pairs, 1)
    rng = np.random.default_rng(seed)
    if groups is None:
        first = rng.integers(n, size=num_pairs)
        second = rng.integers(n - 1, size=num_pairs)
        second += second >= first  # skip `first`: uniform over the other n - 1
        return first.astype(np.int64), second.astype(np.int64)

    groups = _check_ids(groups, "groups", n)
    order = np.argsort(groups, kind="stable")  # members of a group are contiguous in `order`
    names, starts, counts = np.unique(groups[order], return_index=True, return_counts=True)
    if len(names) < 2:
        raise ValueError(
            f"groups must hold at least 2 distinct ids to draw pairs from different "
            f"groups; received {len(names)}"
        )
    group_of = np.searchsorted(names, groups)  # (n,) each vector's group position
    outside = n - counts[group_of]  # (n,) vectors in other groups: pairs each vector starts
    first = rng.choice(n, size=num_pairs, p=outside / outside.sum())
    group = group_of[first]
    offset = rng.integers(0, outside[first])  # rank among the vectors outside the group
    position = offset + np.where(offset >= starts[group], counts[group], 0)  # skip the group
    return first.astype(np.int64), order[position].astype(np.int64)


def _pair_cosines(unit, first, second):
    """Cosine of each pair of unit rows, chunked."""
    cosines = np.empty(len(first))
    for start in range(0, len(first), _PAIR_CHUNK):
        part = slice(start, start + _PAIR_CHUNK)
        cosines[part] = np.einsum("pd,pd->p", unit[first[part]], unit[second[part]])
    return cosines


def cosine_contributions(vectors, pairs):
    """Splits the mean cosine of the given pairs into one term per dimension.

    Timkey and van Schijndel (2021): `CC_d = mean over pairs (u, v) of u_d v_d / (|u| |v|)`.
    The terms sum to the mean cosine of the pairs, so with the pairs of `random_pairs` they
    split `expected_cosine` (same `num_pairs`, `seed` and `groups`) dimension by dimension.

    Args:
        vectors: float array `(n, dim)`.
        pairs: `(first, second)` int index arrays of equal length, e.g. from `random_pairs`.

    Returns:
        float64 array `(dim,)`.

    Raises:
        ValueError: `vectors` not 2-D or with fewer than 2 rows; `pairs` not two equal-length
            integer arrays of indices into `vectors`.

    Example:
    >>> vectors = np.array([[3.0, 4.0], [3.0, 4.0], [6.0, 8.0]])
    >>> cosine_contributions(vectors, random_pairs(3, 10)).round(2).tolist()  # all cosines 1
    [0.36, 0.64]
    """
    vectors = _check_vectors(vectors)
    first, second = _check_pairs(pairs, len(vectors))
    unit = _unit_rows(vectors)
    total = np.zeros(vectors.shape[1])
    for start in range(0, len(first), _PAIR_CHUNK):
        part = slice(start, start + _PAIR_CHUNK)
        total += np.einsum("pd,pd->d", unit[first[part]], unit[second[part]])
    return total / len(first)


def expected_cosine(vectors, num_pairs=10000, seed=0, groups=None):
    """Estimates the cosine of two random vectors (Ethayarajh 2019's anisotropy baseline).

    Near 0 for isotropic vectors; contextual embeddings give clearly positive values that grow
    in the upper layers. A similarity between two words means something only measured against
    this baseline.

    Args:
        vectors: float array `(n, dim)`. A zero vector has cosine 0 with everything.
        num_pairs: int, default 10000. Random pairs averaged over (see `random_pairs`).
        seed: int, default 0. Seed of the pair sampler.
        groups: 1-D array of `n` ids, default None. With it, only pairs from different groups
            (e.g. sentences) count.

    Returns:
        float: the mean cosine over the pairs.

    Raises:
        ValueError: `vectors` not 2-D or with fewer than 2 rows, `num_pairs < 1`, or bad
            `groups` (see `random_pairs`).

    Example:
    >>> vectors = np.random.default_rng(0).normal(size=(500, 64))
    >>> abs(expected_cosine(vectors)) < 0.01
    True
    >>> expected_cosine(vectors + 10.0) > 0.9  # a common offset: a narrow cone
    True
    """
    vectors = _check_vectors(vectors)
    first, second = random_pairs(len(vectors), num_pairs, seed=seed, groups=groups)
    return float(_pair_cosines(_unit_rows(vectors), first, second).mean())


def _top_dimensions(contributions, vectors, top_k):
    """The rogue-dimension summary shared by `rogue_dimensions` and `layer_anisotropy`."""
    dimensions = np.argsort(-contributions, kind="stable")[:top_k]
    mass = np.abs(contributions).sum()
    variance = vectors.var(axis=0)  # (dim,)
    return {
        "dimensions": dimensions.astype(np.int64),
        "contributions": contributions[dimensions],
        "share": float(contributions[dimensions].sum() / mass) if mass > 0 else float("nan"),
        "variance_share": (
            float(variance[dimensions].sum() / variance.sum())
            if variance.sum() > 0
            else float("nan")
        ),
        "expected_cosine": float(contributions.sum()),
    }


def rogue_dimensions(vectors, num_pairs=10000, seed=0, groups=None, top_k=3):
    """Finds the few dimensions that carry most of the expected cosine (Timkey & van Schijndel).

    `share` is the top dimensions' summed contribution over the summed absolute contributions
    `sum_d |CC_d|`. When no dimension contributes negatively (the anisotropic case this measure
    is for) that is exactly their share of the expected cosine; the absolute sum keeps the ratio
    in [-1, 1] when the expected cosine is near 0 (after z-scoring), where dividing by it would
    blow sampling noise up into arbitrary values. `expected_cosine / sum |CC_d|` is 1 for raw
    anisotropic vectors; divide by `expected_cosine` yourself for the plain ratio.

    Args:
        vectors: float array `(n, dim)`.
        num_pairs: int, default 10000. Random pairs (see `random_pairs`).
        seed: int, default 0. Seed of the pair sampler.
        groups: 1-D array of `n` ids, default None. Pairs from different groups only.
        top_k: int, default 3. How many dimensions to return, at most `dim`.

    Returns:
        dict with
            `dimensions`: int64 array `(top_k,)`, largest contribution first.
            `contributions`: float64 array `(top_k,)`, their `CC_d`.
            `share`: float, their summed contribution over `sum_d |CC_d|` (see above).
            `variance_share`: float, their share of the total variance (sum over dimensions of
                the per-dimension variance over `vectors`).
            `expected_cosine`: float, `sum_d CC_d`.

    Raises:
        ValueError: bad `vectors`, `num_pairs` or `groups` (see `expected_cosine`), or `top_k`
            not in [1, dim].

    Example:
    >>> vectors = np.random.default_rng(0).normal(size=(500, 64))
    >>> vectors[:, 5] += 100.0  # one dimension with a huge mean
    >>> rogue = rogue_dimensions(vectors, top_k=1)
    >>> int(rogue["dimensions"][0]), round(rogue["share"], 2)
    (5, 1.0)
    """
    vectors = _check_vectors(vectors)
    top_k = check_int("top_k", top_k, 1)
    if top_k > vectors.shape[1]:
        raise ValueError(
            f"top_k must be at most the number of dimensions ({vectors.shape[1]}); received {top_k}"
        )
    pairs = random_pairs(len(vectors), num_pairs, seed=seed, groups=groups)
    return _top_dimensions(cosine_contributions(vectors, pairs), vectors, top_k)


class ZScorer:
    """Standardizes each dimension with its mean and standard deviation over a corpus.

    Timkey and van Schijndel (2021): subtracting each dimension's corpus mean and dividing by its
    standard deviation removes the common direction and the rogue dimensions' scale, so cosine
    reflects all dimensions rather than a few. Fit on a large sample of the same layer's vectors
    (not only the words being compared); a constant dimension (std 0) is centred, not scaled.

    Attributes:
        mean: float64 array `(dim,)`, None before `fit`.
        std: float64 array `(dim,)` with zeros replaced by 1, None before `fit`.

    Example:
    >>> scorer = ZScorer().fit(np.array([[1.0, 5.0], [3.0, 5.0]]))
    >>> scorer.transform(np.array([[2.0, 7.0]])).tolist()
    [[0.0, 2.0]]
    """

    def __init__(self):
        self.mean = None
        self.std = None

    def fit(self, vectors):
        """Computes the per-dimension mean and standard deviation.

        Args:
            vectors: float array `(n, dim)`, n >= 2.

        Returns:
            self.

        Raises:
            ValueError: `vectors` not 2-D or with fewer than 2 rows.
        """
        vectors = _check_vectors(vectors)
        self.mean = vectors.mean(axis=0)
        std = vectors.std(axis=0)
        self.std = np.where(std > 0, std, 1.0)
        return self

    def transform(self, vectors):
        """Returns `(vectors - mean) / std`.

        Args:
            vectors: float array `(..., dim)` with the fitted `dim`.

        Returns:
            Array of the same shape, float32 for float32 input and float64 otherwise.

        Raises:
            ValueError: called before `fit`, or `vectors` whose last axis is not `dim`.
        """
        if self.mean is None:
            raise ValueError("ZScorer.transform needs statistics: call fit(vectors) first")
        array = np.asarray(vectors)
        if array.ndim < 1 or array.shape[-1] != len(self.mean):
            raise ValueError(
                f"vectors must have {len(self.mean)} dimensions (last axis), as in "
                f"fit; received shape {array.shape}"
            )
        dtype = np.float32 if array.dtype == np.float32 else np.float64
        return ((array - self.mean) / self.std).astype(dtype)

    def fit_transform(self, vectors):
        """`fit(vectors)`, then `transform(vectors)`."""
        return self.fit(vectors).transform(vectors)


def layer_anisotropy(layer_vectors, groups=None, num_pairs=10000, seed=0, top_k=3):
    """Measures anisotropy in every layer, before and after z-scoring that layer.

    Every layer is measured on the same random pairs, so differences between layers are not
    sampling noise of different pairs. Each layer is z-scored with its own statistics over
    `layer_vectors`.

    Args:
        layer_vectors: float array `(n, num_layers + 1, dim)`.
        groups: 1-D array of `n` ids, default None. Pairs from different groups only
            (Ethayarajh 2019: words of different sentences).
        num_pairs: int, default 10000. Random pairs (see `random_pairs`).
        seed: int, default 0. Seed of the pair sampler.
        top_k: int, default 3. Rogue dimensions per layer, at most `dim`.

    Returns:
        list with one dict per layer, bottom first:
            `expected_cosine`, `expected_cosine_z`: float, raw and after z-scoring.
            `rogue_share`, `rogue_share_z`: float, the top-`top_k` dimensions' share (see
                `rogue_dimensions`) of the raw and of the z-scored vectors (each its own top
                dimensions).
            `rogue_dimensions`: list of int, the raw top dimensions, largest first.

    Raises:
        ValueError: `layer_vectors` not 3-D or with fewer than 2 rows, or bad `groups`,
            `num_pairs` or `top_k`.

    Example:
    >>> layers = np.random.default_rng(0).normal(size=(400, 3, 32))
    >>> layers[:, 2] += 5.0  # the top layer drifts to a common offset
    >>> rows = layer_anisotropy(layers, num_pairs=2000)
    >>> [bool(row["expected_cosine"] > 0.5) for row in rows]
    [False, False, True]
    >>> abs(rows[2]["expected_cosine_z"]) < 0.05
    True
    """
    layer_vectors = _check_vectors(layer_vectors, "layer_vectors", ndim=3)
    top_k = check_int("top_k", top_k, 1)
    if top_k > layer_vectors.shape[2]:
        raise ValueError(
            f"top_k must be at most the number of dimensions "
            f"({layer_vectors.shape[2]}); received {top_k}"
        )
    pairs = random_pairs(len(layer_vectors), num_pairs, seed=seed, groups=groups)
    rows = []
    for layer in range(layer_vectors.shape[1]):
        vectors = layer_vectors[:, layer]  # (n, dim)
        raw = _top_dimensions(cosine_contributions(vectors, pairs), vectors, top_k)
        standardized = ZScorer().fit_transform(vectors)
        z = _top_dimensions(cosine_contributions(standardized, pairs), standardized, top_k)
        rows.append(
            {
                "expected_cosine": raw["expected_cosine"],
                "expected_cosine_z": z["expected_cosine"],
                "rogue_share": raw["share"],
                "rogue_share_z": z["share"],
                "rogue_dimensions": raw["dimensions"].tolist(),
            }
        )
    return rows


def _same_lemma_pairs(lemma_ids, max_pairs, rng):
    """Unordered pairs of distinct vectors with the same lemma: all, or `max_pairs` at random."""
    order = np.argsort(lemma_ids, kind="stable")  # each lemma's vectors are contiguous
    _, starts, counts = np.unique(lemma_ids[order], return_index=True, return_counts=True)
    per_lemma = counts.astype(np.int64) * (counts - 1) // 2  # pairs within each lemma
    total = int(per_lemma.sum())
    if total == 0:
        raise ValueError(
            "lemma_ids must repeat: no two vectors share a lemma, so there are no "
            "same-lemma pairs to compare"
        )
    ranks = (
        np.arange(total)
        if total <= max_pairs
        else np.sort(rng.choice(total, size=max_pairs, replace=False))
    )
    ends = np.cumsum(per_lemma)
    lemma = np.searchsorted(ends, ranks, side="right")
    local = ranks - (ends[lemma] - per_lemma[lemma])  # rank within the lemma: b(b-1)/2 + a
    later = np.floor((1 + np.sqrt(1 + 8 * local.astype(np.float64))) / 2).astype(np.int64)
    later -= later * (later - 1) // 2 > local  # undo float rounding up
    later += (later + 1) * later // 2 <= local  # ... or down
    earlier = local - later * (later - 1) // 2  # 0 <= earlier < later < count
    return order[starts[lemma] + earlier], order[starts[lemma] + later]


def _rank_auc(positive, negative):
    """P(a positive scores above a negative), ties counted 1/2: Mann-Whitney U from ranks."""
    scores = np.concatenate([positive, negative])
    _, inverse, counts = np.unique(scores, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    ranks = (ends - (counts - 1) / 2)[inverse]  # 1-based, tied scores share their mean rank
    u = ranks[: len(positive)].sum() - len(positive) * (len(positive) + 1) / 2
    return float(u / (len(positive) * len(negative)))


def word_in_context_similarity(vectors, lemma_ids, sense_ids, max_pairs=20000, seed=0):
    """Compares the cosine of same-sense and different-sense occurrences of the same lemma.

    For every pair of vectors with the same lemma (or `max_pairs` of them drawn at random
    without replacement), split by whether they have the same sense: a representation that
    separates senses gives same-sense pairs the higher cosine. `auc` is threshold-free: the
    probability that a random same-sense pair has a higher cosine than a random different-sense
    pair (ties count 1/2), from the rank-sum (Mann-Whitney U) statistic. Run it on raw and on
    z-scored vectors (`ZScorer`) to see what z-scoring does to sense similarity.

    Args:
        vectors: float array `(n, dim)`.
        lemma_ids: 1-D array of `n` ids: vectors with equal ids are occurrences of one lemma.
        sense_ids: 1-D array of `n` ids: pairs of one lemma with equal ids have the same sense.
        max_pairs: int, default 20000. Cap on the same-lemma pairs compared.
        seed: int, default 0. Seed of the pair sampler (used only above `max_pairs`).

    Returns:
        dict with
            `same_sense_cosine`, `different_sense_cosine`: float, mean cosine of each kind of
                pair (nan when there is none of that kind).
            `gap`: float, same minus different.
            `auc`: float in [0, 1]; 0.5 is chance (nan when either kind is missing).
            `pairs_same`, `pairs_different`: int, pairs of each kind compared.

    Raises:
        ValueError: `vectors` not 2-D or with fewer than 2 rows, `lemma_ids` or `sense_ids`
            of another length, `max_pairs < 1`, or no two vectors with the same lemma.

    Example:
    >>> vectors = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]])
    >>> result = word_in_context_similarity(vectors, [0, 0, 0, 0], [0, 0, 1, 1])
    >>> result["auc"], result["pairs_same"], result["pairs_different"]
    (1.0, 2, 4)
    """
    vectors = _check_vectors(vectors)
    lemma_ids = _check_ids(lemma_ids, "lemma_ids", len(vectors))
    sense_ids = _check_ids(sense_ids, "sense_ids", len(vectors))
    max_pairs = check_int("max_pairs", max_pairs, 1)
    first, second = _same_lemma_pairs(lemma_ids, max_pairs, np.random.default_rng(seed))
    cosines = _pair_cosines(_unit_rows(vectors), first, second)
    same = sense_ids[first] == sense_ids[second]
    same_cosines, different_cosines = cosines[same], cosines[~same]
    same_mean = float(same_cosines.mean()) if len(same_cosines) else float("nan")
    different_mean = float(different_cosines.mean()) if len(different_cosines) else float("nan")
    auc = (
        _rank_auc(same_cosines, different_cosines)
        if len(same_cosines) and len(different_cosines)
        else float("nan")
    )
    return {
        "same_sense_cosine": same_mean,
        "different_sense_cosine": different_mean,
        "gap": same_mean - different_mean,
        "auc": auc,
        "pairs_same": int(len(same_cosines)),
        "pairs_different": int(len(different_cosines)),
    }
