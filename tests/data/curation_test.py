"""Pretraining-data curation: every step on synthetic documents with known answers, and MinHash's
estimate against the exact Jaccard similarity."""

import random

import numpy as np
import pytest

from kbert.data.curation import (
    MinHasher,
    QualityRules,
    exact_duplicates,
    jaccard,
    lsh_bands,
    near_duplicates,
    perplexity_filter,
    quality_filter,
    quality_problem,
    shingles,
)

WORDS = (
    "the a river bank money flows through town where people walk every morning and evening "
    "while birds sing over green hills under a quiet sky near old stone bridges"
).split()


def _document(rng, length=80):
    sentences = []
    while sum(len(s.split()) for s in sentences) < length:
        sentences.append(" ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 12))) + ".")
    return " ".join(sentences).capitalize()


def test_exact_duplicates_ignore_case_space_and_punctuation():
    documents = ["Hello, world!", "hello   WORLD", "Hello world?!", "Goodbye world", "héllo world"]
    result = exact_duplicates(documents)
    assert result.kept == [0, 3]
    assert result.duplicate_of == {1: 0, 2: 0, 4: 0}
    assert result.summary() == {"kept": 2, "exact_duplicate": 3}


@pytest.mark.parametrize("seed", range(3))
def test_minhash_estimates_jaccard_within_its_standard_error(seed):
    rng = random.Random(seed)
    hasher = MinHasher(256, seed=seed)
    errors = []
    for _ in range(60):
        universe = [f"w{i}" for i in range(200)]
        first = set(rng.sample(universe, 60))
        second = set(rng.sample(sorted(first), rng.randint(0, 60))) | set(
            rng.sample(universe, rng.randint(0, 60))
        )
        exact = jaccard(first, second)
        estimate = hasher.similarity(hasher.signature(first), hasher.signature(second))
        # The estimate is a mean of 256 Bernoulli(J) draws: 4 standard errors, at least 0.02.
        tolerance = max(4 * np.sqrt(exact * (1 - exact) / 256), 0.02)
        assert abs(estimate - exact) <= tolerance, (exact, estimate)
        errors.append(estimate - exact)
    assert abs(np.mean(errors)) < 0.02  # unbiased


def test_lsh_bands_put_the_curve_at_the_threshold():
    for threshold in (0.5, 0.7, 0.9):
        bands, rows = lsh_bands(threshold, 128)
        assert bands * rows <= 128
        midpoint = (1 - 0.5 ** (1 / bands)) ** (1 / rows)
        assert abs(midpoint - threshold) < 0.05
    with pytest.raises(ValueError, match=r"threshold must be in \(0, 1\); received 1.2"):
        lsh_bands(1.2, 128)


def test_near_duplicates_find_planted_copies_and_spare_distinct_documents():
    rng = random.Random(0)
    originals = [_document(rng) for _ in range(40)]
    documents = list(originals)
    planted = {}
    for source in range(0, 40, 4):
        words = originals[source].split()
        words[rng.randrange(len(words))] = "edited"  # one word changed: Jaccard ~0.9
        planted[len(documents)] = source
        documents.append(" ".join(words))
    result = near_duplicates(documents, threshold=0.7, shingle_size=3)
    assert result.duplicate_of == planted  # every copy found, pointing at its original
    assert result.kept == list(range(40))  # no distinct document removed
    for index in planted:
        similarity = float(result.removed[index].split()[-1])
        exact = jaccard(shingles(documents[index], 3), shingles(originals[planted[index]], 3))
        assert similarity == pytest.approx(exact, abs=0.005) and exact >= 0.7


def test_shingles_of_short_texts_and_bad_sizes():
    assert shingles("one two", shingle_size=5) == {"one two"}
    assert shingles("", shingle_size=5) == set()
    with pytest.raises(ValueError, match="shingle_size must be an integer >= 1; received 0"):
        shingles("text", shingle_size=0)


def test_quality_rules_name_the_rule_a_document_fails():
    rng = random.Random(1)
    good = _document(rng, 80)
    assert quality_problem(good) is None
    rules = QualityRules()
    cases = {
        "min_words": "Too short. Really. Yes.",
        "min_sentences": " ".join(["word"] * 60),
        "max_symbol_ratio": good + " " + " ".join(["#tag"] * 20),
        "max_repeated_line_share": "\n".join([good] + ["Click here to subscribe."] * 5),
        "max_ellipsis_line_share": "\n".join(
            [good] + [f"read more about {w}..." for w in WORDS[:5]]
        ),
        "min_alphabetic_word_share": good + " " + " ".join(["12345 6789 0000"] * 10),
    }
    for rule, text in cases.items():
        assert quality_problem(text, rules).startswith(rule + ":"), rule
    result = quality_filter([good, *cases.values()])
    assert result.kept == [0] and len(result.removed) == len(cases)


def test_perplexity_filter_drops_both_tails():
    values = list(range(1, 101))
    result = perplexity_filter(values, 10, 90)
    # numpy percentiles of 1…100 at 10 and 90: 10.9 and 90.1, so 11…90 stay.
    assert result.kept == list(range(10, 90))
    assert result.summary() == {"kept": 80, "perplexity_low": 10, "perplexity_high": 10}
    for bad in ([1.0, float("nan")], [0.0, 1.0], [[1.0]]):
        with pytest.raises(ValueError, match="perplexities must be"):
            perplexity_filter(bad)
    with pytest.raises(ValueError, match="0 <= low_percentile < high_percentile <= 100"):
        perplexity_filter([1.0, 2.0], 50, 40)


def test_documents_must_be_strings():
    with pytest.raises(ValueError, match="documents must be a list of str"):
        exact_duplicates(["ok", 3])
