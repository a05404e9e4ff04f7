"""A tokenizer trained on a pretraining corpus (WordPiece, BPE, byte-level BPE, unigram) or read
from its file.

Pretraining from scratch needs a vocabulary of the corpus itself: lab01 and `kbert pretrain`
train one of the textbook's four subword tokenizers on the training documents once and keep it in
a file of the run, so a resumed run tokenizes exactly as the run it continues. WordPiece (BERT's)
writes `vocab.txt`; BPE over characters, byte-level BPE (GPT-2's) and SentencePiece's unigram
write their JSON configuration as `tokenizer.json`, with BERT's role tokens ([PAD], [CLS], [SEP],
[MASK]) appended by `with_roles()` so the pretraining pipelines can insert them.
"""

import json
import os
from pathlib import Path

from kbert.text.byte_pair_tokenizer import BytePairTokenizer
from kbert.text.unigram_tokenizer import UnigramTokenizer
from kbert.text.vocabulary_trainer import corpus_tokenizer
from kbert.text.wordpiece_tokenizer import WordPieceTokenizer

TOKENIZER_KINDS = ("wordpiece", "bpe", "byte_level_bpe", "unigram")
VOCABULARY_FILE = "vocab.txt"  # WordPiece
TOKENIZER_FILE = "tokenizer.json"  # BPE, byte-level BPE and unigram (their own JSON)
ROLE_TOKENS = 4  # [PAD], [CLS], [SEP], [MASK], added on top of a trained BPE or unigram model


def _lines(documents):
    texts = (
        document if isinstance(document, str) else "\n".join(document) for document in documents
    )
    return [line for text in texts for line in text.split("\n") if line]


def train_corpus_tokenizer(documents, kind, vocabulary_size, directory, extra_tokens=()):
    """Trains a tokenizer of `kind` on `documents` once; later calls reuse its file.

    Args:
        documents: list of documents, each a str or a list of str paragraphs; the trainers read
            their non-empty lines.
        kind: str. One of `TOKENIZER_KINDS`.
        vocabulary_size: int. Tokens in the vocabulary, role tokens included.
        directory: str or Path. Where the file goes (`vocab.txt` or `tokenizer.json`); an
            existing file there is read instead of training again.
        extra_tokens: sequence of str, default (). Appended to a WordPiece vocabulary (T5's
            sentinels, say); the other kinds take none.

    Returns:
        `(tokenizer, path)`: the tokenizer and its file.

    Raises:
        ValueError: an unknown kind, or extra tokens for a kind that takes none.

    Example:
    >>> import tempfile
    >>> tokenizer, path = train_corpus_tokenizer(["a b a c"] * 5, "wordpiece", 30,
    ...                                          tempfile.mkdtemp())
    >>> path.name, tokenizer.token_to_id("[MASK]") is not None
    ('vocab.txt', True)
    """
    if kind not in TOKENIZER_KINDS:
        raise ValueError(f"kind must be one of {TOKENIZER_KINDS}; received {kind!r}")
    directory = Path(directory)
    if kind == "wordpiece":
        path = directory / VOCABULARY_FILE
        return corpus_tokenizer(documents, vocabulary_size, path, extra_tokens), path
    if extra_tokens:
        raise ValueError(
            f"extra_tokens are added to WordPiece vocabularies only; received {len(extra_tokens)} "
            f"for kind {kind!r}"
        )
    tokenizer_class = UnigramTokenizer if kind == "unigram" else BytePairTokenizer
    path = directory / TOKENIZER_FILE
    if not path.exists():
        lines = _lines(documents)
        size = vocabulary_size - ROLE_TOKENS
        if kind == "unigram":
            trained = UnigramTokenizer.train(lines, size)
        else:
            trained = BytePairTokenizer.train(lines, size, byte_level=kind == "byte_level_bpe")
        trained.with_roles().save(path)
    return tokenizer_class.load(path), path


def load_tokenizer_file(path):
    """The tokenizer of a file `train_corpus_tokenizer` writes: a WordPiece `vocab.txt` (any
    name not ending in .json) or a BPE or unigram `tokenizer.json` (kbert's JSON configuration).

    Args:
        path: str or Path.

    Returns:
        `WordPieceTokenizer`, `BytePairTokenizer` or `UnigramTokenizer`.

    Raises:
        ValueError: naming the file: missing, unreadable, or JSON of neither kind.
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"tokenizer file {str(path)!r} does not exist; expected a file")
    if path.suffix.lower() != ".json":
        return WordPieceTokenizer(os.fspath(path))
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise ValueError(f"tokenizer file {str(path)!r} is not valid JSON ({error})") from None
    if not isinstance(config, dict) or "vocabulary" not in config and "pieces" not in config:
        raise ValueError(
            f"tokenizer file {str(path)!r} is no kbert tokenizer JSON; expected the file a "
            "BytePairTokenizer or UnigramTokenizer saves (or a WordPiece vocab.txt)"
        )
    tokenizer_class = BytePairTokenizer if "merges" in config else UnigramTokenizer
    return tokenizer_class.from_config(config)


def tokenizer_file_name(tokenizer):
    """`vocab.txt` for a WordPiece tokenizer, `tokenizer.json` for the others."""
    return VOCABULARY_FILE if isinstance(tokenizer, WordPieceTokenizer) else TOKENIZER_FILE


__all__ = [
    "TOKENIZER_KINDS",
    "load_tokenizer_file",
    "tokenizer_file_name",
    "train_corpus_tokenizer",
]
