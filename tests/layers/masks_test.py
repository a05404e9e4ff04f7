import numpy as np
import pytest

from kbert.layers.masks import MASK_VALUE, attention_bias


def test_nothing_to_mask_gives_none():
    assert attention_bias() is None


def test_padding_mask_broadcasts_over_queries():
    bias = np.array(attention_bias(padding_mask=np.array([[1, 1, 0]])))
    assert bias.shape == (1, 1, 1, 3)
    np.testing.assert_array_equal(bias[0, 0, 0], [0.0, 0.0, MASK_VALUE])


def test_causal_and_padding_combine():
    bias = np.array(attention_bias(padding_mask=np.array([[1, 1, 0]]), causal=True))
    allowed = bias[0, 0] == 0.0
    np.testing.assert_array_equal(allowed, [[1, 0, 0], [1, 1, 0], [1, 1, 0]])


def test_attention_mask_and_padding_combine():
    attention = np.array([[[1, 0], [1, 1]]])
    bias = np.array(attention_bias(padding_mask=np.array([[1, 0]]), attention_mask=attention))
    np.testing.assert_array_equal(bias[0, 0] == 0.0, [[1, 0], [1, 0]])


def test_causal_without_length_or_mask_is_an_error():
    with pytest.raises(ValueError, match="sequence_length"):
        attention_bias(causal=True)
