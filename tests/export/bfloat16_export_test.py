"""`ExportSettings(dtype="bfloat16")`: the same signatures and float32 outputs, bfloat16 inside.

One tiny classifier is exported twice, in float32 and in bfloat16; the bfloat16 export must
serve `classify` with float32 outputs whose labels agree with the float32 export's and whose
probabilities are within `TOLERANCE`, and its saved graph must run its matmuls in bfloat16.
"""

import json
from pathlib import Path

import keras
import numpy as np
import pytest
import tensorflow as tf
from tensorflow.core.framework import types_pb2
from tensorflow.core.protobuf import saved_model_pb2

from kbert.export import (
    ExportSettings,
    export_saved_model,
    load_exported,
    read_export_settings,
)
from kbert.export.saved_model_files import SETTINGS_RECORD
from kbert.models import Encoder, QuestionAnswerer, SequenceClassifier
from kbert.models.token_classifier import TokenClassifier
from kbert.text import WordPieceTokenizer
from tests.export.saved_model_export_test import signature_functions
from tests.text.text_test_case import TINY_VOCABULARY

CLASSES = ["negative", "neutral", "positive"]
TEXTS = ["Hello, world!", "the cat sat", "Café naïve 中文", "", "un aff able ok x", "hello cat"]
# bfloat16 keeps 8 significant bits (relative error up to 2**-8 per rounding): over a tiny
# encoder's few layers the probabilities move by well under this.
TOLERANCE = 2e-2
MATMULS = ("MatMul", "BatchMatMul", "BatchMatMulV2", "BatchMatMulV3", "Einsum")


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    """`{dtype: version directory}` of one classifier exported in float32 and in bfloat16."""
    keras.utils.set_random_seed(7)
    encoder = Encoder.from_preset("tiny", vocabulary_size=len(TINY_VOCABULARY))
    # Mean pooling and a spread-out head: a random tiny encoder's texts then get different
    # labels, each decided by a margin far wider than bfloat16's rounding (checked below).
    model = SequenceClassifier(encoder, num_classes=len(CLASSES), pooling="mean")
    kernel, bias = model.get_layer("logits").get_weights()
    model.get_layer("logits").set_weights([kernel * 30.0, bias])
    root = tmp_path_factory.mktemp("bf16")
    tokenizer = WordPieceTokenizer(TINY_VOCABULARY)
    paths = {
        dtype: export_saved_model(
            model,
            tokenizer,
            root,
            f"classifier_{dtype}",
            ExportSettings(label_names=CLASSES, sequence_length=16, dtype=dtype),
        )
        for dtype in ("float32", "bfloat16")
    }
    assert model.encoder.embeddings.compute_dtype == "float32"  # the model itself unchanged
    return paths


def classify(path, texts=TEXTS):
    outputs = load_exported(path).signatures["classify"](text=tf.constant(texts))
    return {key: value.numpy() for key, value in outputs.items()}


def matmul_dtypes(path, signature):
    """The dtypes of the matmuls in the functions `signature` calls, transitively."""
    saved = saved_model_pb2.SavedModel()
    saved.ParseFromString((Path(path) / "saved_model.pb").read_bytes())
    (graph,) = saved.meta_graphs
    _, functions = signature_functions(graph.graph_def, {signature: graph.signature_def[signature]})
    return {
        types_pb2.DataType.Name(node.attr[key].type)
        for function in functions
        for node in function.node_def
        if node.op in MATMULS
        for key in ("T", "Ta")
        if key in node.attr
    }


def test_bfloat16_classify_agrees_with_float32(exports):
    full, half = classify(exports["float32"]), classify(exports["bfloat16"])
    assert half["probabilities"].dtype == np.float32
    assert {key: value.dtype for key, value in half.items()} == {
        key: value.dtype for key, value in full.items()
    }
    np.testing.assert_array_equal(half["label_ids"], full["label_ids"])
    np.testing.assert_array_equal(half["labels"], full["labels"])
    assert len(set(full["label_ids"])) > 1  # the texts do not all get one label
    top_two = np.sort(full["probabilities"], axis=-1)[:, -2:]
    assert (top_two[:, 1] - top_two[:, 0] > 2 * TOLERANCE).all()  # labels not decided by rounding
    np.testing.assert_allclose(half["probabilities"], full["probabilities"], atol=TOLERANCE)
    assert not np.array_equal(half["probabilities"], full["probabilities"])  # bf16 rounding


def test_every_float_output_stays_float32(exports):
    loaded = load_exported(exports["bfloat16"])
    embed = loaded.signatures["embed"](text=tf.constant(TEXTS))
    ids = tf.constant([[2, 5, 3]])
    raw = loaded.signatures["token_ids"](
        token_ids=ids, segment_ids=tf.zeros_like(ids), padding_mask=tf.ones_like(ids)
    )
    assert {value.dtype for value in {**embed, **raw}.values()} == {tf.float32}


def test_the_bfloat16_graph_computes_in_bfloat16(exports):
    assert "DT_BFLOAT16" in matmul_dtypes(exports["bfloat16"], "classify")
    assert matmul_dtypes(exports["float32"], "classify") == {"DT_FLOAT"}


def test_the_settings_record_names_the_dtype(exports, tmp_path):
    for dtype, path in exports.items():
        record = read_export_settings(path)
        assert record == json.loads((Path(path) / SETTINGS_RECORD).read_text())
        assert (record["dtype"], record["requested_dtype"]) == (dtype, dtype)
        assert (record["task"], record["sequence_length"]) == ("classify", 16)
        assert record["label_names"] == CLASSES
    with pytest.raises(ValueError, match="has no assets.extra/kbert_export.json; expected a"):
        read_export_settings(tmp_path)


@pytest.mark.parametrize("task", ["tag", "answer"])
def test_taggers_and_answerers_export_in_bfloat16(task, tmp_path):
    encoder = Encoder.from_preset("tiny", vocabulary_size=len(TINY_VOCABULARY))
    tags = ["O", "B-PER", "I-PER"]
    model = TokenClassifier(encoder, num_tags=3, crf=True) if task == "tag" else None
    model = model or QuestionAnswerer(encoder)
    path = export_saved_model(  # the export runs every signature once before it is kept
        model,
        WordPieceTokenizer(TINY_VOCABULARY),
        tmp_path,
        task,
        ExportSettings(
            sequence_length=16, dtype="bfloat16", label_names=tags if task == "tag" else None
        ),
    )
    assert "DT_BFLOAT16" in matmul_dtypes(path, task)
    signature = load_exported(path).signatures[task]
    texts = tf.constant(["hello world", "the cat sat"])
    outputs = signature(text=texts) if task == "tag" else signature(question=texts, context=texts)
    assert {value.dtype for value in outputs.values()} <= {tf.float32, tf.int32, tf.string}


def test_auto_is_recorded_with_what_it_chose(tmp_path):
    encoder = Encoder.from_preset("tiny", vocabulary_size=len(TINY_VOCABULARY))
    path = export_saved_model(
        encoder,
        WordPieceTokenizer(TINY_VOCABULARY),
        tmp_path,
        "embedder",
        ExportSettings(sequence_length=8, dtype="auto"),
    )
    record = read_export_settings(path)
    assert record["requested_dtype"] == "auto" and record["dtype"] in ("float32", "bfloat16")
    assert "DT_BFLOAT16" in matmul_dtypes(path, "embed") or record["dtype"] == "float32"


def test_an_unknown_dtype_is_refused_by_name():
    with pytest.raises(ValueError, match=r"dtype must be one of \('float32', 'bfloat16', "):
        ExportSettings(dtype="float16")
