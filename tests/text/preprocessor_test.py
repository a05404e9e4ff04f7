"""Fast tests of BertPreprocessor, including .keras saving and a SavedModel's op list."""

import json
import os
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2

from kbert.text import BertPreprocessor, WordPieceTokenizer
from tests.text.text_test_case import TINY_VOCABULARY, check_preprocessing_layer

# The only non-core ops an exported graph may hold: TF Serving builds embed tensorflow-text
# 2.12, which lacks the newer ones (FastWordpieceTokenizeWithOffsets, RoundRobinTrim, ...).
ALLOWED_TF_TEXT_OPS = {"RegexSplitWithOffsets", "NormalizeUTF8", "WordpieceTokenizeWithOffsets"}


@pytest.fixture
def preprocessor(tokenizer):
    return BertPreprocessor(tokenizer, sequence_length=8)


def lists(outputs):
    return {key: np.asarray(value).tolist() for key, value in outputs.items()}


def test_single_and_pair(preprocessor):
    single = lists(preprocessor(["Hello, world!", "Unaffable"]))
    assert single["token_ids"] == [[2, 5, 26, 6, 25, 3, 0, 0], [2, 10, 11, 12, 3, 0, 0, 0]]
    assert single["segment_ids"] == [[0] * 8] * 2
    assert single["padding_mask"] == [[1, 1, 1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 0, 0, 0]]
    pair = lists(preprocessor((["hello world", "the cat"], ["Unaffable", ""])))
    assert pair["token_ids"] == [[2, 5, 6, 3, 10, 11, 12, 3], [2, 7, 8, 3, 3, 0, 0, 0]]
    assert pair["segment_ids"] == [[0, 0, 0, 0, 1, 1, 1, 1], [0, 0, 0, 0, 1, 0, 0, 0]]
    one = lists(preprocessor("hello"))  # a single string gives unbatched rows
    assert one["token_ids"] == [2, 5, 3, 0, 0, 0, 0, 0]


def test_return_alignment(tokenizer):
    preprocessor = BertPreprocessor(tokenizer, sequence_length=9, return_alignment=True)
    outputs = lists(preprocessor((["Café naïve"], ["Unaffable!"])))
    assert outputs["token_ids"] == [[2, 13, 14, 3, 10, 11, 12, 25, 3]]
    assert outputs["word_ids"] == [[-1, 0, 1, -1, 0, 0, 0, 1, -1]]
    assert outputs["start_offsets"] == [[-1, 0, 5, -1, 0, 2, 5, 9, -1]]
    assert outputs["end_offsets"] == [[-1, 4, 10, -1, 2, 5, 9, 10, -1]]


def test_long_text_is_truncated(preprocessor):
    outputs = lists(preprocessor(["hello " * 16_666 + "cafe", ""]))
    assert outputs["token_ids"] == [[2, 5, 5, 5, 5, 5, 5, 3], [2, 3, 0, 0, 0, 0, 0, 0]]


def test_tokenize_and_pack(preprocessor):
    ids = preprocessor.tokenize(["hello world", "cat"])
    assert ids.to_list() == [[5, 6], [8]]
    packed = lists(preprocessor.pack((ids, ids)))
    assert packed["token_ids"][0] == [2, 5, 6, 3, 5, 6, 3, 0]


def test_errors(tokenizer, preprocessor):
    with pytest.raises(ValueError, match="same size; received 2 and 1 texts"):
        preprocessor((["a", "b"], ["c"]))
    with pytest.raises(ValueError, match="tuple of 3"):
        preprocessor((["a"], ["b"], ["c"]))
    with pytest.raises(ValueError, match="both be single strings or both be batches"):
        preprocessor(("a", ["b"]))
    with pytest.raises(ValueError, match="WordPieceTokenizer; received list"):
        BertPreprocessor(TINY_VOCABULARY)
    no_cls = WordPieceTokenizer(TINY_VOCABULARY, cls_token=None)
    with pytest.raises(ValueError, match=r"None for \['cls_token'\]"):
        BertPreprocessor(no_cls)


def test_layer_end_to_end(preprocessor):
    config = preprocessor.get_config()
    assert config["tokenizer"]["class_name"] == "WordPieceTokenizer"
    assert config["tokenizer"]["config"]["vocabulary"] == TINY_VOCABULARY
    outputs = check_preprocessing_layer(preprocessor, tf.constant(["hello world", "the cat"]))
    assert outputs["token_ids"][1] == [2, 7, 8, 3, 0, 0, 0, 0]


