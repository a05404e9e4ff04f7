import json
import re

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

from kbert.checkpoints import load_hf_bert, load_hf_bert_encoder, load_hf_bert_tokenizer
from tests.checkpoints.numpy_bert import bert_forward, write_tiny_checkpoint

IDS = np.array([[2, 7, 8, 9, 3, 0], [2, 10, 11, 3, 12, 3]], "int32")
SEGMENTS = np.array([[0] * 6, [0, 0, 0, 0, 1, 1]], "int32")
MASK = (IDS != 0).astype("int32")


def _encode(encoder, ids=IDS, segments=SEGMENTS, mask=MASK):
    out = encoder({"token_ids": ids, "segment_ids": segments, "padding_mask": mask})
    return np.array(out["sequence_output"]), np.array(out["pooled_output"])


@pytest.fixture
def tiny_checkpoint(tmp_path):
    tensors = write_tiny_checkpoint(tmp_path / "ckpt")
    return tmp_path / "ckpt", tensors


@pytest.mark.parametrize("activation", ["gelu", "gelu_approximate"])
def test_import_matches_numpy_reference(tiny_checkpoint, activation):
    path, tensors = tiny_checkpoint
    encoder = load_hf_bert_encoder(path, activation=activation)
    sequence, pooled = _encode(encoder)
    ref_sequence, ref_pooled = bert_forward(
        tensors, 2, IDS, SEGMENTS, MASK, approximate_gelu=activation != "gelu"
    )
    real = MASK.astype(bool)
    np.testing.assert_allclose(sequence[real], ref_sequence[real], atol=1e-5)
    np.testing.assert_allclose(pooled, ref_pooled, atol=1e-5)


def test_bert_prefix_and_old_layer_norm_names_are_accepted(tiny_checkpoint):
    path, tensors = tiny_checkpoint
    renamed = {
        "bert."
        + k.replace("LayerNorm.weight", "LayerNorm.gamma").replace(
            "LayerNorm.bias", "LayerNorm.beta"
        ): v
        for k, v in tensors.items()
    }
    save_file(renamed, str(path / "model.safetensors"))
    sequence, _ = _encode(load_hf_bert_encoder(path))
    reference = _encode(load_hf_bert_encoder(path))[0]
    np.testing.assert_array_equal(sequence, reference)


@pytest.mark.parametrize("missing", ["config.json", "vocab.txt", "model.safetensors"])
def test_missing_file_is_named(tiny_checkpoint, missing):
    path, _ = tiny_checkpoint
    (path / missing).unlink()
    with pytest.raises(ValueError, match=f"missing {missing}"):
        load_hf_bert_encoder(path)


