"""Fast tests of bucket_by_length: each example lands in the smallest bucket that holds it."""

import pytest
import tensorflow as tf

from kbert.data import bucket_by_length


def examples(lengths):
    return tf.data.Dataset.from_tensor_slices(
        {
            "token_ids": tf.ragged.constant([[7] * n for n in lengths], dtype=tf.int32),
            "word_ids": tf.ragged.constant([list(range(n)) for n in lengths], dtype=tf.int32),
            "label": tf.range(len(lengths), dtype=tf.int32),
        }
    )


def test_examples_are_padded_to_their_bucket_length():
    lengths = [1, 9, 4, 5, 2, 8, 3]
    batches = list(
        bucket_by_length(examples(lengths), 2, [4, 6, 9], padding_values={"word_ids": -1})
    )
    seen = []
    for batch in batches:
        width = batch["token_ids"].shape[1]
        assert width in (4, 6, 9)
        for row, label in enumerate(batch["label"].numpy()):
            length = lengths[label]
            seen.append(label)
            assert length <= width and not any(length <= b for b in (4, 6, 9) if b < width)
            assert batch["token_ids"].numpy()[row].tolist() == [7] * length + [0] * (width - length)
            assert batch["word_ids"].numpy()[row, length:].tolist() == [-1] * (width - length)
    assert sorted(seen) == list(range(len(lengths)))
    assert max(len(batch["label"]) for batch in batches) == 2


def test_drop_remainder_keeps_full_batches_only():
    batches = list(bucket_by_length(examples([1, 2, 3, 6]), 2, [3, 6], drop_remainder=True))
    assert [b["token_ids"].shape.as_list() for b in batches] == [[2, 3]]


def test_too_long_example_and_bad_arguments():
    with pytest.raises(tf.errors.InvalidArgumentError, match="longer than the last of bucket"):
        list(bucket_by_length(examples([5]), 2, [4]))
    with pytest.raises(ValueError, match="bucket_lengths must be a non-empty list of increasing"):
        bucket_by_length(examples([1]), 2, [4, 4])
    with pytest.raises(ValueError, match="batch_size must be a positive int; received 0"):
        bucket_by_length(examples([1]), 0, [4])
    with pytest.raises(ValueError, match="padding_values has keys \\['mask'\\]"):
        bucket_by_length(examples([1]), 2, [4], padding_values={"mask": 0})
    with pytest.raises(ValueError, match="dataset must yield dicts holding 'ids'"):
        bucket_by_length(examples([1]), 2, [4], length_key="ids")
