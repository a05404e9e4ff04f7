"""Plain-text and JSONL pretraining corpora, read as lists of documents.

A document is a list of str, its paragraphs; the pretraining pipelines split paragraphs into
sentences where they need sentences. Two layouts are common:

- plain text in BERT's `create_pretraining_data` layout: one sentence (or paragraph) per line and
  a blank line between documents, or simply one document per line;
- JSONL, one JSON object per line holding a document's text in one field (Hugging Face dataset
  exports, `pretrain_corpus/*.jsonl` with its `"text"` field); paragraphs are the blocks of the
  text between blank lines, with the text's own line breaks kept inside them.
"""

import json
import os
import re
from pathlib import Path

from kbert.checks import check_int
from kbert.data.data_dir import locate
from kbert.data.wikitext import read_wikitext

FORMATS = ("auto", "text", "jsonl")
DOCUMENT_SEPARATORS = ("blank_line", "line")
_JSONL_SUFFIXES = (".jsonl", ".ndjson")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t\r\f\v]*\n")


def _lines(path):
    """Yields (line number, line without its end) of a UTF-8 file, naming the line that fails."""
    with open(path, "rb") as file:
        # Binary lines split at "\n" only; str.splitlines() would also split at U+2028 and
        # U+0085, which JSON strings and prose may hold.
        for number, raw in enumerate(file, start=1):
            try:
                yield number, raw.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError as error:
                raise ValueError(f"{path}:{number}: not valid UTF-8 ({error.reason})") from None


def _paragraphs(text):
    paragraphs = (paragraph.strip() for paragraph in _PARAGRAPH_BREAK.split(text))
    return [paragraph for paragraph in paragraphs if paragraph]


def _read_jsonl(path, text_field):
    documents = []
    for number, line in _lines(path):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise ValueError(
                f"{path}:{number}: malformed JSON ({error.msg} at column {error.colno}); "
                f"found {line[:60]!r}"
            ) from None
        if not isinstance(record, dict):
            raise ValueError(
                f"{path}:{number}: expected a JSON object per line; found a {type(record).__name__}"
            )
        if text_field not in record:
            raise ValueError(
                f"{path}:{number}: expected the text field {text_field!r}; found the fields "
                f"{sorted(record)[:10]} (pass text_field=)"
            )
        if not isinstance(record[text_field], str):
            raise ValueError(
                f"{path}:{number}: expected field {text_field!r} to be a string; found "
                f"{type(record[text_field]).__name__}"
            )
        paragraphs = _paragraphs(record[text_field])
        if paragraphs:
            documents.append(paragraphs)
    return documents


def _read_text(path, document_separator):
    documents = []
    current = []
    for _, line in _lines(path):
        if not line.strip():
            if current:
                documents.append(current)
            current = []
            continue
        if document_separator == "line":
            documents.append([line.strip()])
        else:
            current.append(line.strip())
    if current:
        documents.append(current)
    return documents


def read_text_corpus(paths, format="auto", text_field="text", document_separator="blank_line"):
    """Reads plain-text or JSONL files into a list of documents.

    Empty documents (a blank `text_field`, runs of blank lines) are dropped, so a JSONL file
    can give fewer documents than lines.

    Args:
        paths: str or Path, or a list of them. Files are read in the given order.
        format: str, default "auto". "jsonl" (one JSON object per line), "text", or "auto":
            "jsonl" for names ending in .jsonl or .ndjson, "text" otherwise.
        text_field: str, default "text". The JSONL field holding the document's text.
        document_separator: str, default "blank_line". For text files: "blank_line" (BERT's
            layout: a document is a run of non-blank lines, each line one paragraph or
            sentence) or "line" (every non-blank line is a document of one paragraph).

    Returns:
        list of documents, each a non-empty list of non-empty, stripped str paragraphs (for
        JSONL, the text's blank-line separated blocks; for text files, its lines).

    Example:
    >>> books = read_text_corpus("../shared/data/pretrain_corpus/valid.jsonl")  # doctest: +SKIP
    >>> len(books), books[3][0]  # doctest: +SKIP
    (4, 'THE SEA-WOLF')
    """
    if format not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}; received {format!r}")
    if document_separator not in DOCUMENT_SEPARATORS:
        raise ValueError(
            f"document_separator must be one of {DOCUMENT_SEPARATORS}; received "
            f"{document_separator!r}"
        )
    if not isinstance(text_field, str) or not text_field:
        raise ValueError(f"text_field must be a non-empty str; received {text_field!r}")
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    if not isinstance(paths, (list, tuple)) or not paths:
        raise ValueError(f"paths must name at least one file; received {paths!r}")
    paths = [Path(path) for path in paths]
    missing = [str(path) for path in paths if not path.is_file()]
    if missing:
        raise ValueError(f"paths must be existing files; these are not: {missing}")
    documents = []
    for path in paths:
        file_format = format
        if format == "auto":
            file_format = "jsonl" if path.suffix.lower() in _JSONL_SUFFIXES else "text"
        if file_format == "jsonl":
            documents.extend(_read_jsonl(path, text_field))
        else:
            documents.extend(_read_text(path, document_separator))
    if not documents:
        raise ValueError(
            f"paths hold no documents (only blank lines or empty texts): {[str(p) for p in paths]}"
        )
    return documents