def test_pairs_in_tf_data(preprocessor):
    pairs = tf.data.Dataset.from_tensor_slices((["hello world", "the cat"], ["Unaffable", ""]))
    packed = pairs.map(lambda a, b: preprocessor((a, b)))
    rows = [x["token_ids"].tolist() for x in packed.as_numpy_iterator()]
    assert rows == [[2, 5, 6, 3, 10, 11, 12, 3], [2, 7, 8, 3, 3, 0, 0, 0]]


def test_keras_model_save_and_load(tmp_path, preprocessor):
    keras.utils.set_random_seed(0)
    texts = keras.Input(shape=(), dtype="string")
    inputs = preprocessor(texts)
    embedded = keras.layers.Embedding(len(TINY_VOCABULARY), 4)(inputs["token_ids"])
    model = keras.Model(
        texts, keras.layers.Dense(1)(keras.layers.GlobalAveragePooling1D()(embedded))
    )
    batch = tf.constant(["Hello, world!", "Unaffable"])
    expected = model.predict(batch, verbose=0)
    model.save(tmp_path / "model.keras")
    restored = keras.saving.load_model(tmp_path / "model.keras")
    np.testing.assert_allclose(restored.predict(batch, verbose=0), expected)
    assert isinstance(restored.layers[1], BertPreprocessor)


def graph_ops(graph_def):
    ops = {node.op for node in graph_def.node}
    for function in graph_def.library.function:
        ops.update(node.op for node in function.node_def)
    return ops


def test_graph_holds_only_serving_ops(tokenizer):
    preprocessor = BertPreprocessor(tokenizer, sequence_length=8, return_alignment=True)
    serve = tf.function(lambda a, b: preprocessor((a, b)))
    spec = tf.TensorSpec([None], tf.string)
    graph_def = serve.get_concrete_function(spec, spec).graph.as_graph_def()
    not_core = graph_ops(graph_def) - set(dir(tf.raw_ops))  # raw_ops lists core TF ops only
    assert not_core <= ALLOWED_TF_TEXT_OPS, not_core
    assert "WordpieceTokenizeWithOffsets" in not_core


@pytest.mark.slow
def test_saved_model_loads_in_a_fresh_process(tmp_path, tokenizer):
    preprocessor = BertPreprocessor(tokenizer, sequence_length=8, return_alignment=True)

    class Serving(tf.Module):
        def __init__(self):
            super().__init__()
            self.preprocessor = preprocessor

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string)] * 2)
        def __call__(self, texts_a, texts_b):
            return self.preprocessor((texts_a, texts_b))

    pair = (["Café, naïve!", "x"], ["中文 Unaffable", ""])
    expected = lists(preprocessor(tuple(tf.constant(p) for p in pair)))
    tf.saved_model.save(Serving(), str(tmp_path / "serving"))
    saved = saved_model_pb2.SavedModel()
    saved.ParseFromString((tmp_path / "serving" / "saved_model.pb").read_bytes())
    for graph in saved.meta_graphs:
        assert graph_ops(graph.graph_def) - set(dir(tf.raw_ops)) <= ALLOWED_TF_TEXT_OPS

    # A fresh process imports neither kbert nor keras: only TensorFlow and tf-text's ops.
    script = (
        "import json, sys\n"
        "import tensorflow as tf, tensorflow_text  # noqa: F401 (registers the tf-text ops)\n"
        "serve = tf.saved_model.load(sys.argv[1])\n"
        f"outputs = serve(tf.constant({pair[0]!r}), tf.constant({pair[1]!r}))\n"
        "print(json.dumps({k: v.numpy().tolist() for k, v in outputs.items()}))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "serving")],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert json.loads(result.stdout.strip().splitlines()[-1]) == expected


def test_model_with_preprocessor_compiles_without_xla_by_default(preprocessor):
    import keras

    inputs = keras.Input(shape=(), dtype="string")
    packed = preprocessor(inputs)
    logits = keras.layers.Dense(2)(keras.ops.cast(packed["token_ids"], "float32"))
    model = keras.Model(inputs, logits)
    model.compile(loss="mse")  # jit_compile="auto"
    assert model.jit_compile is False
