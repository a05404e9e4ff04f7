import keras
import numpy as np
import pytest
import tensorflow as tf

from kbert.layers.relative_position_bias import RelativePositionBias, relative_position_buckets
from tests.layer_test_case import run_precision_test


def test_buckets_match_t5s_table():
    # Query 0 against keys 0…400 (positive distances) and the reverse, 32 buckets, max 128.
    forward = relative_position_buckets(1, 401)[0]
    backward = relative_position_buckets(401, 1)[:, 0]
    distances = [0, 1, 2, 7, 8, 15, 16, 50, 127, 128, 400]
    assert forward[distances].tolist() == [0, 17, 18, 23, 24, 25, 26, 29, 31, 31, 31]
    assert backward[distances].tolist() == [0, 1, 2, 7, 8, 9, 10, 13, 15, 15, 15]
    causal = relative_position_buckets(6, 6, bidirectional=False)
    assert np.all(causal[np.triu_indices(6, 1)] == 0)  # the future all in bucket 0
    assert causal[5].tolist() == [5, 4, 3, 2, 1, 0]
    assert causal.max() < 32


def test_the_bias_layer_gathers_one_value_per_head_and_bucket():
    layer = RelativePositionBias(num_heads=3, bidirectional=False, num_buckets=8, max_distance=16)
    full = np.asarray(layer(query_length=5, key_length=5))
    assert full.shape == (1, 3, 5, 5)
    table = np.asarray(layer.table)
    buckets = relative_position_buckets(5, 5, False, 8, 16)
    np.testing.assert_allclose(full[0], np.transpose(table[buckets], (2, 0, 1)))
    # Cached decoding: the bias of query 4 alone equals the last row of the full one.
    np.testing.assert_allclose(
        np.asarray(layer(query_length=1, key_length=5, query_offset=4))[0, :, 0], full[0, :, 4]
    )
    again = RelativePositionBias.from_config(layer.get_config())
    assert again.get_config() == layer.get_config()


def test_mixed_precision():
    # No tensor input (lengths only), so not the whole shared helper: its precision check.
    run_precision_test(
        RelativePositionBias,
        {"num_heads": 2, "num_buckets": 8, "max_distance": 16},
        None,
        {"query_length": 4, "key_length": 5},
    )


def test_the_table_trains():
    layer = RelativePositionBias(num_heads=2, num_buckets=8, max_distance=16)
    with tf.GradientTape() as tape:
        loss = keras.ops.sum(layer(query_length=4, key_length=4) ** 2)
    gradient = tape.gradient(loss, layer.table.value)
    assert np.count_nonzero(np.asarray(gradient)) > 0


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"num_heads": 0}, "num_heads must be an integer >= 1"),
        ({"num_heads": 2, "max_distance": 8}, "max_distance must be an integer above"),
    ],
)
def test_bad_arguments_are_named(arguments, message):
    with pytest.raises(ValueError, match=message):
        RelativePositionBias(**arguments)


@pytest.mark.parametrize("bidirectional", [True, False])
def test_tensor_buckets_equal_the_numpy_reference_for_lengths_known_only_at_run_time(bidirectional):
    """The layer's buckets are tensor ops (padded batches have no static length): at every
    distance up to 400 both ways they equal the reference, also traced with unknown lengths."""
    layer = RelativePositionBias(2, bidirectional, 32, 128)
    reference = relative_position_buckets(401, 401, bidirectional, 32, 128)
    np.testing.assert_array_equal(layer.buckets(401, 401), reference)
    np.testing.assert_array_equal(layer.buckets(1, 11, query_offset=10), reference[10:11, :11])
    traced = tf.function(
        lambda q, k: layer(query_length=q, key_length=k),
        input_signature=[tf.TensorSpec([], tf.int32)] * 2,
    )
    np.testing.assert_allclose(traced(7, 9), layer(query_length=7, key_length=9))