def test_missing_directory_is_named(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        load_hf_bert_encoder(tmp_path / "nowhere")


def test_tensor_of_wrong_shape_is_named(tiny_checkpoint):
    path, tensors = tiny_checkpoint
    tensors["encoder.layer.1.intermediate.dense.weight"] = np.zeros((31, 16), np.float32)
    save_file(tensors, str(path / "model.safetensors"))
    with pytest.raises(
        ValueError,
        match=r"'encoder.layer.1.intermediate.dense.weight' has shape "
        r"\(31, 16\); expected \(32, 16\)",
    ):
        load_hf_bert_encoder(path)


def test_missing_tensor_is_named(tiny_checkpoint):
    path, tensors = tiny_checkpoint
    del tensors["pooler.dense.bias"]
    save_file(tensors, str(path / "model.safetensors"))
    with pytest.raises(ValueError, match="tensor 'pooler.dense.bias' is missing"):
        load_hf_bert_encoder(path)


def test_corrupt_weights_and_config_are_named(tiny_checkpoint):
    path, _ = tiny_checkpoint
    (path / "model.safetensors").write_bytes(b"not a safetensors file")
    with pytest.raises(ValueError, match="cannot be read as safetensors"):
        load_hf_bert_encoder(path)
    (path / "config.json").write_text("{")
    with pytest.raises(ValueError, match="config.json: not valid JSON"):
        load_hf_bert_encoder(path)


def test_unsupported_architecture_is_named(tiny_checkpoint):
    path, _ = tiny_checkpoint
    config = json.loads((path / "config.json").read_text())
    (path / "config.json").write_text(json.dumps({**config, "model_type": "roberta"}))
    with pytest.raises(ValueError, match="model_type 'roberta' is not supported"):
        load_hf_bert_encoder(path)
    del config["num_hidden_layers"]
    (path / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match="'num_hidden_layers' is missing"):
        load_hf_bert_encoder(path)


def _change_config(path, **changes):
    config = json.loads((path / "config.json").read_text())
    (path / "config.json").write_text(json.dumps({**config, **changes}))


@pytest.mark.parametrize("layers", [1, 3])
def test_config_layer_count_must_match_the_weights(tiny_checkpoint, layers):
    path, _ = tiny_checkpoint
    _change_config(path, num_hidden_layers=layers)
    with pytest.raises(
        ValueError,
        match=rf"config\.json: num_hidden_layers is {layers} but "
        r".*model\.safetensors holds 2 layers",
    ):
        load_hf_bert_encoder(path)


@pytest.mark.parametrize("eps", [0, -1e-12, float("nan"), float("inf"), "1e-12", True, None])
def test_layer_norm_eps_must_be_a_positive_number(tiny_checkpoint, eps):
    path, _ = tiny_checkpoint
    _change_config(path, layer_norm_eps=eps)
    with pytest.raises(
        ValueError,
        match=r"config\.json: layer_norm_eps must be a positive, "
        rf"finite number; received {re.escape(repr(eps))}",
    ):
        load_hf_bert_encoder(path)


@pytest.mark.parametrize(
    "field, value, expected",
    [
        ("vocab_size", 0, "vocab_size must be a positive int; received 0"),
        ("num_hidden_layers", -2, "num_hidden_layers must be a positive int; received -2"),
        ("hidden_size", 16.0, "hidden_size must be a positive int; received 16.0"),
        ("num_attention_heads", "2", "num_attention_heads must be a positive int; received '2'"),
        (
            "num_attention_heads",
            3,
            "hidden_size must be divisible by num_attention_heads; received "
            "hidden_size 16 and num_attention_heads 3",
        ),
        ("intermediate_size", True, "intermediate_size must be a positive int; received True"),
        (
            "max_position_embeddings",
            None,
            "max_position_embeddings must be a positive int; received None",
        ),
        ("type_vocab_size", 0, "type_vocab_size must be a positive int; received 0"),
        ("hidden_act", ["gelu"], "hidden_act ['gelu'] is not supported; expected one of"),
        (
            "hidden_dropout_prob",
            1.5,
            "hidden_dropout_prob must be a number in [0, 1); received 1.5",
        ),
        (
            "attention_probs_dropout_prob",
            "0.1",
            "attention_probs_dropout_prob must be a number in [0, 1); received '0.1'",
        ),
        (
            "initializer_range",
            -0.02,
            "initializer_range must be a positive, finite number; received -0.02",
        ),
    ],
)
def test_bad_config_field_is_named(tiny_checkpoint, field, value, expected):
    path, _ = tiny_checkpoint
    _change_config(path, **{field: value})
    with pytest.raises(ValueError, match=r"config\.json: " + re.escape(expected)):
        load_hf_bert_encoder(path)


@pytest.mark.parametrize("lines", [39, 41])
def test_vocab_size_must_match_the_embedding_table(tiny_checkpoint, lines):
    path, _ = tiny_checkpoint
    tokens = (path / "vocab.txt").read_text().split("\n")[:-1]
    tokens = (tokens + ["##extra"])[:lines]
    (path / "vocab.txt").write_text("\n".join(tokens) + "\n")
    expected = (
        rf"vocab\.txt: has {lines} lines \(tokens\) but .*model\.safetensors's "
        r"embeddings\.word_embeddings\.weight has 40 rows \(shape \(40, 16\)\)"
    )
    with pytest.raises(ValueError, match=expected):
        load_hf_bert(path)
    with pytest.raises(ValueError, match=expected):
        load_hf_bert_encoder(path)


@pytest.mark.parametrize("name", ["config.json", "tokenizer_config.json"])
@pytest.mark.parametrize(
    "text, kind", [("[1, 2]", "array"), ('"bert"', "string"), ("null", "null")]
)
def test_json_file_that_is_not_an_object_is_named(tiny_checkpoint, name, text, kind):
    path, _ = tiny_checkpoint
    (path / name).write_text(text)
    load = load_hf_bert_encoder if name == "config.json" else load_hf_bert_tokenizer
    with pytest.raises(
        ValueError,
        match=rf"{re.escape(name)}: expected a JSON object .* "
        rf"received a JSON {kind}",
    ):
        load(path)


def test_tokenizer_config_setting_of_the_wrong_type_is_named(tiny_checkpoint):
    path, _ = tiny_checkpoint
    (path / "tokenizer_config.json").write_text('{"do_lower_case": "false"}')
    with pytest.raises(
        ValueError,
        match=r"tokenizer_config\.json: do_lower_case must be true or "
        r"false; received 'false'",
    ):
        load_hf_bert_tokenizer(path)


@pytest.mark.parametrize(
    "name, content, offset",
    [
        ("vocab.txt", b"[PAD]\n\xff[UNK]\n", 6),
        ("tokenizer_config.json", b'{"do_lower_case": "\xe9"}', 19),
        ("config.json", b'{"model_type": "b\xe9rt"}', 17),
    ],
)
def test_file_that_is_not_utf8_is_named(tiny_checkpoint, name, content, offset):
    path, _ = tiny_checkpoint
    (path / name).write_bytes(content)
    load = load_hf_bert_encoder if name == "config.json" else load_hf_bert_tokenizer
    with pytest.raises(
        ValueError,
        match=rf"{re.escape(name)}'?:? (is )?not valid UTF-8 \(byte "
        rf"offset {offset}: .*expected a UTF-8",
    ):
        load(path)


def test_empty_vocab_is_named(tiny_checkpoint):
    path, _ = tiny_checkpoint
    (path / "vocab.txt").write_bytes(b"")
    for load in (load_hf_bert_tokenizer, load_hf_bert_encoder):
        with pytest.raises(ValueError, match=r"vocab\.txt' is empty; expected one token per line"):
            load(path)


def test_repeated_vocab_token_is_refused(tiny_checkpoint):
    """Hugging Face keeps the last id of a repeated token (the first is unreachable); kbert
    refuses the file instead of guessing."""
    path, _ = tiny_checkpoint
    tokens = (path / "vocab.txt").read_text().split("\n")[:-1]
    tokens[-1] = tokens[5]
    (path / "vocab.txt").write_text("\n".join(tokens) + "\n")
    with pytest.raises(ValueError, match=r"vocab\.txt' must not repeat tokens .* \['a'\]"):
        load_hf_bert_tokenizer(path)


@pytest.mark.slow
def test_minilm_matches_keras_hub_and_numpy_reference(minilm_dir):
    """Real weights: kbert (tanh GELU) vs keras-hub, and kbert (exact GELU) vs NumPy float64."""
    import keras_hub

    rng = np.random.default_rng(0)
    ids = rng.integers(1000, 30000, (3, 24)).astype("int32")
    ids[:, 0] = 101
    mask = np.ones_like(ids)
    mask[1, 15:] = 0
    segments = np.zeros_like(ids)
    segments[2, 12:] = 1
    real = mask.astype(bool)

    reference = keras_hub.models.BertBackbone.from_preset(str(minilm_dir))
    ref = reference({"token_ids": ids, "segment_ids": segments, "padding_mask": mask})
    sequence, _ = _encode(
        load_hf_bert_encoder(minilm_dir, activation="gelu_approximate"), ids, segments, mask
    )
    assert np.abs(sequence - np.array(ref["sequence_output"]))[real].max() <= 1e-4

    tensors = load_file(str(minilm_dir / "model.safetensors"))
    exact_sequence, exact_pooled = _encode(load_hf_bert_encoder(minilm_dir), ids, segments, mask)
    np_sequence, np_pooled = bert_forward(tensors, 12, ids, segments, mask)
    assert np.abs(exact_sequence - np_sequence)[real].max() <= 1e-4
    assert np.abs(exact_pooled - np_pooled).max() <= 1e-4
