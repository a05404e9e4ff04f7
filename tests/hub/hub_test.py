import os
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

from kbert.export.hub_export import export_hub_encoder, export_hub_preprocessor
from kbert.hub import (
    HUB_INPUT_KEYS,
    HubEncoder,
    HubLayer,
    HubPreprocessor,
    hub_encoder_model,
    hub_text_inputs_from_kbert,
    resolve_handle,
)
from kbert.models import Encoder
from kbert.text import BertPreprocessor, WordPieceTokenizer

VOCABULARY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "good", "bad", "movie", "film", "!"]
SEQ_LENGTH = 6


@pytest.fixture(scope="module")
def tokenizer():
    return WordPieceTokenizer(VOCABULARY)


@pytest.fixture(scope="module")
def encoder():
    keras.utils.set_random_seed(1)
    return Encoder.from_preset(
        "tiny", vocabulary_size=len(VOCABULARY), dropout=0.0, attention_dropout=0.0
    )


@pytest.fixture(scope="module")
def encoder_path(encoder, tmp_path_factory):
    return export_hub_encoder(encoder, tmp_path_factory.mktemp("hub") / "encoder")


@pytest.fixture(scope="module")
def preprocessor_path(tokenizer, tmp_path_factory):
    return export_hub_preprocessor(
        tokenizer, tmp_path_factory.mktemp("hub") / "pre", seq_length=SEQ_LENGTH
    )


@pytest.fixture(scope="module")
def data(tokenizer):
    """A learnable task: the label says whether the text holds "good" or "bad"."""
    rng = np.random.default_rng(0)
    texts, labels = [], []
    for _ in range(32):
        label = int(rng.integers(2))
        noun = ["movie", "film"][int(rng.integers(2))]
        texts.append(f"{['bad', 'good'][label]} {noun}" + " !" * int(rng.integers(2)))
        labels.append(label)
    packed = BertPreprocessor(tokenizer, sequence_length=SEQ_LENGTH)(texts)
    x = {
        key: packed[kbert].numpy()
        for key, kbert in zip(
            HUB_INPUT_KEYS, ("token_ids", "padding_mask", "segment_ids"), strict=True
        )
    }
    return x, np.array(labels)


def _classifier(layer):
    inputs = {key: keras.Input((None,), dtype="int32", name=key) for key in HUB_INPUT_KEYS}
    pooled = layer(inputs)
    if isinstance(pooled, dict):
        pooled = pooled["pooled_output"]
    logits = keras.layers.Dense(2, name="head")(pooled)
    return keras.Model(inputs, logits)


def _values(layer):
    return [v.numpy().copy() for v in layer.module.variables]


