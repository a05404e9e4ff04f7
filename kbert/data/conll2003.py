"""CoNLL-2003 English named-entity recognition (Tjong Kim Sang & De Meulder 2003), IOB2 tags."""

import dataclasses

from kbert.data.data_dir import locate
from kbert.data.token_classification_features import word_offsets

CONLL2003_TAGS = ("O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC", "B-MISC", "I-MISC")
CONLL2003_ENTITY_TYPES = ("LOC", "MISC", "ORG", "PER")
_FILES = {"train": "train.txt", "validation": "valid.txt", "test": "test.txt"}
# The same commit the local copy was taken from (shared/data/conll2003/SOURCE.md).
_URL = (
    "https://raw.githubusercontent.com/kamalkraj/BERT-NER/"
    "e5be564156f194f1becb0d82aeaf6e762d9eb9ed/data/"
)
_DOCSTART = "-DOCSTART-"


@dataclasses.dataclass(frozen=True)
class TaggedSentence:
    """One sentence of a CoNLL-style file: words and their per-word tags.

    Args:
        words: tuple of str.
        tags: tuple of str, one NER tag per word ("B-PER", "O", ...).
        pos_tags: tuple of str, default (). Part-of-speech tags; empty for 2-column files.
        chunk_tags: tuple of str, default (). Syntactic chunk tags; empty for 2-column files.
        document: int, default 0. 0-based index of the `-DOCSTART-` document holding the
            sentence; 0 when the file has no document markers.

    Example:
    >>> sentence = TaggedSentence(("EU", "rejects"), ("B-ORG", "O"))
    >>> sentence.text(), sentence.word_offsets()
    ('EU rejects', [(0, 2), (3, 10)])
    """

    words: tuple
    tags: tuple
    pos_tags: tuple = ()
    chunk_tags: tuple = ()
    document: int = 0

    def text(self):
        """Returns the words joined with single spaces."""
        return " ".join(self.words)

    def word_offsets(self):
        """Returns the `(start, end)` character span of each word in `text()`."""
        return word_offsets(self.words)


def read_conll_file(path, tag_column=-1):
    """Reads a CoNLL-style file: one token per line, blank lines between sentences.

    Columns are whitespace-separated; the first is the word and `tag_column` the NER tag. Files
    with 4 columns (`word POS chunk NER`, as CoNLL-2003) also fill `pos_tags` and `chunk_tags`
    from columns 1 and 2. Every token line must have as many columns as the file's first token
    line. `-DOCSTART-` lines, of any width, start a new document and are not sentences.

    Args:
        path: str or Path.
        tag_column: int, default -1 (the last column). Which column holds the NER tag.

    Returns:
        A list of `TaggedSentence`.

    Raises:
        ValueError: a malformed line, named as `path:line`.

    Example:
    >>> sentences = read_conll_file("../shared/data/conll2003/test.txt")  # doctest: +SKIP
    >>> sentences[0].words[:4], sentences[0].tags[:4]  # doctest: +SKIP
    (('SOCCER', '-', 'JAPAN', 'GET'), ('O', 'O', 'B-LOC', 'O'))
    """
    sentences, rows = [], []
    columns = None  # set by the first token line
    document, started = 0, False  # started: a document marker or a sentence was seen

    def end_sentence():
        nonlocal started
        if rows:
            words, tags, pos_tags, chunk_tags = zip(*rows, strict=True)
            sentences.append(
                TaggedSentence(
                    words,
                    tags,
                    pos_tags if columns == 4 else (),
                    chunk_tags if columns == 4 else (),
                    document,
                )
            )
            rows.clear()
            started = True

    # Iterating a text file splits on \n, \r\n and \r only (str.splitlines would also split on
    # characters such as U+0085 inside a token).
    with open(path, encoding="utf-8-sig") as lines:
        for number, line in enumerate(lines, start=1):
            line = line.rstrip("\r\n")
            if not line.strip():
                end_sentence()
                continue
            fields = line.split()
            if fields[0] == _DOCSTART:  # "-DOCSTART- -X- -X- O" or "-DOCSTART-": any width
                end_sentence()
                if started:
                    document += 1
                started = True
                continue
            if line[0].isspace():
                raise ValueError(
                    f"{path}:{number}: expected a word in the first column; found "
                    f"leading whitespace in {line[:60]!r}"
                )
            if columns is None:
                columns = len(fields)
                if columns < 2 or tag_column == 0 or not -columns < tag_column < columns:
                    raise ValueError(
                        f"{path}:{number}: expected a word and a tag in column "
                        f"{tag_column}; found {columns} column(s) in {line[:60]!r}"
                    )
            if len(fields) != columns:
                raise ValueError(
                    f"{path}:{number}: expected {columns} columns, as on the "
                    f"file's first token line; found {len(fields)} in "
                    f"{line[:60]!r}"
                )
            pos_tag, chunk_tag = (fields[1], fields[2]) if columns == 4 else ("", "")
            rows.append((fields[0], fields[tag_column], pos_tag, chunk_tag))
    end_sentence()
    return sentences


def read_conll2003(split="train", data_dir=None, max_sentences=None):
    """Reads a CoNLL-2003 split as tagged sentences, checking every tag.

    The files are the IOB2 version (B- starts every entity) of eng.train / eng.testa /
    eng.testb. Without a local copy (`<data_dir>/conll2003/`), the split is downloaded from the
    kamalkraj/BERT-NER repository the local copy came from.

    Args:
        split: str, default "train". "train" (14,041 sentences), "validation" (3,250) or "test"
            (3,453).
        data_dir: str or Path, default None (`KBERT_DATA_DIR`, then ../shared/data).
        max_sentences: int, default None. Keep only the first `max_sentences` sentences.

    Returns:
        A list of `TaggedSentence`, with tags from `CONLL2003_TAGS`.

    Example:
    >>> sentences = read_conll2003("train")  # doctest: +SKIP
    >>> len(sentences), sentences[0].text()  # doctest: +SKIP
    (14041, 'EU rejects German call to boycott British lamb .')
    """
    if split not in _FILES:
        raise ValueError(f"CoNLL-2003 split must be one of {tuple(_FILES)}; received {split!r}")
    if max_sentences is not None and max_sentences < 1:
        raise ValueError(f"max_sentences must be None or at least 1; received {max_sentences}")
    path = locate(f"conll2003/{_FILES[split]}", _URL + _FILES[split], data_dir)
    sentences = read_conll_file(path)
    try:
        check_tags(sentences, CONLL2003_TAGS)
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from None
    return sentences if max_sentences is None else sentences[:max_sentences]


def check_tags(sentences, tag_set):
    """Checks that every tag of every sentence belongs to `tag_set`.

    Args:
        sentences: iterable of `TaggedSentence`.
        tag_set: collection of str, e.g. `CONLL2003_TAGS`.

    Raises:
        ValueError: naming the first sentence index, word and tag outside `tag_set`.

    Example:
    >>> check_tags([TaggedSentence(("Paris",), ("B-LOC",))], CONLL2003_TAGS)
    """
    allowed = set(tag_set)
    for index, sentence in enumerate(sentences):
        for word, tag in zip(sentence.words, sentence.tags, strict=True):
            if tag not in allowed:
                raise ValueError(
                    f"sentence {index}: word {word!r} has tag {tag!r}; expected one "
                    f"of {tuple(tag_set)}"
                )
