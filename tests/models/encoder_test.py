import json
import os
import pathlib

import keras
import numpy as np
import pytest

from kbert.models import PRESETS, Encoder, EncoderConfig

IDS = np.array([[2, 7, 8, 3, 0, 0], [2, 9, 9, 3, 11, 3]], "int32")
INPUTS = {
    "token_ids": IDS,
    "segment_ids": np.array([[0] * 6, [0, 0, 0, 0, 1, 1]], "int32"),
    "padding_mask": (IDS != 0).astype("int32"),
}


def _numpy(x):
    return np.asarray(keras.ops.convert_to_numpy(x), dtype="float32")


def test_outputs_and_hidden_states():
    encoder = Encoder.from_preset("tiny")
    outputs = encoder(INPUTS)
    assert tuple(outputs["sequence_output"].shape) == (2, 6, 16)
    assert tuple(outputs["pooled_output"].shape) == (2, 16)
    assert len(outputs["hidden_states"]) == 3  # embeddings + 2 blocks
    np.testing.assert_array_equal(
        _numpy(outputs["hidden_states"][-1]), _numpy(outputs["sequence_output"])
    )


def test_layer_groups_are_named_bottom_to_top():
    encoder = Encoder.from_preset("tiny")
    assert list(encoder.layer_groups()) == ["embeddings", "block_0", "block_1", "pooler"]
    pre_ln = Encoder.from_preset("tiny", norm_first=True)
    assert list(pre_ln.layer_groups())[-2:] == ["final_norm", "pooler"]
    block = encoder.layer_groups()["block_1"][0]
    # Each block exposes its sublayers for adapters / LoRA / prefix wrappers.
    assert block.attention.query.name == "query" and block.feed_forward.intermediate


def test_config_round_trip_and_keras_file(tmp_path):
    encoder = Encoder.from_preset("tiny", embedding_dim=8, norm_first=True, causal=True)
    rebuilt = Encoder.from_config(encoder.get_config())
    assert rebuilt.config == encoder.config
    path = os.path.join(tmp_path, "encoder.keras")
    encoder.save(path)
    restored = keras.models.load_model(path)
    assert isinstance(restored, Encoder)
    np.testing.assert_allclose(
        _numpy(restored(INPUTS)["sequence_output"]),
        _numpy(encoder(INPUTS)["sequence_output"]),
        atol=1e-6,
    )


def test_encoder_takes_its_config_object():
    config = EncoderConfig.preset("tiny", causal=True)
    encoder = Encoder(config, skip_padding=False, dtype="mixed_float16", name="lm")
    assert encoder.config is config and encoder.name == "lm" and not encoder.skip_padding
    assert encoder.layer_dtype == "mixed_float16" and encoder.dtype_policy.name == "float32"
    assert encoder.get_config() == {
        "name": "lm",
        "trainable": True,
        **config.to_dict(),
        "skip_padding": False,
        "dtype": "mixed_float16",
    }
    with pytest.raises(ValueError, match="config must be a kbert.models.EncoderConfig"):
        Encoder(config.to_dict())


# Written by kbert at 29a3c55, when Encoder took the EncoderConfig fields as its own arguments:
# the `.keras` config of a plain and an adapted (mixed-precision, shared-layer) encoder, and
# their weights' paths.
FLAT_CONFIGS = pathlib.Path(__file__).parent / "fixtures" / "encoder_flat_configs.json"


@pytest.mark.parametrize("key", ["plain", "adapted"])
def test_configs_saved_by_the_flat_encoder_still_load(key):
    saved = json.loads(FLAT_CONFIGS.read_text())[key]
    encoder = keras.saving.deserialize_keras_object(saved["serialized"])
    assert isinstance(encoder, Encoder)
    assert encoder.get_config() == saved["serialized"]["config"]  # saved configs are unchanged
    assert [variable.path for variable in encoder.weights] == saved["weight_paths"]
    assert Encoder.from_config(saved["serialized"]["config"]).get_config() == encoder.get_config()


def test_padding_does_not_change_real_tokens():
    encoder = Encoder.from_preset("tiny", dropout=0.0, attention_dropout=0.0)
    changed = {**INPUTS, "token_ids": np.where(INPUTS["padding_mask"] == 1, IDS, 17)}
    a = _numpy(encoder(INPUTS)["sequence_output"])
    b = _numpy(encoder(changed)["sequence_output"])
    np.testing.assert_allclose(a[0, :4], b[0, :4], atol=1e-5)