def _fit(model, data, optimizer, epochs=4):
    x, y = data
    model.compile(optimizer, keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    before = model.evaluate(x, y, verbose=0)
    model.fit(x, y, batch_size=8, epochs=epochs, verbose=0, shuffle=False)
    return before, model.evaluate(x, y, verbose=0)


# ---------------------------------------------------------------- training


@pytest.mark.parametrize("optimizer", ["adam", "adamw"])
def test_fit_updates_module_variables(encoder_path, data, optimizer):
    keras.utils.set_random_seed(0)
    layer = HubLayer(encoder_path, output_key="pooled_output")
    model = _classifier(layer)
    hub_trainable = len(layer.module.trainable_variables)
    assert len(layer.trainable_weights) == hub_trainable > 0
    assert len(model.trainable_weights) == hub_trainable + 2  # + head kernel and bias
    optimizer = (
        keras.optimizers.Adam(1e-2)
        if optimizer == "adam"
        else keras.optimizers.AdamW(1e-2, weight_decay=0.01)
    )
    x, _ = data
    outputs_before = layer.module(x, training=False)["pooled_output"].numpy()
    values_before = _values(layer)
    loss_before, loss_after = _fit(model, data, optimizer)
    assert loss_after < loss_before
    changed = [
        not np.allclose(a, b.numpy())
        for a, b in zip(values_before, layer.module.variables, strict=True)
    ]
    assert sum(changed) >= hub_trainable - 1  # every trained variable moved
    # The module itself (not a copy) was trained: its own outputs changed.
    outputs_after = layer.module(x, training=False)["pooled_output"].numpy()
    assert np.abs(outputs_after - outputs_before).max() > 1e-3


def test_frozen_layer_has_no_trainable_weights(encoder_path, data):
    layer = HubLayer(encoder_path, output_key="pooled_output", trainable=False)
    model = _classifier(layer)
    assert layer.trainable_weights == []
    assert len(layer.non_trainable_weights) == len(layer.module.variables)
    assert len(model.trainable_weights) == 2
    values_before = _values(layer)
    _fit(model, data, keras.optimizers.Adam(1e-2), epochs=1)
    for before, after in zip(values_before, layer.module.variables, strict=True):
        np.testing.assert_array_equal(before, after.numpy())


def test_layer_matches_kbert_encoder(encoder, encoder_path, data):
    x, _ = data
    outputs = HubEncoder(encoder_path)(x)
    expected = encoder(
        {
            "token_ids": x["input_word_ids"],
            "padding_mask": x["input_mask"],
            "segment_ids": x["input_type_ids"],
        }
    )
    np.testing.assert_allclose(outputs["sequence_output"], expected["sequence_output"], atol=1e-5)
    # kbert's input names work too.
    kbert_names = {"token_ids": x["input_word_ids"], "padding_mask": x["input_mask"]}
    again = HubEncoder(encoder_path, output_key="pooled_output")(kbert_names)
    np.testing.assert_allclose(again, expected["pooled_output"], atol=1e-5)


# ---------------------------------------------------------------- saving


def test_keras_save_and_load_restore_trained_weights(encoder_path, data, tmp_path):
    layer = HubLayer(encoder_path, output_key="pooled_output")
    model = _classifier(layer)
    _fit(model, data, keras.optimizers.Adam(1e-2), epochs=1)
    x, _ = data
    expected = model.predict(x, verbose=0)
    model.save(tmp_path / "model.keras")
    loaded = keras.saving.load_model(tmp_path / "model.keras")
    np.testing.assert_allclose(loaded.predict(x, verbose=0), expected, atol=1e-6)
    hub_layer = next(lay for lay in loaded.layers if isinstance(lay, HubLayer))
    assert hub_layer.get_config()["handle"] == encoder_path
    assert hub_layer.get_config()["output_key"] == "pooled_output"
    assert HubLayer.from_config(hub_layer.get_config()).output_key == "pooled_output"


def test_model_with_hub_layer_exports_with_export_archive(encoder_path, data, tmp_path):
    model = _classifier(HubLayer(encoder_path, output_key="pooled_output"))
    x, _ = data
    archive = keras.export.ExportArchive()
    archive.track(model)
    archive.add_endpoint(
        "serve",
        model.call,
        input_signature=[
            {key: tf.TensorSpec([None, None], tf.int32, name=key) for key in HUB_INPUT_KEYS}
        ],
    )
    archive.write_out(str(tmp_path / "served"), verbose=False)
    reloaded = tf.saved_model.load(str(tmp_path / "served"))
    np.testing.assert_allclose(reloaded.serve(x), model.predict(x, verbose=0), atol=1e-5)


# ---------------------------------------------------------------- preprocessing


def test_hub_preprocessor_and_encoder_pipeline(tokenizer, preprocessor_path, encoder_path):
    texts = tf.constant(["good movie !", "bad film"])
    expected = BertPreprocessor(tokenizer, sequence_length=SEQ_LENGTH)(texts)
    packed = HubPreprocessor(preprocessor_path)(texts)
    np.testing.assert_array_equal(packed["input_word_ids"], expected["token_ids"])
    longer = HubPreprocessor(preprocessor_path, seq_length=9)(texts)
    assert longer["input_word_ids"].shape == (2, 9)
    pair = HubPreprocessor(preprocessor_path, seq_length=9)((texts, texts))
    expected_pair = BertPreprocessor(tokenizer, sequence_length=9)((texts, texts))
    np.testing.assert_array_equal(pair["input_type_ids"], expected_pair["segment_ids"])

    # A Keras model from strings to logits.
    strings = keras.Input((), dtype="string")
    encoded = HubEncoder(encoder_path, output_key="pooled_output")(
        HubPreprocessor(preprocessor_path)(strings)
    )
    model = keras.Model(strings, keras.layers.Dense(2)(encoded))
    assert model(texts).shape == (2, 2)
    assert HubPreprocessor(preprocessor_path).trainable_weights == []


def test_hub_text_inputs_from_kbert():
    ids = tf.constant([[2, 5, 3]])
    mapped = hub_text_inputs_from_kbert({"token_ids": ids, "padding_mask": tf.ones_like(ids)})
    np.testing.assert_array_equal(mapped["input_word_ids"], ids)
    np.testing.assert_array_equal(mapped["input_type_ids"], tf.zeros_like(ids))
    with pytest.raises(ValueError, match="missing \\['padding_mask'\\]"):
        hub_text_inputs_from_kbert({"token_ids": ids})


# ---------------------------------------------------------------- a module kbert did not write


@pytest.fixture(scope="module")
def tf_keras_path(tmp_path_factory):
    tf_keras = pytest.importorskip("tf_keras")
    tf_keras.utils.set_random_seed(0)
    inputs = tf_keras.Input((4,), name="features")
    hidden = tf_keras.layers.Dense(
        8, activation="relu", name="hidden", kernel_regularizer=tf_keras.regularizers.L2(1e-3)
    )(inputs)
    outputs = tf_keras.layers.Dense(3, name="scores")(tf_keras.layers.Dropout(0.5)(hidden))
    path = str(tmp_path_factory.mktemp("tf_keras") / "model")
    tf.saved_model.save(tf_keras.Model(inputs, outputs), path)
    return path


def test_tf_keras_module_fine_tunes(tf_keras_path):
    layer = HubLayer(tf_keras_path)
    assert len(layer.trainable_weights) == 4
    inputs = keras.Input((4,))
    model = keras.Model(inputs, keras.layers.Dense(1)(layer(inputs)))
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 4)).astype("float32")
    y = x @ np.array([1.0, -2.0, 0.5, 3.0], "float32")
    before = [v.numpy().copy() for v in layer.module.variables]
    model.compile(keras.optimizers.Adam(1e-2), "mse")
    loss_before = model.evaluate(x, y, verbose=0)
    model.fit(x, y, epochs=5, batch_size=16, verbose=0)
    assert model.evaluate(x, y, verbose=0) < loss_before
    assert all(
        not np.allclose(a, b.numpy()) for a, b in zip(before, layer.module.variables, strict=True)
    )
    # training=True reaches the module's dropout; inference is deterministic.
    np.testing.assert_array_equal(layer(x[:4]), layer(x[:4]))
    assert np.abs(layer(x[:4], training=True) - layer(x[:4])).max() > 0


