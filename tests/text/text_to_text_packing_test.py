"""Packing text-to-text examples: sources, teacher-forced targets, generated ids back to text."""

import numpy as np
import pytest
import tensorflow as tf

from kbert.text import WordPieceTokenizer
from kbert.text.text_to_text_packing import pack_sources, pack_targets, texts_from_generated
from tests.text.text_test_case import TINY_VOCABULARY

SEP = 3


@pytest.fixture(scope="module")
def tokenizer():
    return WordPieceTokenizer(TINY_VOCABULARY)


def test_sources_are_cut_closed_with_the_end_id_and_padded_to_the_longest(tokenizer):
    packed = pack_sources(tokenizer, ["the cat sat", "hello", ""], 3, SEP)
    assert packed["encoder_token_ids"].numpy().tolist() == [[7, 8, SEP], [5, SEP, 0], [SEP, 0, 0]]
    assert packed["encoder_padding_mask"].numpy().tolist() == [[1, 1, 1], [1, 1, 0], [1, 0, 0]]
    assert packed["encoder_token_ids"].dtype == tf.int32
    with pytest.raises(ValueError, match="max_length must be an integer >= 2; received 1"):
        pack_sources(tokenizer, ["hello"], 1, SEP)


def test_targets_are_shifted_right_behind_the_start_id_and_scored_with_the_end(tokenizer):
    inputs, labels = pack_targets(tokenizer, ["the cat sat", "cat"], 3, SEP, start_id=0)
    assert labels.numpy().tolist() == [[7, 8, SEP], [8, SEP, -100]]
    assert inputs["decoder_token_ids"].numpy().tolist() == [[0, 7, 8], [0, 8, 0]]
    assert inputs["decoder_padding_mask"].numpy().tolist() == [[1, 1, 1], [1, 1, 0]]


def test_packing_in_a_traced_graph_equals_eager(tokenizer):
    texts = tf.constant(["the cat sat", "hello world !", ""])
    traced = tf.function(lambda t: pack_sources(tokenizer, t, 4, SEP))(texts)
    eager = pack_sources(tokenizer, texts, 4, SEP)
    for key in eager:
        np.testing.assert_array_equal(traced[key], eager[key])
    traced_inputs, traced_labels = tf.function(lambda t: pack_targets(tokenizer, t, 4, SEP))(texts)
    eager_inputs, eager_labels = pack_targets(tokenizer, texts, 4, SEP)
    np.testing.assert_array_equal(traced_labels, eager_labels)
    np.testing.assert_array_equal(
        traced_inputs["decoder_token_ids"], eager_inputs["decoder_token_ids"]
    )


def test_generated_ids_read_back_to_the_first_end_id(tokenizer):
    generated = [[0, 7, 8, SEP, 5], [0, SEP, 5, 5, 5], [0, 10, 11, 12, 9]]
    texts = texts_from_generated(tokenizer, generated, SEP).numpy().tolist()
    assert texts == [b"the cat", b"", b"unaffable sat"]
    traced = tf.function(lambda ids: texts_from_generated(tokenizer, ids, SEP))(
        tf.constant(generated)
    )
    assert traced.numpy().tolist() == texts
    with pytest.raises(ValueError, match="generated must be"):
        texts_from_generated(tokenizer, [0, 7, 8], SEP)
