"""Fast tests of measure_pipeline_throughput."""

import pytest
import tensorflow as tf

from kbert.data import measure_pipeline_throughput


def test_counts_examples_per_second_over_repeated_epochs():
    batches = tf.data.Dataset.from_tensor_slices({"token_ids": tf.zeros([30, 4], tf.int32)})
    rate = measure_pipeline_throughput(batches.batch(8), steps=10, warmup_steps=2)
    assert rate > 0


def test_errors():
    with pytest.raises(ValueError, match="dataset yields no batches"):
        measure_pipeline_throughput(tf.data.Dataset.range(0).batch(2), steps=3)
    with pytest.raises(ValueError, match="steps must be an int of at least 1; received 0"):
        measure_pipeline_throughput(tf.data.Dataset.range(4).batch(2), steps=0)
    with pytest.raises(ValueError, match="dataset must be a tf.data.Dataset; received list"):
        measure_pipeline_throughput([1, 2], steps=1)