def test_signature_and_output_key(tf_keras_path):
    layer = HubLayer(tf_keras_path, signature="serving_default", output_key="scores")
    x = np.ones((2, 4), "float32")
    np.testing.assert_allclose(layer(x), HubLayer(tf_keras_path)(x), atol=1e-6)
    assert layer.get_config()["signature"] == "serving_default"


def test_tensorflow_hub_resolves_handles(encoder_path):
    from kbert.hub.handles import _import_tensorflow_hub

    hub = _import_tensorflow_hub()  # works without pkg_resources (setuptools >= 81)
    assert hub.resolve(encoder_path) == encoder_path
    assert "pkg_resources" not in sys.modules or hasattr(sys.modules["pkg_resources"], "require")


# ---------------------------------------------------------------- errors


def test_clear_errors(tf_keras_path, encoder_path, tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        HubLayer(str(tmp_path / "missing"))
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("x")
    with pytest.raises(ValueError, match="not a SavedModel"):
        HubLayer(str(tmp_path / "empty"))
    with pytest.raises(ValueError, match="available signatures: \\['serving_default'\\]"):
        HubLayer(tf_keras_path, signature="tokens")
    with pytest.raises(ValueError, match="output_key 'logits' is not among .*pooled_output"):
        HubEncoder(encoder_path, output_key="logits")(
            {key: tf.ones((1, 3), tf.int32) for key in HUB_INPUT_KEYS}
        )
    with pytest.raises(ValueError, match="handle must be a str"):
        resolve_handle(3)

    module = tf.Module()
    module.double = tf.function(
        lambda x: {"y": 2 * x}, input_signature=[tf.TensorSpec([None], tf.float32)]
    )
    path = str(tmp_path / "uncallable")
    tf.saved_model.save(module, path, signatures={"double": module.double})
    with pytest.raises(ValueError, match="no __call__; pass signature= one of \\['double'\\]"):
        HubLayer(path)
    assert os.path.isdir(path)
    np.testing.assert_allclose(
        HubLayer(path, signature="double", output_key="y")(tf.constant([1.0, 2.0])), [2.0, 4.0]
    )


def _toy_encoder_module(
    path, input_keys=HUB_INPUT_KEYS, output_keys=("sequence_output", "pooled_output")
):
    """A one-variable module shaped like a Hub BERT encoder, with the given names; fast."""
    module = tf.Module()
    module.kernel = tf.Variable(tf.ones((4,)))

    @tf.function(autograph=False)
    def call(inputs, training=False):
        sequence = tf.cast(inputs[input_keys[0]], tf.float32)[:, :, None] * module.kernel
        return {output_keys[0]: sequence, output_keys[1]: sequence[:, 0]}  # (b, s, 4), (b, 4)

    spec = {key: tf.TensorSpec([None, None], tf.int32, name=key) for key in input_keys}
    for training in (False, True):
        call.get_concrete_function(spec, training=training)
    module.__call__ = call
    tf.saved_model.save(module, str(path))
    return str(path)


def test_encoder_module_with_other_input_names_is_refused_up_front(tmp_path):
    good = _toy_encoder_module(tmp_path / "good")
    x = {key: tf.ones((1, 3), tf.int32) for key in HUB_INPUT_KEYS}
    assert HubEncoder(good)(x)["pooled_output"].shape == (1, 4)
    renamed = _toy_encoder_module(tmp_path / "renamed", ("ids", "mask", "types"))
    with pytest.raises(ValueError) as error:
        HubEncoder(renamed)
    message = str(error.value)
    assert "['input_word_ids', 'input_mask', 'input_type_ids']" in message
    assert "takes a dict with the keys ['ids', 'mask', 'types']" in message
    assert renamed in message and "concrete function" not in message and len(message) < 400
    with pytest.raises(ValueError, match="takes a dict with the keys \\['ids'"):
        hub_encoder_model(renamed)


def test_encoder_module_with_other_output_names_is_refused_by_hub_encoder_model(tmp_path):
    renamed = _toy_encoder_module(tmp_path / "outputs", output_keys=("tokens", "summary"))
    with pytest.raises(ValueError) as error:
        hub_encoder_model(renamed)
    message = str(error.value)
    assert "outputs include ['sequence_output', 'pooled_output']" in message
    assert "returns the outputs ['summary', 'tokens']" in message and renamed in message
    model = hub_encoder_model(_toy_encoder_module(tmp_path / "good"))
    assert sorted(model.output) == ["pooled_output", "sequence_output"]


# ---------------------------------------------------------------- a real checkpoint


@pytest.mark.slow
def test_minilm_round_trip_through_hub_format(minilm_dir, tmp_path):
    from kbert.checkpoints import load_hf_bert

    encoder, tokenizer = load_hf_bert(minilm_dir)
    pre_path = export_hub_preprocessor(tokenizer, tmp_path / "pre", seq_length=32)
    enc_path = export_hub_encoder(encoder, tmp_path / "enc")
    texts = tf.constant(["The cat sat on the mat.", "Transfer learning in NLP, with TF Hub!"])
    packed = HubPreprocessor(pre_path)(texts)
    outputs = HubEncoder(enc_path)(packed)
    reference = BertPreprocessor(tokenizer, sequence_length=32)(texts)
    np.testing.assert_array_equal(packed["input_word_ids"], reference["token_ids"])
    expected = encoder(reference, training=False)
    np.testing.assert_allclose(outputs["pooled_output"], expected["pooled_output"], atol=1e-5)
    np.testing.assert_allclose(outputs["sequence_output"], expected["sequence_output"], atol=1e-5)
