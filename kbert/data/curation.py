"""Pretraining-data curation (textbook §20.13): deduplication, quality and perplexity filters.

A pretraining corpus scraped or assembled at scale repeats itself and carries noise; a model
trained on it memorises the repeats and spends capacity on the noise. Each step here takes a
list of documents (str) and returns a `CurationResult`: the indices kept and, for every removed
document, the reason (and for duplicates, which document it repeats), so a curation run can be
read and audited, not just applied.

- `exact_duplicates`: the same text after normalization (case, whitespace, punctuation), by a
  hash of the normalized text.
- `near_duplicates`: MinHash signatures of word shingles (Broder 1997) and locality-sensitive
  hashing in bands, then the exact Jaccard similarity of the shingle sets of each candidate pair
  against the threshold (so LSH only proposes; nothing is removed on an estimate).
- `quality_filter`: the chapter's heuristics — too few words or sentences, too many symbols per
  word, too many repeated lines, too many lines ending in an ellipsis, too few alphabetic words.
- `perplexity_filter`: drop the documents a reference language model finds least and most
  likely (the lowest and highest percentiles of perplexity: boilerplate and gibberish), given
  the perplexities (`kbert.metrics` or a lab computes them with a kbert causal LM).
"""

import dataclasses
import hashlib
import re
import unicodedata

import numpy as np

from kbert.checks import check_int

_MERSENNE_PRIME = 4294967311  # a prime above 2**32: the universal hash (a·x + b) mod p
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclasses.dataclass
class CurationResult:
    """What a curation step kept and what it removed, and why.

    Attributes:
        kept: list of int. Indices of the documents kept, in order.
        removed: dict of int → str. Each removed document's index → the reason.
        duplicate_of: dict of int → int. For duplicates: removed index → the kept one it repeats.
    """

    kept: list
    removed: dict
    duplicate_of: dict = dataclasses.field(default_factory=dict)

    def summary(self):
        """`{reason: count}` over the removed documents, plus "kept"."""
        counts = {"kept": len(self.kept)}
        for reason in self.removed.values():
            key = reason.split(":")[0]
            counts[key] = counts.get(key, 0) + 1
        return counts


def _check_documents(documents):
    if not isinstance(documents, (list, tuple)) or not all(isinstance(d, str) for d in documents):
        raise ValueError("documents must be a list of str")
    return list(documents)


def normalize_for_hash(text):
    """Case-folded, accent-stripped words joined by single spaces (punctuation dropped).

    Example:
    >>> normalize_for_hash("  Hello,   WORLD!  Café ")
    'hello world cafe'
    """
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(_WORD.findall(plain))


def exact_duplicates(documents):
    """Removes documents whose normalized text (`normalize_for_hash`) was seen before.

    Returns:
        `CurationResult` (reason "exact_duplicate"; `duplicate_of` names the first copy).
    """
    documents = _check_documents(documents)
    first, kept, removed, duplicate_of = {}, [], {}, {}
    for index, text in enumerate(documents):
        digest = hashlib.blake2b(normalize_for_hash(text).encode("utf-8"), digest_size=16).digest()
        if digest in first:
            removed[index] = "exact_duplicate"
            duplicate_of[index] = first[digest]
        else:
            first[digest] = index
            kept.append(index)
    return CurationResult(kept, removed, duplicate_of)


def shingles(text, shingle_size=5):
    """The set of `shingle_size`-word shingles of the normalized text (one shingle of all the
    words for a shorter text).

    Example:
    >>> sorted(shingles("The cat sat on the mat", shingle_size=4))
    ['cat sat on the', 'sat on the mat', 'the cat sat on']
    """
    shingle_size = check_int("shingle_size", shingle_size, minimum=1, expected="an integer >= 1")
    words = normalize_for_hash(text).split()
    if len(words) <= shingle_size:
        return {" ".join(words)} if words else set()
    return {" ".join(words[i : i + shingle_size]) for i in range(len(words) - shingle_size + 1)}


def jaccard(first, second):
    """|A ∩ B| / |A ∪ B| of two sets (1.0 for two empty sets)."""
    if not first and not second:
        return 1.0
    return len(first & second) / len(first | second)


