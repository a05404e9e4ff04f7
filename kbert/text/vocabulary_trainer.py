"""Learns a WordPiece vocabulary from raw text, seeing words exactly as `WordPieceTokenizer` does.

Text is normalized and pre-tokenized by the same graph code as the tokenizer
(`kbert/text/_bert_text.py`), words are counted, and tf-text's pure-Python WordPiece learner
(`tensorflow_text.tools.wordpiece_vocab.wordpiece_tokenizer_learner_lib`, the algorithm behind
the BERT vocabulary tutorials) picks the subwords. Every character of the counted words is kept as
a token and as a suffix token, so a tokenizer built on the result never produces `[UNK]` for a
word of the training text (words longer than `max_token_length` and characters outside the
`max_unique_characters` most frequent are the exceptions).
"""

import collections
import os

import tensorflow as tf
from tensorflow_text.tools.wordpiece_vocab import wordpiece_tokenizer_learner_lib as learner

from kbert.checks import check_positive_int
from kbert.run_inputs import note_input
from kbert.text import _bert_text
from kbert.text.wordpiece_tokenizer import DEFAULT_SPECIAL_TOKENS, WordPieceTokenizer


def _text_dataset(data):
    """Turns file paths or a dataset of strings into a dataset of string scalars."""
    if isinstance(data, (str, os.PathLike)):
        data = [data]
    if isinstance(data, (list, tuple)):
        paths = [os.fspath(path) for path in data]
        if not paths:
            raise ValueError("data must name at least one text file; received an empty list")
        missing = [path for path in paths if not tf.io.gfile.exists(path)]
        if missing:
            raise ValueError(f"data files do not exist: {missing}")
        for path in paths:  # a recorded run pins them (`kbert.run_inputs`): tf.data is not `open`
            note_input(path)
        return tf.data.TextLineDataset(paths)
    if isinstance(data, tf.data.Dataset):
        spec = data.element_spec
        if not isinstance(spec, tf.TensorSpec) or spec.dtype != tf.string:
            raise ValueError(
                "a data Dataset must yield string tensors (one text each, or batches of texts); "
                f"received element_spec {spec}"
            )
        return data.map(lambda texts: tf.reshape(texts, [-1])).unbatch()
    raise ValueError(
        "data must be a list of text file paths or a tf.data.Dataset of strings; received "
        f"{type(data).__name__}"
    )


def count_words(
    data, lowercase=True, strip_accents=None, split_chinese_characters=True, batch_size=1024
):
    """Counts the normalized, pre-tokenized words of a corpus.

    Args:
        data: list of str paths of plain-text files (one document or line per line), or a
            `tf.data.Dataset` of strings (scalars or batches).
        lowercase: bool, default True.
        strip_accents: bool or None, default None (follow `lowercase`).
        split_chinese_characters: bool, default True.
        batch_size: int, default 1024. Lines normalized per graph call.

    Returns:
        A `collections.Counter` from word (str) to count.

    Example:
    >>> count_words(tf.data.Dataset.from_tensor_slices(["A cat, a hat."]))["a"]
    2
    """
    if strip_accents is None:
        strip_accents = lowercase
    table = _bert_text.lowercase_table()

    def words_of(texts):
        return _bert_text.pre_tokenize(
            texts,
            table,
            lowercase=lowercase,
            strip_accents=strip_accents,
            split_chinese_characters=split_chinese_characters,
        )["words"].flat_values

    dataset = _text_dataset(data).batch(batch_size).map(words_of)
    counts = collections.Counter()
    for words in dataset.as_numpy_iterator():
        counts.update(words.tolist())
    return collections.Counter({word.decode("utf-8"): n for word, n in counts.items()})


