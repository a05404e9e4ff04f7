"""Batches of variable-length examples padded to a few bucket lengths, not all to the longest.

Sentence pairs for NSP/SOP are often much shorter than the model's sequence length (BERT makes
10% of them short on purpose); padding every batch to the full length wastes most of the
encoder's work on padding. Grouping examples of similar length and padding each group to its
bucket's length keeps the shapes to a few (one compiled graph each) and the padding small.
"""

import tensorflow as tf

from kbert.checks import check_positive_int


def bucket_by_length(
    dataset,
    batch_size,
    bucket_lengths,
    padding_values=None,
    length_key="token_ids",
    drop_remainder=False,
):
    """Batches a dataset of variable-length dict examples by length bucket.

    Every example goes to the smallest bucket whose length is at least its own and is padded to
    exactly that length, so batch shapes are `(batch, bucket_length)` (the last batch of a
    bucket may be smaller unless `drop_remainder`). Batches come out in the order their bucket
    fills, so a dataset shuffled before bucketing yields buckets in random order.

    Args:
        dataset: `tf.data.Dataset` of dicts of 1-D tensors of one shared length (scalars, such as
            labels, pass through).
        batch_size: int. Examples per batch, in every bucket.
        bucket_lengths: list of int, increasing. The last one must be at least the longest
            example; a longer example raises `InvalidArgumentError` while iterating.
        padding_values: dict from key to the int it is padded with, default None (0 for every
            key). Keys not given are padded with 0.
        length_key: str, default "token_ids". The key whose length decides the bucket.
        drop_remainder: bool, default False. Drop each bucket's last partial batch.

    Returns:
        A `tf.data.Dataset` of dict batches.

    Example:
    >>> examples = tf.data.Dataset.from_tensor_slices(
    ...     {"token_ids": tf.ragged.constant([[5], [5, 6, 7], [8, 9]])})
    >>> batches = bucket_by_length(examples, batch_size=2, bucket_lengths=[2, 4])
    >>> [batch["token_ids"].numpy().tolist() for batch in batches]
    [[[5, 0], [8, 9]], [[5, 6, 7, 0]]]
    """
    batch_size = check_positive_int("batch_size", batch_size)
    lengths = list(bucket_lengths) if isinstance(bucket_lengths, (list, tuple)) else None
    if (
        not lengths
        or not all(isinstance(length, int) and length >= 1 for length in lengths)
        or any(later <= earlier for earlier, later in zip(lengths[:-1], lengths[1:], strict=True))
    ):
        raise ValueError(
            f"bucket_lengths must be a non-empty list of increasing positive ints; received "
            f"{bucket_lengths!r}"
        )
    spec = dataset.element_spec
    if not isinstance(spec, dict) or length_key not in spec:
        raise ValueError(
            f"dataset must yield dicts holding {length_key!r} (length_key); received element_spec "
            f"{spec}"
        )
    padding_values = dict(padding_values or {})
    unknown = sorted(set(padding_values) - set(spec))
    if unknown:
        raise ValueError(
            f"padding_values has keys {unknown} that the dataset does not yield; expected keys "
            f"among {sorted(spec)}"
        )
    padding_values = {
        key: tf.constant(padding_values.get(key, 0), dtype=value.dtype)
        for key, value in spec.items()
    }
    longest = lengths[-1]

    def checked(example):
        length = tf.shape(example[length_key])[0]
        tf.debugging.assert_less_equal(
            length,
            longest,
            message=f"an example is longer than the last of bucket_lengths ({longest})",
        )
        return example

    # tf.data buckets hold lengths in [boundary_{i-1}, boundary_i) and pad to boundary_i - 1:
    # boundaries one past each bucket length pad every bucket to exactly that length. The bucket
    # past the last boundary never receives an example (checked above).
    return dataset.map(checked).bucket_by_sequence_length(
        element_length_func=lambda example: tf.shape(example[length_key])[0],
        bucket_boundaries=[length + 1 for length in lengths],
        bucket_batch_sizes=[batch_size] * (len(lengths) + 1),
        padding_values=padding_values,
        pad_to_bucket_boundary=True,
        drop_remainder=drop_remainder,
    )