class MinHasher:
    """MinHash signatures: the estimated Jaccard similarity of two sets is the share of equal
    signature entries (each entry the minimum of one random hash over the set).

    Args:
        num_permutations: int, default 128. Signature length; the estimate's standard error is
            about sqrt(J(1 − J) / num_permutations).
        seed: int, default 0. Draws the hash functions.

    Example:
    >>> hasher = MinHasher(256)
    >>> a, b = set("abcdefghij"), set("abcdefghkl")
    >>> estimate = hasher.similarity(hasher.signature(a), hasher.signature(b))
    >>> round(jaccard(a, b), 3), abs(estimate - jaccard(a, b)) < 0.1
    (0.667, True)
    """

    def __init__(self, num_permutations=128, seed=0):
        num_permutations = check_int(
            "num_permutations", num_permutations, minimum=1, expected="an integer >= 1"
        )
        self.num_permutations = num_permutations
        rng = np.random.default_rng(seed)
        # a < 2**31 and x < 2**32 keep a·x + b below 2**64 in uint64.
        self._a = rng.integers(1, 2**31, size=num_permutations, dtype=np.uint64)
        self._b = rng.integers(0, 2**32, size=num_permutations, dtype=np.uint64)

    def signature(self, items):
        """The signature (uint64 array of `num_permutations`) of a set of str."""
        if not items:
            return np.full(self.num_permutations, _MERSENNE_PRIME, dtype=np.uint64)
        hashes = np.array(
            [
                int.from_bytes(hashlib.blake2b(item.encode("utf-8"), digest_size=4).digest())
                for item in items
            ],
            dtype=np.uint64,
        )
        values = (hashes[:, None] * self._a + self._b) % np.uint64(_MERSENNE_PRIME)
        return values.min(axis=0)

    @staticmethod
    def similarity(first, second):
        """Estimated Jaccard similarity: the share of equal entries of two signatures."""
        return float(np.mean(first == second))


def lsh_bands(threshold, num_permutations):
    """`(bands, rows)` with bands · rows ≤ num_permutations whose S-curve 1 − (1 − s^r)^b
    crosses 0.5 nearest `threshold` (pairs above it become candidates, below it rarely).

    Example:
    >>> lsh_bands(0.8, 128)
    (10, 12)
    """
    if not 0 < threshold < 1:
        raise ValueError(f"threshold must be in (0, 1); received {threshold!r}")
    best = None
    for rows in range(1, num_permutations + 1):
        bands = num_permutations // rows
        if bands < 1:
            break
        midpoint = (1 - 0.5 ** (1 / bands)) ** (1 / rows)
        if best is None or abs(midpoint - threshold) < best[0]:
            best = (abs(midpoint - threshold), bands, rows)
    return best[1], best[2]


def near_duplicates(documents, threshold=0.8, shingle_size=5, num_permutations=128, seed=0):
    """Removes documents whose word shingles are `threshold`-similar to an earlier kept one.

    MinHash + LSH propose candidate pairs (documents sharing a band of their signatures); a
    candidate is removed only when the exact Jaccard similarity of the two shingle sets is at
    least `threshold`. The earliest document of a group stays.

    Args:
        documents: list of str.
        threshold: float in (0, 1), default 0.8. Jaccard similarity that makes a duplicate.
        shingle_size: int, default 5. Words per shingle.
        num_permutations: int, default 128. MinHash signature length.
        seed: int, default 0.

    Returns:
        `CurationResult` (reason "near_duplicate: jaccard 0.87"; `duplicate_of` names the kept
        document it repeats).
    """
    documents = _check_documents(documents)
    bands, rows = lsh_bands(threshold, num_permutations)
    hasher = MinHasher(num_permutations, seed)
    sets = [shingles(text, shingle_size) for text in documents]
    buckets = [{} for _ in range(bands)]
    kept, removed, duplicate_of = [], {}, {}
    for index, items in enumerate(sets):
        signature = hasher.signature(items)
        keys = [signature[band * rows : (band + 1) * rows].tobytes() for band in range(bands)]
        candidates = {
            other for band, key in enumerate(keys) for other in buckets[band].get(key, ())
        }
        match = max(
            ((jaccard(items, sets[other]), other) for other in sorted(candidates)),
            default=(0.0, None),
        )
        if match[1] is not None and match[0] >= threshold:
            removed[index] = f"near_duplicate: jaccard {match[0]:.2f}"
            duplicate_of[index] = match[1]
            continue
        kept.append(index)
        for band, key in enumerate(keys):
            buckets[band].setdefault(key, []).append(index)
    return CurationResult(kept, removed, duplicate_of)


