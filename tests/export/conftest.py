"""Fixtures the export tests share."""

import pytest

from kbert.text import WordPieceTokenizer
from tests.text.text_test_case import TINY_VOCABULARY


@pytest.fixture(scope="module")
def tokenizer():
    """A WordPiece tokenizer over the tiny test vocabulary (`TINY_VOCABULARY`)."""
    return WordPieceTokenizer(TINY_VOCABULARY)