def test_causal_encoder_ignores_the_future_and_bidirectional_does_not():
    changed = {**INPUTS, "token_ids": IDS.copy()}
    changed["token_ids"][:, 4:] = 5
    for causal in (True, False):
        encoder = Encoder.from_preset("tiny", causal=causal, norm_first=causal)
        a = _numpy(encoder(INPUTS)["sequence_output"])[1, :4]
        b = _numpy(encoder(changed)["sequence_output"])[1, :4]
        assert np.allclose(a, b, atol=1e-5) == causal


def test_shared_layers_hold_one_block_of_weights():
    separate = Encoder.from_preset("tiny", num_layers=4)
    shared = Encoder.from_preset("tiny", num_layers=4, share_layers=True)
    block = separate.blocks[0].count_params()
    assert separate.count_params() - shared.count_params() == 3 * block
    assert len({id(b) for b in shared.blocks}) == 1
    assert len(shared(INPUTS)["hidden_states"]) == 5


def test_fit_updates_every_weight_through_a_head():
    encoder = Encoder.from_preset("tiny")
    logits = keras.layers.Dense(3)(encoder.output["pooled_output"])
    model = keras.Model(encoder.inputs, logits)
    model.compile(
        optimizer=keras.optimizers.Adam(1e-2),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    before = [np.array(w) for w in encoder.trainable_weights]
    history = model.fit(INPUTS, np.array([0, 2]), epochs=3, verbose=0)
    assert np.isfinite(history.history["loss"]).all()
    moved = [
        not np.allclose(np.array(w), b)
        for w, b in zip(encoder.trainable_weights, before, strict=True)
    ]
    unmoved = [w.path for w, m in zip(encoder.trainable_weights, moved, strict=True) if not m]
    assert all(path.endswith("key/bias") for path in unmoved), unmoved


def test_bfloat16_and_xla():
    encoder = Encoder.from_preset("tiny", dtype="mixed_bfloat16")
    out = encoder(INPUTS)["sequence_output"]
    assert keras.backend.standardize_dtype(out.dtype) == "bfloat16"
    import tensorflow as tf

    compiled = tf.function(lambda x: encoder(x)["sequence_output"], jit_compile=True)
    # bfloat16 keeps 8 bits of mantissa: XLA and eager may round differently by a few ulps.
    np.testing.assert_allclose(_numpy(compiled(INPUTS)), _numpy(out), atol=0.05, rtol=0.03)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_preset_is_a_valid_config(name):
    config = EncoderConfig.preset(name)
    # Every field the preset names is kept, and the config rebuilds from its dict.
    assert {key: config.to_dict()[key] for key in PRESETS[name]} == PRESETS[name]
    assert EncoderConfig(**config.to_dict()) == config
    assert config.hidden_dim % config.num_heads == 0
    with pytest.raises(ValueError, match="hidden_dim"):
        EncoderConfig.preset(name, num_heads=config.hidden_dim + 1)


def test_tutorial_preset_has_about_50m_parameters():
    config = EncoderConfig.preset("tutorial_50m")
    h, f, layers = config.hidden_dim, config.intermediate_dim, config.num_layers
    per_block = 4 * (h * h + h) + (h * f + f) + (f * h + h) + 4 * h
    total = (
        (config.vocabulary_size + config.max_sequence_length) * h
        + layers * per_block
        + 2 * h
        + h * h
        + h
    )
    assert 45e6 < total < 55e6


@pytest.mark.slow
def test_tutorial_preset_builds_with_the_counted_parameters():
    encoder = Encoder.from_preset("tutorial_50m")
    assert 45e6 < encoder.count_params() < 55e6


def test_bad_configs_are_errors():
    with pytest.raises(ValueError, match="unknown encoder preset 'huge'"):
        Encoder.from_preset("huge")
    with pytest.raises(ValueError, match="divisible by num_heads"):
        Encoder.from_preset("tiny", num_heads=3)
    with pytest.raises(ValueError, match="num_layers must be a positive int; received 0"):
        Encoder.from_preset("tiny", num_layers=0)
    with pytest.raises(ValueError, match="dropout must be in"):
        Encoder.from_preset("tiny", dropout=1.5)


def test_input_longer_than_position_table_is_an_error():
    encoder = Encoder.from_preset("tiny")
    with pytest.raises(ValueError, match="max_sequence_length=16"):
        encoder(encoder.dummy_inputs(1, 20))


def test_mixed_precision_policy_survives_config_and_saving(tmp_path):
    encoder = Encoder.from_preset("tiny", dtype="mixed_float16")
    assert Encoder.from_config(encoder.get_config()).embeddings.dtype_policy.name == "mixed_float16"
    encoder.save(tmp_path / "mixed.keras")
    restored = keras.models.load_model(tmp_path / "mixed.keras")
    assert restored.embeddings.dtype_policy.name == "mixed_float16"