def read_pretraining_books(split, data_dir=None, max_books=0):
    """The course's pretraining corpus: Gutenberg books, one document (a list of paragraphs) each.

    `pretrain_corpus/{train,valid}.jsonl` under the data directory (`KBERT_DATA_DIR`): 49
    training books, 4 held-out books by other authors (see its SOURCE.md). The labs that
    pretrain (lab01, lab18b, lab19) and `benchmarks/text_to_text_start` read it here.

    Args:
        split: str. "train" or "valid".
        data_dir: str, Path or None. See `kbert.data.data_dir`.
        max_books: int, default 0. Keep the first `max_books` books (0: all; smoke runs).

    Returns:
        list of documents, as `read_text_corpus` returns them.
    """
    if split not in ("train", "valid"):
        raise ValueError(f"split must be 'train' or 'valid'; received {split!r}")
    max_books = check_int("max_books", max_books, minimum=0, expected="an int >= 0")
    books = read_text_corpus(
        [locate(f"pretrain_corpus/{split}.jsonl", None, data_dir)],
        format="jsonl",
        text_field="text",
    )
    return books[:max_books] if max_books else books


# The corpora lab01 and `kbert pretrain --corpus-name` read by name (training and held-out splits).
NAMED_CORPORA = ("pretrain_corpus", "wikitext2", "wikitext103")


def read_named_corpus(name, data_dir=None, max_documents=0):
    """A named pretraining corpus as `(train, valid)` lists of documents.

    "pretrain_corpus" is the course's books (`read_pretraining_books`; the held-out books are by
    other authors); "wikitext2" and "wikitext103" are WikiText (`kbert.data.read_wikitext`).
    WikiText-2's train split is not in the course data, so it trains on valid and holds out test;
    WikiText-103 trains on train.

    Args:
        name: str. One of `NAMED_CORPORA`.
        data_dir: str, Path or None. See `kbert.data.data_dir`.
        max_documents: int, default 0. Keep the first `max_documents` training documents and a
            quarter as many held-out ones, at least one (0: all; smoke runs).

    Returns:
        `(train, valid)`, each a list of documents as `read_text_corpus` returns them.
    """
    if name not in NAMED_CORPORA:
        raise ValueError(f"corpus name must be one of {NAMED_CORPORA}; received {name!r}")
    max_documents = check_int("max_documents", max_documents, minimum=0, expected="an int >= 0")
    if name == "pretrain_corpus":
        train = read_pretraining_books("train", data_dir)
        valid = read_pretraining_books("valid", data_dir)
    else:
        variant = {"wikitext2": "wikitext-2", "wikitext103": "wikitext-103"}[name]
        train_split = "valid" if variant == "wikitext-2" else "train"
        train = read_wikitext(train_split, variant=variant, data_dir=data_dir)
        valid = read_wikitext("test", variant=variant, data_dir=data_dir)
    if max_documents:
        train, valid = train[:max_documents], valid[: max(1, max_documents // 4)]
    return train, valid
