"""Fast tests of the word-level perplexity helpers."""

import math

import pytest

from kbert.data import count_whitespace_words, word_level_perplexity


def test_counts_whitespace_words_per_document():
    documents = [["= Title =", "A cat sat ."], "one  two\nthree", []]
    assert count_whitespace_words(documents) == [7, 3, 0]


def test_word_level_perplexity_is_exp_of_nll_per_word():
    # 3 tokens at -log p = 1 each, over 2 words: exp(3 / 2).
    assert word_level_perplexity(3.0, 2) == pytest.approx(math.exp(1.5))
    assert word_level_perplexity(0.0, 5) == 1.0


def test_errors_name_the_input():
    with pytest.raises(ValueError, match="documents must be a list of documents"):
        count_whitespace_words("a b")
    with pytest.raises(ValueError, match=r"documents\[1\] must be a str or a list of str"):
        count_whitespace_words(["a", [1]])
    with pytest.raises(ValueError, match="number_of_words must be a positive int; received 0"):
        word_level_perplexity(1.0, 0)
    with pytest.raises(ValueError, match="total_negative_log_likelihood must be a finite"):
        word_level_perplexity(float("nan"), 3)