def train_wordpiece_vocabulary(
    data,
    vocabulary_size,
    special_tokens=DEFAULT_SPECIAL_TOKENS,
    lowercase=True,
    strip_accents=None,
    split_chinese_characters=True,
    suffix_indicator="##",
    max_token_length=50,
    max_unique_characters=1000,
    batch_size=1024,
):
    """Learns a WordPiece vocabulary for `WordPieceTokenizer` from raw text.

    Args:
        data: list of str paths of plain-text files (one document or line per line), or a
            `tf.data.Dataset` of strings.
        vocabulary_size: int. The most tokens the vocabulary may have, special tokens included.
            The learner searches a frequency threshold, so the result is usually a little smaller,
            and much smaller for a corpus with few distinct words.
        special_tokens: sequence of str, default ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]").
            Put first, in this order (so their ids are 0, 1, ...).
        lowercase: bool, default True. As in `WordPieceTokenizer`; use the same settings there.
        strip_accents: bool or None, default None (follow `lowercase`).
        split_chinese_characters: bool, default True.
        suffix_indicator: str, default "##".
        max_token_length: int, default 50. Longer words are not counted.
        max_unique_characters: int, default 1000. Only the most frequent characters make the
            alphabet; words with other characters are not counted.
        batch_size: int, default 1024. Lines normalized per graph call.

    Returns:
        list of str: the special tokens, then the alphabet and the learned subwords.

    Example:
    >>> corpus = tf.data.Dataset.from_tensor_slices(["the cat sat", "the hat"])
    >>> vocabulary = train_wordpiece_vocabulary(corpus, vocabulary_size=40)
    >>> vocabulary[:5]
    ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]']
    """
    special_tokens = list(dict.fromkeys(special_tokens))
    vocabulary_size = check_positive_int("vocabulary_size", vocabulary_size)
    counts = count_words(data, lowercase, strip_accents, split_chinese_characters, batch_size)
    if not counts:
        raise ValueError(
            "data holds no words to learn from (empty files or dataset, or only whitespace)"
        )

    # The alphabet the learner will keep: the most frequent characters of the counted words.
    character_counts = collections.Counter()
    for word, count in counts.items():
        if len(word) <= max_token_length and word not in special_tokens:
            for character in word:
                character_counts[character] += count
    characters = sorted(character_counts, key=lambda c: (-character_counts[c], c))[
        :max_unique_characters
    ]
    alphabet = set(characters) | {suffix_indicator + c for c in characters}
    needed = len(special_tokens) + len(alphabet)
    if vocabulary_size < needed:
        raise ValueError(
            f"vocabulary_size must be at least {needed}: {len(special_tokens)} special tokens "
            f"plus an alphabet of {len(alphabet)} tokens ({len(characters)} characters, each "
            f"also as a suffix with {suffix_indicator!r}); received {vocabulary_size}"
        )

    learned = learner.learn(
        counts,
        vocab_size=vocabulary_size,
        reserved_tokens=special_tokens,
        upper_thresh=None,
        lower_thresh=1,  # small corpora: allow subwords seen only once
        max_token_length=max_token_length,
        max_unique_chars=max_unique_characters,
        include_joiner_token=True,
        joiner=suffix_indicator,
    )
    # The learner can overshoot when even its lowest threshold gives too many subwords; drop the
    # least frequent learned subwords (they come last), never the alphabet.
    tokens = [t for t in dict.fromkeys(learned) if t not in special_tokens]
    room = vocabulary_size - len(special_tokens) - sum(1 for t in tokens if t in alphabet)
    kept = []
    for token in tokens:
        if token in alphabet:
            kept.append(token)
        elif room > 0:
            kept.append(token)
            room -= 1
    return special_tokens + kept


def write_vocabulary(vocabulary, path):
    """Writes a vocabulary as `vocab.txt`: one token per line, UTF-8, the line number is the id.

    Args:
        vocabulary: list of str.
        path: str or `os.PathLike`.

    Returns:
        str, the path written.

    Example:
    >>> write_vocabulary(["[PAD]", "[UNK]", "a"], "/tmp/vocab.txt")
    '/tmp/vocab.txt'
    """
    bad = [t for t in vocabulary if not t or "\n" in t or "\r" in t or t != t.rstrip()]
    if bad:
        raise ValueError(
            "tokens must be non-empty, without line breaks or trailing whitespace (they would "
            f"not read back); received {bad[:10]}"
        )
    path = os.fspath(path)
    with tf.io.gfile.GFile(path, "wb") as file:
        file.write(("\n".join(vocabulary) + "\n").encode("utf-8"))
    return path


def corpus_tokenizer(documents, vocabulary_size, path, extra_tokens=()):
    """A WordPiece tokenizer trained on a corpus once and kept in `path` (a `vocab.txt`).

    The labs' pretraining corpora are documents (a str, or a list of paragraphs); the trainer
    reads their non-empty lines. When `path` exists its vocabulary is reused as it is, so a
    resumed run tokenizes exactly as the run it continues.

    Args:
        documents: list of str or of lists of str (paragraphs).
        vocabulary_size: int. Passed to `train_wordpiece_vocabulary`.
        path: str or `os.PathLike`. Where the vocabulary is written (or read).
        extra_tokens: sequence of str, default (). Appended after the trained tokens (T5's
            sentinels `<extra_id_N>`, say).

    Returns:
        `kbert.text.WordPieceTokenizer`.
    """
    if not os.path.exists(path):
        paragraphs = [p for doc in documents for p in ([doc] if isinstance(doc, str) else doc)]
        lines = [line for paragraph in paragraphs for line in paragraph.split("\n") if line]
        vocabulary = train_wordpiece_vocabulary(
            tf.data.Dataset.from_tensor_slices(lines), vocabulary_size
        )
        write_vocabulary(list(vocabulary) + list(extra_tokens), path)
    return WordPieceTokenizer(os.fspath(path))
