import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import tensorflow as tf

from kbert.export.hub_export import export_hub_encoder, export_hub_preprocessor
from kbert.models import Encoder, MaskedLanguageModel
from kbert.text import BertPreprocessor, WordPieceTokenizer

VOCABULARY = [
    "[PAD]",
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "[MASK]",
    "hello",
    "world",
    "!",
    "un",
    "##aff",
    "##able",
    "the",
    "cat",
    "sat",
    "on",
    "mat",
    ".",
]
TEXTS = ["Hello world!", "The cat sat on the mat.", "unaffable", "", "the cat hello world the cat"]
PAIRS = ["world", "the mat sat on the cat hello world", "un", "hello", "the"]
SEQ_LENGTH = 8


@pytest.fixture(scope="module")
def tokenizer():
    return WordPieceTokenizer(VOCABULARY)


@pytest.fixture(scope="module")
def preprocessor_path(tokenizer, tmp_path_factory):
    path = tmp_path_factory.mktemp("hub") / "preprocessor"
    return export_hub_preprocessor(tokenizer, path, seq_length=SEQ_LENGTH)


@pytest.fixture(scope="module")
def encoder_and_mlm():
    keras_seed(3)
    encoder = Encoder.from_preset("tiny", vocabulary_size=len(VOCABULARY), dropout=0.3)
    return encoder, MaskedLanguageModel(encoder)


@pytest.fixture(scope="module")
def encoder_path(encoder_and_mlm, tmp_path_factory):
    encoder, mlm = encoder_and_mlm
    return export_hub_encoder(encoder, tmp_path_factory.mktemp("hub") / "encoder", mlm_model=mlm)


def keras_seed(seed):
    import keras

    keras.utils.set_random_seed(seed)


def _inputs(tokenizer, texts=TEXTS):
    packed = BertPreprocessor(tokenizer, sequence_length=SEQ_LENGTH)(texts)
    return {
        "input_word_ids": packed["token_ids"],
        "input_mask": packed["padding_mask"],
        "input_type_ids": packed["segment_ids"],
    }


def _kbert(inputs):
    return {
        "token_ids": inputs["input_word_ids"],
        "padding_mask": inputs["input_mask"],
        "segment_ids": inputs["input_type_ids"],
    }


# ---------------------------------------------------------------- preprocessor


def test_preprocessor_call_equals_bert_preprocessor(tokenizer, preprocessor_path):
    loaded = tf.saved_model.load(preprocessor_path)
    outputs = loaded(tf.constant(TEXTS))
    expected = BertPreprocessor(tokenizer, sequence_length=SEQ_LENGTH)(TEXTS)
    assert sorted(outputs) == ["input_mask", "input_type_ids", "input_word_ids"]
    for hub, kbert in (
        ("input_word_ids", "token_ids"),
        ("input_mask", "padding_mask"),
        ("input_type_ids", "segment_ids"),
    ):
        assert outputs[hub].dtype == tf.int32
        assert outputs[hub].shape == (len(TEXTS), SEQ_LENGTH)
        np.testing.assert_array_equal(outputs[hub].numpy(), expected[kbert].numpy())


def test_tokenize_groups_wordpieces_by_word(tokenizer, preprocessor_path):
    loaded = tf.saved_model.load(preprocessor_path)
    tokens = loaded.tokenize(tf.constant(TEXTS))
    assert isinstance(tokens, tf.RaggedTensor)
    assert tokens.shape.rank == 3 and tokens.dtype == tf.int32
    assert tokens.to_list()[2] == [[8, 9, 10]]  # one word, three wordpieces
    assert tokens.merge_dims(1, 2).to_list() == tokenizer(TEXTS).to_list()