@dataclasses.dataclass
class QualityRules:
    """The chapter's heuristic quality rules (Gopher/C4-style); a document failing one is
    removed with that rule's name.

    Attributes:
        min_words: int, default 50.
        max_words: int or None, default 100,000.
        min_sentences: int, default 3. Sentences end in ".", "!" or "?".
        max_symbol_ratio: float, default 0.1. ("#" + "..." + "…") per word.
        max_repeated_line_share: float, default 0.3. Share of lines that repeat an earlier line.
        max_ellipsis_line_share: float, default 0.3. Share of lines ending in "..." or "…".
        min_alphabetic_word_share: float, default 0.8. Words with at least one letter.
    """

    min_words: int = 50
    max_words: int | None = 100_000
    min_sentences: int = 3
    max_symbol_ratio: float = 0.1
    max_repeated_line_share: float = 0.3
    max_ellipsis_line_share: float = 0.3
    min_alphabetic_word_share: float = 0.8


def quality_problem(text, rules=None):
    """The first rule of `rules` (`QualityRules()`) that `text` fails, as "rule: value", or None.

    Example:
    >>> quality_problem("Buy now!!! #deal #deal #deal", QualityRules(min_words=1, min_sentences=1))
    'max_symbol_ratio: 0.60'
    """
    rules = rules or QualityRules()
    words = text.split()
    if len(words) < rules.min_words:
        return f"min_words: {len(words)}"
    if rules.max_words is not None and len(words) > rules.max_words:
        return f"max_words: {len(words)}"
    sentences = len(re.findall(r"[.!?]+(?:\s|$)", text))
    if sentences < rules.min_sentences:
        return f"min_sentences: {sentences}"
    symbols = text.count("#") + text.count("...") + text.count("…")
    if symbols / len(words) > rules.max_symbol_ratio:
        return f"max_symbol_ratio: {symbols / len(words):.2f}"
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if lines:
        repeated = len(lines) - len(set(lines))
        if repeated / len(lines) > rules.max_repeated_line_share:
            return f"max_repeated_line_share: {repeated / len(lines):.2f}"
        ellipsis = sum(line.endswith(("...", "…")) for line in lines)
        if ellipsis / len(lines) > rules.max_ellipsis_line_share:
            return f"max_ellipsis_line_share: {ellipsis / len(lines):.2f}"
    alphabetic = sum(any(c.isalpha() for c in word) for word in words) / len(words)
    if alphabetic < rules.min_alphabetic_word_share:
        return f"min_alphabetic_word_share: {alphabetic:.2f}"
    return None


def quality_filter(documents, rules=None):
    """Removes documents failing a `QualityRules` rule; the reason names the rule and value."""
    documents = _check_documents(documents)
    kept, removed = [], {}
    for index, text in enumerate(documents):
        problem = quality_problem(text, rules)
        if problem is None:
            kept.append(index)
        else:
            removed[index] = problem
    return CurationResult(kept, removed)


def perplexity_filter(perplexities, low_percentile=5.0, high_percentile=95.0):
    """Removes the documents below the `low_percentile` and above the `high_percentile` of
    perplexity under a reference LM (repetitive boilerplate, and gibberish).

    Args:
        perplexities: sequence of float > 0, one per document.
        low_percentile: float in [0, 100), default 5.
        high_percentile: float in (low_percentile, 100], default 95.

    Returns:
        `CurationResult` (reasons "perplexity_low: 3.2", "perplexity_high: 812.0").

    Example:
    >>> perplexity_filter([10.0, 50, 60, 70, 900], 20, 80).removed
    {0: 'perplexity_low: 10.0', 4: 'perplexity_high: 900.0'}
    """
    values = np.asarray(perplexities, dtype=np.float64)
    if values.ndim != 1 or not np.all(np.isfinite(values)) or np.any(values <= 0):
        raise ValueError("perplexities must be a 1-D sequence of finite numbers > 0")
    if not 0 <= low_percentile < high_percentile <= 100:
        raise ValueError(
            "expected 0 <= low_percentile < high_percentile <= 100; received "
            f"{low_percentile}, {high_percentile}"
        )
    low, high = np.percentile(values, [low_percentile, high_percentile])
    kept, removed = [], {}
    for index, value in enumerate(values):
        if value < low:
            removed[index] = f"perplexity_low: {value:.1f}"
        elif value > high:
            removed[index] = f"perplexity_high: {value:.1f}"
        else:
            kept.append(index)
    return CurationResult(kept, removed)
