"""Tests of padding a served batch to its longest real row (`kbert.export.dynamic_padding`).

The exported signatures' outputs against the Keras model on fixed-length rows are checked in
`saved_model_export_test.py` (its batches are cut from 16 to 8 tokens); here: the cut itself, and
that the exporter's signatures feed the model the cut rows.
"""

import keras
import numpy as np
import pytest
import tensorflow as tf

from kbert.export import ExportSettings, export_saved_model
from kbert.export.dynamic_padding import padded_length, trim_padding
from kbert.export.export_settings import SignatureSettings
from kbert.export.signatures.classification import classify
from kbert.export.signatures.embedding import embed
from kbert.export.signatures.question_answering import answer
from kbert.export.signatures.serving_graph import ServingGraph
from kbert.models import Encoder, QuestionAnswerer, SequenceClassifier
from kbert.text import BertPreprocessor, LongTextPreprocessor, WordPieceTokenizer
from tests.text.text_test_case import TINY_VOCABULARY


def mask(lengths, width):
    return tf.sequence_mask(lengths, width, tf.int32)


@pytest.mark.parametrize(
    "lengths, multiple, expected",
    [
        ([3, 5], 8, 8),
        ([3, 9], 8, 16),
        ([3, 9], 1, 9),
        ([30, 2], 8, 30),  # never beyond sequence_length
        ([], 8, 8),  # an empty batch: one multiple
    ],
)
def test_padded_length(lengths, multiple, expected):
    assert int(padded_length(mask(lengths, 30), 30, multiple)) == expected


def test_trim_padding_cuts_token_tensors_only():
    packed = {
        "token_ids": tf.constant([[2, 5, 6, 3, 0, 0, 0, 0], [2, 5, 3, 0, 0, 0, 0, 0]]),
        "segment_ids": tf.zeros([2, 8], tf.int32),
        "padding_mask": mask([4, 3], 8),
        "start_offsets": -tf.ones([2, 8], tf.int32),
        "text_index": tf.constant([0, 1]),
        "tokens": tf.constant([4, 3]),
    }
    cut = trim_padding(packed, 8, multiple=2)
    assert sorted(cut) == sorted(packed)
    assert cut["token_ids"].numpy().tolist() == [[2, 5, 6, 3], [2, 5, 3, 0]]
    for key in ("segment_ids", "padding_mask", "start_offsets"):
        assert cut[key].shape == (2, 4), key
    assert cut["text_index"] is packed["text_index"]
    assert cut["tokens"] is packed["tokens"]


def test_trim_padding_errors_name_the_input():
    with pytest.raises(ValueError, match="padding_mask; received keys"):
        trim_padding({"token_ids": tf.zeros([1, 4], tf.int32)}, 4)
    with pytest.raises(ValueError, match=r"sequence_length=4\); received shape \(1, 6\)"):
        trim_padding({"padding_mask": tf.zeros([1, 6], tf.int32)}, 4)
    with pytest.raises(ValueError, match="multiple"):
        padded_length(tf.zeros([1, 4], tf.int32), 4, multiple=0)


class Spy:
    """Calls the model and records the width of each batch it is given."""

    def __init__(self, model):
        self.model, self.widths = model, []

    def __call__(self, inputs, training=False):
        self.widths.append(int(inputs["token_ids"].shape[1]))
        return self.model(inputs, training=training)


def exporter(
    model, tokenizer, task, sequence_length, tmp_path, long_inputs=None, padding="longest"
):
    settings = SignatureSettings(
        task=task,
        label_names=None,
        sequence_length=sequence_length,
        max_input_chars=10_000,
        max_answer_length=30,
        pair=False,
        padding=padding,
        long_inputs=long_inputs,
    )
    return ServingGraph(model, tokenizer, settings, str(tmp_path))


@pytest.mark.parametrize("strategy", ["head", "window_mean"])
def test_signatures_feed_the_model_rows_cut_to_the_longest(tmp_path, strategy):
    """`classify`, `embed` and `answer` run the model on 8 of 16 columns, same outputs."""
    keras.utils.set_random_seed(3)
    tokenizer = WordPieceTokenizer(TINY_VOCABULARY)
    encoder = Encoder.from_preset("tiny", vocabulary_size=len(TINY_VOCABULARY))
    texts = tf.constant(["the cat sat", "hello world", ""])
    model = SequenceClassifier(encoder, num_classes=3)
    served = exporter(model, tokenizer, "classify", 16, tmp_path, {"strategy": strategy})
    served.model = spy = Spy(model)
    probabilities = classify(served, texts)["probabilities"]
    assert spy.widths == [8]
    packed = LongTextPreprocessor(tokenizer, 16, strategy=strategy)(texts)
    full = tf.nn.softmax(model(BertPreprocessor(tokenizer, 16)(texts), training=False))
    assert packed["token_ids"].shape[1] == 16
    np.testing.assert_allclose(probabilities, full, atol=1e-5)

    served.encoder = spy = Spy(encoder)
    embedding = embed(served, texts)["mean_embedding"]
    assert spy.widths == [8]
    sequence = encoder(BertPreprocessor(tokenizer, 16)(texts), training=False)["sequence_output"]
    weights = tf.cast(BertPreprocessor(tokenizer, 16)(texts)["padding_mask"], tf.float32)
    expected = tf.reduce_sum(sequence * weights[:, :, None], 1) / tf.maximum(
        tf.reduce_sum(weights, 1, keepdims=True), 1.0
    )
    np.testing.assert_allclose(embedding, expected, atol=1e-5)

    answerer = QuestionAnswerer(encoder)
    served = exporter(answerer, tokenizer, "answer", 16, tmp_path)
    served.model = spy = Spy(answerer)
    answer(served, tf.constant(["hello?"]), tf.constant(["hello world"]))
    assert spy.widths == [8]  # [CLS] hello ? [SEP] hello world [SEP]


def test_fixed_padding_keeps_the_whole_window(tmp_path):
    keras.utils.set_random_seed(4)
    tokenizer = WordPieceTokenizer(TINY_VOCABULARY)
    model = SequenceClassifier(
        Encoder.from_preset("tiny", vocabulary_size=len(TINY_VOCABULARY)), num_classes=2
    )
    texts = tf.constant(["the cat sat", "hello"])
    outputs = {}
    for padding in ("longest", "fixed"):
        served = exporter(model, tokenizer, "classify", 16, tmp_path, padding=padding)
        served.model = spy = Spy(model)
        outputs[padding] = classify(served, texts)["probabilities"]
        assert spy.widths == [8 if padding == "longest" else 16]
    np.testing.assert_allclose(outputs["longest"], outputs["fixed"], atol=1e-5)
    with pytest.raises(ValueError, match="padding must be one of"):
        export_saved_model(model, tokenizer, tmp_path, "bad", ExportSettings(padding="max_length"))
