"""export_text_to_text: a `generate` signature (tokenizer, beam search, detokenization in the
graph) that answers as the Keras model does, in this process, a fresh one and TF Serving's
session loader; bad input refused; versions written whole or not at all."""

import os
from pathlib import Path

import keras
import numpy as np
import pytest
import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2

from kbert.data.text_to_text import generate_texts
from kbert.export import load_exported
from kbert.export.text_to_text_export import export_text_to_text
from kbert.models.encoder_decoder import EncoderDecoder
from kbert.text import WordPieceTokenizer
from tests.export.saved_model_export_test import (
    FRESH_PROCESS_SCRIPT,
    SESSION_SCRIPT,
    run_script,
    serving_session,
)
from tests.text.preprocessor_test import ALLOWED_TF_TEXT_OPS, graph_ops
from tests.text.text_test_case import TINY_VOCABULARY

TEXTS = ["the cat sat", "hello world !", "", "unaffable cafe , naive " * 20]


@pytest.fixture(scope="module")
def model(tokenizer):
    keras.utils.set_random_seed(0)
    model = EncoderDecoder.from_preset("tiny", vocabulary_size=len(TINY_VOCABULARY), dropout=0.0)
    model.ensure_built()
    return model


@pytest.fixture(scope="module")
def exports(model, tokenizer, tmp_path_factory):
    root = tmp_path_factory.mktemp("t2t")
    beam = export_text_to_text(model, tokenizer, root, "t2t", source_length=8, max_new_tokens=5)
    greedy = export_text_to_text(
        model, tokenizer, root, "t2t", source_length=8, max_new_tokens=5, num_beams=1
    )
    return root, {"beam": beam, "greedy": greedy}


def expected(model, tokenizer, strategy):
    return generate_texts(
        model, tokenizer, TEXTS, 5, source_length=8, strategy=strategy, num_beams=4
    )


def test_generate_answers_as_the_keras_model(model, tokenizer, exports):
    root, paths = exports
    assert paths["beam"] == os.path.join(root, "t2t", "1")
    assert paths["greedy"] == os.path.join(root, "t2t", "2")
    assert sorted(os.listdir(root / "t2t")) == ["1", "2"]  # no temporaries left
    for strategy, path in paths.items():
        signatures = load_exported(path).signatures
        assert set(signatures) == {"serving_default", "generate"}
        outputs = signatures["generate"](text=tf.constant(TEXTS))
        assert [t.decode() for t in outputs["text"].numpy()] == expected(model, tokenizer, strategy)
        assert outputs["token_ids"].shape == (len(TEXTS), 6)
        np.testing.assert_array_equal(outputs["token_ids"][:, 0], 0)  # the start id
        empty = signatures["serving_default"](text=tf.constant([], tf.string))
        assert empty["text"].shape == (0,) and empty["token_ids"].shape == (0, 6)
    assert (Path(paths["beam"]) / "assets" / "vocab.txt").read_text().split("\n")[:2] == [
        "[PAD]",
        "[UNK]",
    ]


def test_graph_holds_only_serving_ops_and_bad_requests_fail_in_it(exports):
    _, paths = exports
    saved = saved_model_pb2.SavedModel()
    saved.ParseFromString((Path(paths["beam"]) / "saved_model.pb").read_bytes())
    not_core = graph_ops(saved.meta_graphs[0].graph_def) - set(dir(tf.raw_ops))
    assert not_core <= ALLOWED_TF_TEXT_OPS, not_core
    message = "signature generate, input text: expected a rank-1 string tensor"
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        load_exported(paths["beam"]).signatures["generate"](text=tf.constant([["a", "b"]]))
    with serving_session(paths["beam"]) as run:
        with pytest.raises(tf.errors.InvalidArgumentError, match=message):
            run("generate", {"text": np.array([["a", "b"]], dtype=object)})
        assert len(run("generate", {"text": np.array(["the cat"], dtype=object)})["text"]) == 1


def test_export_time_errors_leave_nothing_behind(model, tokenizer, tmp_path):
    with pytest.raises(ValueError, match="model must be a kbert.models.EncoderDecoder"):
        export_text_to_text(keras.Sequential(), tokenizer, tmp_path, "m")
    with pytest.raises(ValueError, match="the tokenizer has 5 tokens but the model's"):
        export_text_to_text(model, WordPieceTokenizer(TINY_VOCABULARY[:5]), tmp_path, "m")
    with pytest.raises(ValueError, match="num_beams must be an integer >= 1; received 0"):
        export_text_to_text(model, tokenizer, tmp_path, "m", num_beams=0)
    with pytest.raises(ValueError, match="source_length must be an integer >= 2"):
        export_text_to_text(model, tokenizer, tmp_path, "m", source_length=1)
    with pytest.raises(ValueError, match="end_token must be a token of the tokenizer"):
        export_text_to_text(model, tokenizer, tmp_path, "m", end_token="</s>")
    with pytest.raises(ValueError, match="name must be a plain directory name"):
        export_text_to_text(model, tokenizer, tmp_path, "../m", max_new_tokens=1)
    assert os.listdir(tmp_path) == []
    path = export_text_to_text(model, tokenizer, tmp_path, "m", max_new_tokens=1, version=3)
    with pytest.raises(ValueError, match="version 3 of model 'm' already exists"):
        export_text_to_text(model, tokenizer, tmp_path, "m", max_new_tokens=1, version=3)
    assert os.listdir(tmp_path / "m") == ["3"] and path.endswith("3")


@pytest.mark.slow
@pytest.mark.parametrize("script", ["fresh_process", "session_loader"])
def test_a_fresh_process_and_the_session_loader_generate_the_same(
    model, tokenizer, exports, script, tmp_path
):
    """TensorFlow and tf-text only (no kbert, no Keras), as TF Serving loads the model."""
    _, paths = exports
    code = FRESH_PROCESS_SCRIPT if script == "fresh_process" else SESSION_SCRIPT
    requests = [[paths[s], "generate", {"text": TEXTS}] for s in ("beam", "greedy")]
    results = run_script(code, requests, tmp_path)
    for strategy, result in zip(("beam", "greedy"), results, strict=True):
        assert result["text"] == expected(model, tokenizer, strategy)
        in_process = load_exported(paths[strategy]).signatures["generate"](text=tf.constant(TEXTS))
        np.testing.assert_array_equal(result["token_ids"], in_process["token_ids"])
