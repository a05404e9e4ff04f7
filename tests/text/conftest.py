"""Fixtures of the kbert.text tests: the tiny vocabulary and a tokenizer on it."""

import pytest

from kbert.text import WordPieceTokenizer
from tests.text.text_test_case import TINY_VOCABULARY


@pytest.fixture
def vocabulary():
    """The tiny vocabulary as a list (a fresh copy per test)."""
    return list(TINY_VOCABULARY)


@pytest.fixture
def tokenizer():
    """A default `WordPieceTokenizer` on the tiny vocabulary."""
    return WordPieceTokenizer(TINY_VOCABULARY)
