"""Turning texts (or text pairs) and labels into batches for a classifier, with little padding."""

import numpy as np
import tensorflow as tf

from kbert.checks import check_positive_int
from kbert.data.length_bucketing import bucket_by_length

_KEYS = ("token_ids", "segment_ids", "padding_mask")


def default_bucket_lengths(sequence_length):
    """Bucket lengths 16, 24, 32, 48, 64, 96, 128, 192, … below `sequence_length`, then it.

    Steps of ×1.5 and ×4/3 keep padding under a third of a batch while limiting the number of
    distinct shapes that `fit` traces (one graph per bucket length).
    """
    lengths, base = [], 16
    while True:
        for length in (base, base * 3 // 2):
            if length >= sequence_length:
                return lengths + [sequence_length]
            lengths.append(length)
        base *= 2


def _check_inputs(texts, text_pairs, labels):
    if isinstance(texts, str):
        raise ValueError("texts must be a list of str, not one str; wrap it in a list")
    texts = list(texts)
    if not texts:
        raise ValueError("texts is empty: expected at least one text")
    empty = [i for i, text in enumerate(texts) if not isinstance(text, str) or not text.strip()]
    if empty:
        raise ValueError(
            f"texts must be non-empty str; text {empty[0]} is "
            f"{texts[empty[0]]!r} ({len(empty)} such)"
        )
    if text_pairs is not None:
        text_pairs = list(text_pairs)
        if len(text_pairs) != len(texts):
            raise ValueError(
                f"text_pairs has {len(text_pairs)} texts but texts has {len(texts)}; "
                "each text needs its pair"
            )
        empty = [
            i for i, text in enumerate(text_pairs) if not isinstance(text, str) or not text.strip()
        ]
        if empty:
            raise ValueError(
                f"text_pairs must be non-empty str; pair {empty[0]} is {text_pairs[empty[0]]!r}"
            )
    if labels is not None:
        labels = np.asarray(labels)
        if len(labels) != len(texts):
            raise ValueError(f"labels has {len(labels)} entries but texts has {len(texts)}")
    return texts, text_pairs, labels


def classification_dataset(
    preprocessor,
    texts,
    text_pairs=None,
    labels=None,
    batch_size=32,
    training=False,
    seed=0,
    bucket_lengths=None,
):
    """Batches texts for `fit`, `evaluate` or `predict`, padding each batch only as needed.

    Tokenizing and packing run in the `tf.data` pipeline (`preprocessor`, a
    `kbert.text.BertPreprocessor`). Padding every batch to `sequence_length` would waste most of
    the compute on short texts (TREC questions average about 13 tokens), so:

    - `training=True`: examples are reshuffled every epoch and grouped by length
      (`bucket_by_length`), each batch padded to its bucket's length. Batches come in random
      order; the number of batches per epoch varies slightly.
    - `training=False`: the order is kept (predictions line up with `labels`); each batch is
      cut to the smallest bucket length that holds its longest example.

    Args:
        preprocessor: `kbert.text.BertPreprocessor`.
        texts: list of str.
        text_pairs: list of str, default None. Second segments, for pair tasks.
        labels: array-like, default None. Integer class ids `(n,)` or 0/1 rows `(n, classes)`.
            None yields inputs only (for `predict`).
        batch_size: int, default 32.
        training: bool, default False.
        seed: int, default 0. Shuffling seed.
        bucket_lengths: list of int, default None (`default_bucket_lengths(sequence_length)`).

    Returns:
        A `tf.data.Dataset` of `(inputs, labels)` or `inputs` dicts.

    Example:
    >>> from kbert.text import BertPreprocessor, WordPieceTokenizer
    >>> vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b"]
    >>> preprocessor = BertPreprocessor(WordPieceTokenizer(vocabulary), sequence_length=64)
    >>> batches = classification_dataset(preprocessor, ["a b", "a"], labels=[1, 0])
    >>> x, y = next(iter(batches))
    >>> tuple(x["token_ids"].shape), y.numpy().tolist()
    ((2, 16), [1, 0])
    """
    texts, text_pairs, labels = _check_inputs(texts, text_pairs, labels)
    batch_size = check_positive_int("batch_size", batch_size)
    if hasattr(preprocessor, "aggregation"):  # a LongTextPreprocessor: one row per window
        if text_pairs is not None:
            raise ValueError(
                "long-input strategies are for single texts; this task has text "
                "pairs (use a BertPreprocessor, which cuts the longer text first)"
            )
        return long_text_dataset(preprocessor, texts, labels, batch_size, training, seed)[0]
    sequence_length = preprocessor.sequence_length
    lengths = list(bucket_lengths or default_bucket_lengths(sequence_length))
    if lengths[-1] < sequence_length:
        raise ValueError(
            f"the last bucket length must be at least the preprocessor's "
            f"sequence_length={sequence_length}; received {lengths}"
        )
    columns = {"texts": tf.constant(texts)}
    if text_pairs is not None:
        columns["text_pairs"] = tf.constant(text_pairs)
    if labels is not None:
        columns["labels"] = tf.constant(labels)
    dataset = tf.data.Dataset.from_tensor_slices(columns)

    def preprocess(batch):
        segments = (
            (batch["texts"], batch["text_pairs"]) if "text_pairs" in batch else batch["texts"]
        )
        x = preprocessor(segments)
        return {
            **{key: x[key] for key in _KEYS},
            **({"labels": batch["labels"]} if "labels" in batch else {}),
        }

    def split(example):
        x = {key: example[key] for key in _KEYS}
        return (x, example["labels"]) if "labels" in example else x

    if training:
        dataset = dataset.shuffle(len(texts), seed=seed, reshuffle_each_iteration=True)
        # Tokenize in chunks (the preprocessor is vectorized), then strip each row's padding so
        # bucketing sees true lengths.
        dataset = dataset.batch(256).map(preprocess, num_parallel_calls=tf.data.AUTOTUNE)
        dataset = dataset.unbatch().map(_strip_padding)
        dataset = bucket_by_length(dataset, batch_size, lengths)
        return dataset.map(split).prefetch(tf.data.AUTOTUNE)
    bucket_tensor = tf.constant(lengths, tf.int32)

    def trim(batch):
        longest = tf.reduce_max(tf.reduce_sum(tf.cast(batch["padding_mask"], tf.int32), axis=1))
        width = tf.gather(bucket_tensor, tf.searchsorted(bucket_tensor, [longest])[0])
        return {key: (value[:, :width] if key in _KEYS else value) for key, value in batch.items()}

    dataset = dataset.batch(batch_size).map(preprocess, num_parallel_calls=tf.data.AUTOTUNE)
    return dataset.map(trim).map(split).prefetch(tf.data.AUTOTUNE)


def long_text_dataset(
    preprocessor, texts, labels=None, batch_size=32, training=False, seed=0, chunk=256
):
    """Batches of a `LongTextPreprocessor`'s rows: each window is an example with its text's label.

    Texts are cut into rows once, eagerly, in chunks of `chunk` texts. For training the rows are
    reshuffled every epoch, so the windows of one review land in different batches (labelling
    every window with its document's label is the usual way to fine-tune on windows); each
    batch is cut to its longest row.

    Args:
        preprocessor: `kbert.text.LongTextPreprocessor`.
        texts: list of str.
        labels: array-like or None, default None. One class id (or 0/1 row) per text.
        batch_size: int, default 32.
        training: bool, default False.
        seed: int, default 0.
        chunk: int, default 256. Texts tokenized per call.

    Returns:
        `(dataset, packed)`: the `tf.data.Dataset` of `(inputs, labels)` (or inputs), and a dict
        of NumPy arrays with `text_index` `(rows,)`, `tokens` and `tokens_kept` `(texts,)`.
    """
    parts = {key: [] for key in (*_KEYS, "text_index", "tokens", "tokens_kept")}
    for start in range(0, len(texts), chunk):
        packed = preprocessor(tf.constant(texts[start : start + chunk]))
        for key in parts:
            value = packed[key].numpy()
            parts[key].append(value + start if key == "text_index" else value)
    packed = {key: np.concatenate(values) for key, values in parts.items()}
    x = {key: packed[key] for key in _KEYS}
    columns = x if labels is None else (x, np.asarray(labels)[packed["text_index"]])
    dataset = tf.data.Dataset.from_tensor_slices(columns)
    if training:
        dataset = dataset.shuffle(
            len(packed["text_index"]), seed=seed, reshuffle_each_iteration=True
        )

    def trim(x, *y):
        longest = tf.reduce_max(tf.reduce_sum(x["padding_mask"], axis=1))
        x = {key: value[:, :longest] for key, value in x.items()}
        return (x, *y) if y else x

    return dataset.batch(batch_size).map(trim).prefetch(tf.data.AUTOTUNE), packed


def _strip_padding(example):
    length = tf.reduce_sum(tf.cast(example["padding_mask"], tf.int32))
    return {key: (value[:length] if key in _KEYS else value) for key, value in example.items()}
