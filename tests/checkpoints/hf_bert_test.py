import json

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

from kbert.checkpoints import load_hf_bert_encoder
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
    ref_sequence, ref_pooled = bert_forward(tensors, 2, IDS, SEGMENTS, MASK,
                                            approximate_gelu=activation != "gelu")
    real = MASK.astype(bool)
    np.testing.assert_allclose(sequence[real], ref_sequence[real], atol=1e-5)
    np.testing.assert_allclose(pooled, ref_pooled, atol=1e-5)


def test_bert_prefix_and_old_layer_norm_names_are_accepted(tiny_checkpoint):
    path, tensors = tiny_checkpoint
    renamed = {"bert." + k.replace("LayerNorm.weight", "LayerNorm.gamma")
               .replace("LayerNorm.bias", "LayerNorm.beta"): v for k, v in tensors.items()}
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
    with pytest.raises(ValueError, match=r"'encoder.layer.1.intermediate.dense.weight' has shape "
                                         r"\(31, 16\); expected \(32, 16\)"):
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
    sequence, _ = _encode(load_hf_bert_encoder(minilm_dir, activation="gelu_approximate"),
                          ids, segments, mask)
    assert np.abs(sequence - np.array(ref["sequence_output"]))[real].max() <= 1e-4

    tensors = load_file(str(minilm_dir / "model.safetensors"))
    exact_sequence, exact_pooled = _encode(load_hf_bert_encoder(minilm_dir), ids, segments, mask)
    np_sequence, np_pooled = bert_forward(tensors, 12, ids, segments, mask)
    assert np.abs(exact_sequence - np_sequence)[real].max() <= 1e-4
    assert np.abs(exact_pooled - np_pooled).max() <= 1e-4
