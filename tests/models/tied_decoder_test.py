import numpy as np
import pytest
import tensorflow as tf

from kbert.models import TiedDecoder
from tests.layer_test_case import run_layer_test

RNG = np.random.default_rng(0)
HIDDEN = RNG.normal(size=(2, 3, 4)).astype("float32")
TABLE = RNG.normal(size=(5, 4)).astype("float32")


def test_layer_end_to_end():
    # No fit step: the table is an input with 5 rows, which fit would split into batches.
    layer = run_layer_test(
        TiedDecoder,
        {"vocabulary_size": 5},
        HIDDEN,
        call_kwargs={"embedding_table": TABLE},
        expected_output_shape=(2, 3, 5),
        expected_num_trainable_weights=1,
        run_fit=False,
    )
    assert tuple(layer.bias.shape) == (5,)


def test_logits_are_hidden_times_table_transposed_and_gradients_reach_the_table():
    layer = TiedDecoder(5, bias_initializer="ones")
    table = tf.Variable(TABLE)
    with tf.GradientTape() as tape:
        logits = layer(HIDDEN, embedding_table=table)
        loss = tf.reduce_sum(logits[..., 2])
    np.testing.assert_allclose(logits.numpy(), HIDDEN @ TABLE.T + 1.0, atol=1e-5)
    gradient = tape.gradient(loss, table).numpy()
    np.testing.assert_allclose(gradient[2], HIDDEN.sum(axis=(0, 1)), atol=1e-5)
    assert not gradient[[0, 1, 3, 4]].any()


def test_a_table_of_the_wrong_shape_is_an_error():
    layer = TiedDecoder(5)
    with pytest.raises(
        ValueError,
        match=r"embedding_table must have shape \(vocabulary_size=5, "
        r"width=4\) to match hidden; received \(5, 3\)",
    ):
        layer(HIDDEN, embedding_table=TABLE[:, :3])
