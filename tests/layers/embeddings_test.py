import keras
import numpy as np
import pytest
import tensorflow as tf

from kbert.layers import Embeddings
from tests.layer_test_case import run_layer_test

IDS = np.array([[2, 7, 3, 0], [2, 9, 9, 3]], "int32")
SEGMENTS = np.array([[0, 0, 0, 0], [0, 0, 1, 1]], "int32")


def test_layer_end_to_end():
    run_layer_test(
        Embeddings,
        {"vocabulary_size": 50, "hidden_dim": 16, "max_sequence_length": 8},
        IDS,
        {"segment_ids": SEGMENTS},
        expected_output_shape=(2, 4, 16),
        expected_num_trainable_weights=5,
    )


def test_factorized_embeddings_project_to_hidden_width():
    run_layer_test(
        Embeddings,
        {"vocabulary_size": 50, "hidden_dim": 16, "max_sequence_length": 8, "embedding_dim": 4},
        IDS,
        {"segment_ids": SEGMENTS},
        expected_output_shape=(2, 4, 16),
        expected_num_trainable_weights=7,
    )
    layer = Embeddings(50, 16, 8, embedding_dim=4)
    layer(IDS)
    assert tuple(layer.token_embedding.embeddings.shape) == (50, 4)


def test_sum_of_three_tables_without_norm():
    layer = Embeddings(50, 16, 8, normalize=False, dropout=0.0)
    out = np.array(layer(IDS, SEGMENTS))
    expected = (
        np.array(layer.token_embedding.embeddings)[IDS]
        + np.array(layer.position_embedding.embeddings)[:4][None]
        + np.array(layer.segment_embedding.embeddings)[SEGMENTS]
    )
    np.testing.assert_allclose(out, expected, atol=1e-6)


def test_no_segment_table_for_gpt_style_models():
    layer = Embeddings(50, 16, 8, num_segments=0)
    layer(IDS)
    assert layer.segment_embedding is None


def test_sequence_longer_than_position_table_is_an_error():
    layer = Embeddings(50, 16, max_sequence_length=4)
    with pytest.raises(ValueError, match="sequence length 6, above .*max_sequence_length=4"):
        layer(np.zeros((1, 6), "int32"))


def test_dynamic_sequence_longer_than_position_table_fails_when_run():
    layer = Embeddings(50, 16, max_sequence_length=4)
    function = tf.function(layer, input_signature=[tf.TensorSpec((None, None), tf.int32)])
    with pytest.raises(tf.errors.InvalidArgumentError, match="max_sequence_length=4"):
        function(tf.zeros((1, 6), tf.int32))


def test_shared_tables_are_read_not_copied_and_must_match():
    owner = Embeddings(vocabulary_size=50, hidden_dim=16, max_sequence_length=8)
    owner.build((None, None))
    narrow = Embeddings(
        vocabulary_size=50,
        hidden_dim=8,
        max_sequence_length=8,
        embedding_dim=16,
        shared_tables=owner,
    )
    ids = keras.ops.array([[2, 7, 3]])
    assert tuple(narrow(ids).shape) == (1, 3, 8)
    assert narrow.token_embedding is owner.token_embedding
    owned = {id(v) for v in owner.weights}
    assert {id(v) for v in narrow.weights} - owned == {
        id(v) for v in narrow.norm.weights + narrow.projection.weights
    }
    with pytest.raises(ValueError, match=r"must match .* = \(50, 8, 8\); received a layer with"):
        Embeddings(vocabulary_size=50, hidden_dim=8, max_sequence_length=8, shared_tables=owner)
    with pytest.raises(ValueError, match="shared_tables must have num_segments=3"):
        Embeddings(50, 16, 8, num_segments=3, shared_tables=owner)
    with pytest.raises(ValueError, match="must be a kbert Embeddings layer; received Dense"):
        Embeddings(50, 16, 8, shared_tables=keras.layers.Dense(2))
