"""T5's span corruption and BART's noising: exact rates, span statistics over many draws, and
targets that give the original back."""

from math import comb

import numpy as np
import pytest

from kbert.text.seq2seq_noising import (
    random_spans_noise_mask,
    sentence_permutation,
    span_corruption,
    text_infilling,
)

SENTINELS = list(range(999, 900, -1))  # <extra_id_0> = 999, <extra_id_1> = 998, …


def _spans(mask):
    """Lengths of the runs of True in a bool array."""
    edges = np.diff(np.concatenate([[0], mask.astype(int), [0]]))
    return np.flatnonzero(edges == -1) - np.flatnonzero(edges == 1)


def test_every_draw_has_the_exact_noise_count_and_span_count():
    rng = np.random.default_rng(0)
    for _ in range(500):
        length = int(rng.integers(20, 200))
        mask = random_spans_noise_mask(length, 0.15, 3.0, rng)
        noise = int(round(length * 0.15))
        assert mask.sum() == noise and not mask[0]
        assert len(_spans(mask)) == max(int(round(noise / 3.0)), 1)


def test_span_lengths_are_a_uniform_random_composition():
    # 100 tokens at 15%: 15 noise tokens in 5 spans. P(first span = j) for a uniform
    # composition of 15 into 5 positive parts is C(15 - j - 1, 3) / C(14, 4).
    rng = np.random.default_rng(1)
    draws = 20000
    first = np.array(
        [_spans(random_spans_noise_mask(100, 0.15, 3.0, rng))[0] for _ in range(draws)]
    )
    for j in range(1, 6):
        expected = comb(15 - j - 1, 3) / comb(14, 4)
        observed = np.mean(first == j)
        # 4 binomial standard errors.
        assert abs(observed - expected) <= 4 * np.sqrt(expected * (1 - expected) / draws), j
    assert np.mean(first) == pytest.approx(3.0, abs=0.05)


def test_span_corruption_targets_restore_the_original():
    rng = np.random.default_rng(2)
    for _ in range(200):
        tokens = rng.integers(0, 500, int(rng.integers(10, 120)))
        inputs, targets = span_corruption(tokens, SENTINELS, rng=rng, eos_id=1)
        assert inputs[-1] == targets[-1] == 1
        restored, fill = [], {}
        current = None
        for token in targets[:-1]:
            if token in SENTINELS:
                current = token
                fill[current] = []
            else:
                fill[current].append(token)
        for token in inputs[:-1]:
            restored += fill[token] if token in fill else [token]
        np.testing.assert_array_equal(restored, tokens)
        used = [t for t in inputs if t in SENTINELS]
        assert used == SENTINELS[: len(used)]  # in order, from <extra_id_0>


def test_span_corruption_refuses_too_few_sentinels_and_bad_rates():
    with pytest.raises(ValueError, match="noise spans need as many sentinels"):
        span_corruption(np.arange(200), [999], rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"noise_density must be in \(0, 1\)"):
        span_corruption(np.arange(20), SENTINELS, noise_density=1.5)
    with pytest.raises(ValueError, match="token_ids must be 1-D"):
        span_corruption(np.zeros((2, 3)), SENTINELS)


def test_text_infilling_masks_the_budget_with_one_mask_per_span():
    rng = np.random.default_rng(3)
    mask_id = 4
    masks = hidden_total = 0
    for _ in range(200):
        tokens = rng.integers(10, 500, int(rng.integers(20, 120)))
        inputs, targets = text_infilling(tokens, mask_id, 0.3, 3.0, rng)
        np.testing.assert_array_equal(targets, tokens)
        kept = inputs[inputs != mask_id]
        hidden = len(tokens) - len(kept)
        assert hidden == int(round(len(tokens) * 0.3))
        # The kept tokens are the original in order: a subsequence.
        iterator = iter(tokens.tolist())
        assert all(token in iterator for token in kept.tolist())
        masks += int(np.sum(inputs == mask_id))
        hidden_total += hidden
    # One mask per span of mean length ~3 (Poisson(3) cut to the budget, plus the 5% of
    # length-0 spans that insert a mask): about a third as many masks as hidden tokens.
    assert 0.25 < masks / hidden_total < 0.5


def test_sentence_permutation_is_a_permutation():
    sentences = [f"s{i}." for i in range(8)]
    shuffled, original = sentence_permutation(sentences, np.random.default_rng(4))
    assert original == sentences and sorted(shuffled) == sorted(sentences)
    assert shuffled != sentences