@pytest.mark.parametrize("seq_length", [5, SEQ_LENGTH, 12])
def test_bert_pack_inputs_equals_bert_preprocessor(tokenizer, preprocessor_path, seq_length):
    loaded = tf.saved_model.load(preprocessor_path)
    first, second = loaded.tokenize(tf.constant(TEXTS)), loaded.tokenize(tf.constant(PAIRS))
    reference = BertPreprocessor(tokenizer, sequence_length=seq_length)
    for segments, texts in (([first], TEXTS), ([first, second], (TEXTS, PAIRS))):
        outputs = loaded.bert_pack_inputs(segments, seq_length=seq_length)
        expected = reference(texts)
        np.testing.assert_array_equal(outputs["input_word_ids"], expected["token_ids"])
        np.testing.assert_array_equal(outputs["input_type_ids"], expected["segment_ids"])
        np.testing.assert_array_equal(outputs["input_mask"], expected["padding_mask"])
    # Default length, and already merged [batch, tokens] segments.
    default = loaded.bert_pack_inputs([first.merge_dims(1, 2)])
    np.testing.assert_array_equal(
        default["input_word_ids"], loaded(tf.constant(TEXTS))["input_word_ids"]
    )


def test_preprocessor_stores_vocabulary_asset(preprocessor_path):
    with open(os.path.join(preprocessor_path, "assets", "vocab.txt"), encoding="utf-8") as file:
        assert file.read().splitlines() == VOCABULARY


def test_preprocessor_rejects_bad_arguments(tokenizer, tmp_path):
    with pytest.raises(ValueError, match="WordPieceTokenizer"):
        export_hub_preprocessor(VOCABULARY, tmp_path / "a")
    with pytest.raises(ValueError, match="seq_length must be an int of at least 3"):
        export_hub_preprocessor(tokenizer, tmp_path / "a", seq_length=2)
    with pytest.raises(ValueError, match="truncation must be one of"):
        export_hub_preprocessor(tokenizer, tmp_path / "a", truncation="middle")


# ---------------------------------------------------------------- encoder


def _assert_matches_encoder(outputs, encoder, inputs):
    expected = encoder(_kbert(inputs), training=False)
    np.testing.assert_allclose(outputs["pooled_output"], expected["pooled_output"], atol=1e-5)
    np.testing.assert_allclose(outputs["default"], expected["pooled_output"], atol=1e-5)
    np.testing.assert_allclose(outputs["sequence_output"], expected["sequence_output"], atol=1e-5)
    assert len(outputs["encoder_outputs"]) == encoder.config.num_layers
    for got, want in zip(outputs["encoder_outputs"], expected["hidden_states"][1:], strict=True):
        np.testing.assert_allclose(got, want, atol=1e-5)


def test_encoder_reloads_with_equal_outputs(tokenizer, encoder_and_mlm, encoder_path):
    encoder, _ = encoder_and_mlm
    loaded = tf.saved_model.load(encoder_path)
    inputs = _inputs(tokenizer)
    outputs = loaded(inputs, training=False)
    assert outputs["pooled_output"].dtype == tf.float32
    assert outputs["sequence_output"].shape == (len(TEXTS), SEQ_LENGTH, 16)
    _assert_matches_encoder(outputs, encoder, inputs)
    serving = loaded.signatures["serving_default"](**inputs)
    np.testing.assert_allclose(serving["pooled_output"], outputs["pooled_output"], atol=1e-6)
    assert len(loaded.variables) == len(encoder.variables)
    assert len(loaded.trainable_variables) == len(encoder.trainable_variables) > 0
    assert list(loaded.regularization_losses) == []


def test_encoder_training_turns_dropout_on(tokenizer, encoder_path):
    loaded = tf.saved_model.load(encoder_path)
    inputs = _inputs(tokenizer)
    inference = loaded(inputs, training=False)["sequence_output"].numpy()
    np.testing.assert_array_equal(inference, loaded(inputs)["sequence_output"])  # default False
    training = loaded(inputs, training=True)["sequence_output"].numpy()
    assert np.abs(training - inference).max() > 1e-3


