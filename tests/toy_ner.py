"""The toy CoNLL-style NER data the token- and span-task tests share.

A WordPiece vocabulary of 19 pieces that splits "German", "boycott" and "Blackburn" into two
subwords each (so first-subword labelling, word offsets and span ends are all exercised), the
BIO tag names over three entity types, and the types themselves.
"""

from kbert.text import WordPieceTokenizer

VOCABULARY = [
    "[PAD]",
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "[MASK]",
    "eu",
    "rejects",
    "ger",
    "##man",
    "call",
    "to",
    "boy",
    "##cott",
    "british",
    "lamb",
    ".",
    "peter",
    "black",
    "##burn",
]
TAG_NAMES = ["O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-MISC", "I-MISC"]
TYPES = ["PER", "ORG", "MISC"]


def toy_tokenizer(extra_pieces=()):
    """A `WordPieceTokenizer` over `VOCABULARY` and then `extra_pieces` (ids after its 19)."""
    return WordPieceTokenizer([*VOCABULARY, *extra_pieces])


# A CoNLL sentence (two, run together) in the vocabulary's words, as the readers give them.
WORDS = [
    "EU",
    "rejects",
    "German",
    "call",
    "to",
    "boycott",
    "British",
    "lamb",
    ".",
    "Peter",
    "Blackburn",
]