def test_mlm_present_only_with_mlm_model(tokenizer, encoder_and_mlm, encoder_path, tmp_path):
    encoder, mlm = encoder_and_mlm
    loaded = tf.saved_model.load(encoder_path)
    inputs = _inputs(tokenizer)
    positions = tf.constant([[1, 2]] * len(TEXTS), tf.int32)
    outputs = loaded.mlm(dict(inputs, masked_lm_positions=positions), training=False)
    assert outputs["mlm_logits"].shape == (len(TEXTS), 2, len(VOCABULARY))
    expected = mlm.call_head(encoder(_kbert(inputs)), {"mask_positions": positions})["logits"]
    np.testing.assert_allclose(outputs["mlm_logits"], expected, atol=1e-5)
    _assert_matches_encoder(outputs, encoder, inputs)

    plain = tf.saved_model.load(export_hub_encoder(encoder, tmp_path / "plain"))
    assert not hasattr(plain, "mlm")


def test_encoder_rejects_bad_arguments(encoder_and_mlm, tmp_path):
    encoder, mlm = encoder_and_mlm
    with pytest.raises(ValueError, match="kbert.models.Encoder"):
        export_hub_encoder(mlm, tmp_path / "a")
    other = MaskedLanguageModel(Encoder.from_preset("tiny", vocabulary_size=len(VOCABULARY)))
    with pytest.raises(ValueError, match="different encoder"):
        export_hub_encoder(encoder, tmp_path / "a", mlm_model=other)


def test_exports_refuse_non_empty_path_and_leave_no_temporaries(tokenizer, tmp_path):
    target = tmp_path / "taken"
    target.mkdir()
    (target / "file").write_text("x")
    with pytest.raises(ValueError, match="exists and is not empty"):
        export_hub_preprocessor(tokenizer, target)
    (tmp_path / "empty").mkdir()
    written = export_hub_preprocessor(tokenizer, tmp_path / "empty", seq_length=4)
    assert os.path.isfile(os.path.join(written, "saved_model.pb"))
    assert sorted(os.listdir(tmp_path)) == ["empty", "taken"]  # no .tmp- directories


FRESH_PROCESS = textwrap.dedent("""
    import sys, types
    import numpy as np
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (the preprocessor's ops)
    try:
        import pkg_resources  # noqa: F401
    except ImportError:  # tensorflow_hub 0.16 needs it; setuptools >= 81 dropped it
        from packaging.version import parse
        sys.modules["pkg_resources"] = types.SimpleNamespace(parse_version=parse)
    import tensorflow_hub as hub
    preprocessor = hub.load(sys.argv[1])
    encoder = hub.load(sys.argv[2])
    inputs = preprocessor(tf.constant(sys.argv[4:]))
    outputs = encoder(inputs, training=False)
    np.savez(sys.argv[3], pooled=outputs["pooled_output"].numpy(),
             sequence=outputs["sequence_output"].numpy(), **inputs)
    assert "kbert" not in sys.modules
""")


@pytest.mark.slow
def test_reloads_in_fresh_process_without_kbert(
    tokenizer, encoder_and_mlm, preprocessor_path, encoder_path, tmp_path
):
    encoder, _ = encoder_and_mlm
    result = tmp_path / "outputs.npz"
    subprocess.run(
        [sys.executable, "-c", FRESH_PROCESS, preprocessor_path, encoder_path, str(result), *TEXTS],
        check=True,
        timeout=300,
    )
    arrays = np.load(result)
    inputs = _inputs(tokenizer)
    for key in inputs:
        np.testing.assert_array_equal(arrays[key], inputs[key])
    expected = encoder(_kbert(inputs), training=False)
    np.testing.assert_allclose(arrays["pooled"], expected["pooled_output"], atol=1e-5)
    np.testing.assert_allclose(arrays["sequence"], expected["sequence_output"], atol=1e-5)
