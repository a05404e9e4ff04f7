import os
import tempfile

import keras
import numpy as np
import pytest

from kbert.models import peft
from kbert.models.encoder import Encoder

INPUTS = {
    "token_ids": np.array([[2, 5, 7, 3, 0, 0], [2, 9, 8, 4, 6, 3]], "int32"),
    "segment_ids": np.zeros((2, 6), "int32"),
    "padding_mask": np.array([[1, 1, 1, 1, 0, 0], [1] * 6], "int32"),
}
REAL = INPUTS["padding_mask"].astype(bool)


def _encoder(seed=0):
    keras.utils.set_random_seed(seed)
    return Encoder.from_preset("tiny")


def _sequence(model):
    return np.array(model(INPUTS, training=False)["sequence_output"])[REAL]


def _randomize(variables, seed=0, scale=0.3):
    rng = np.random.default_rng(seed)
    for variable in variables:
        variable.assign(rng.normal(scale=scale, size=variable.shape))


def _adapter_variables(encoder, name):
    return [
        v for _, wrapper in peft._adapted_sublayers(encoder) for v in wrapper.adapters[name].weights
    ]


def _classifier(encoder):
    logits = keras.layers.Dense(2, name="head")(encoder.output["pooled_output"])
    return keras.Model(encoder.inputs, logits)


def _fit(model, steps=3):
    model.compile(
        optimizer=keras.optimizers.Adam(1e-2),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    batch = {key: np.concatenate([value] * 2) for key, value in INPUTS.items()}
    model.fit(batch, np.array([0, 1, 1, 0]), batch_size=4, epochs=steps, verbose=0)


# === Adapters ===


@pytest.mark.parametrize("placement,count", [("houlsby", 4), ("pfeiffer", 2), ("parallel", 2)])
def test_adapters_start_near_identity_and_run_in_the_graph(placement, count):
    encoder = _encoder()
    base = _sequence(encoder)
    peft.add_adapters(encoder, bottleneck_dim=4, placement=placement)
    assert len(list(peft._adapted_sublayers(encoder))) == count
    np.testing.assert_allclose(_sequence(encoder), base, atol=1e-3)
    _randomize(_adapter_variables(encoder, "task"))
    assert np.abs(_sequence(encoder) - base).max() > 1e-2  # the functional graph calls them
    peft.remove_adapters(encoder)
    np.testing.assert_allclose(_sequence(encoder), base, atol=1e-6)


def test_bottleneck_not_below_hidden_is_an_error():
    with pytest.raises(ValueError, match="below the hidden size 16; received bottleneck_dim=16"):
        peft.add_adapters(_encoder(), bottleneck_dim=16)
    with pytest.raises(ValueError, match="placement must be one of"):
        peft.add_adapters(_encoder(), bottleneck_dim=4, placement="sideways")


def test_setup_trains_only_adapters_norms_and_head():
    encoder = _encoder()
    peft.add_adapters(encoder, bottleneck_dim=4)
    model = _classifier(encoder)
    peft.adapter_trainable_setup(model, encoder=encoder)
    trainable = {v.path for v in model.trainable_weights}
    assert trainable and all(
        "adapter_task" in p or "norm" in p or p.startswith("head/") for p in trainable
    ), trainable
    assert any(p.startswith("head/") for p in trainable)
    assert (
        len(model.trainable_weights) == 4 * 4 + 5 * 2 + 2
    )  # adapters, LayerNorms (incl. embeddings'), head
    frozen = [v for v in model.weights if not v.trainable]
    before = [np.array(v) for v in frozen]
    adapters_before = [np.array(v) for v in _adapter_variables(encoder, "task")]
    _fit(model)
    for variable, old in zip(frozen, before, strict=True):
        np.testing.assert_array_equal(np.array(variable), old, err_msg=variable.path)
    assert any(
        not np.array_equal(np.array(v), old)
        for v, old in zip(_adapter_variables(encoder, "task"), adapters_before, strict=True)
    )


def test_setup_can_train_embeddings():
    encoder = _encoder()
    peft.add_adapters(encoder, bottleneck_dim=4, placement="pfeiffer")
    peft.adapter_trainable_setup(encoder, train_embeddings=True)
    assert {v.path for v in encoder.embeddings.weights} <= {
        v.path for v in encoder.trainable_weights
    }


def test_setup_can_leave_the_shared_layer_norms_frozen():
    encoder = _encoder()
    peft.add_adapters(encoder, bottleneck_dim=4, placement="houlsby")
    peft.adapter_trainable_setup(encoder, train_layer_norms=False)
    trainable = {v.path for v in encoder.trainable_weights}
    assert trainable == {v.path for v in _adapter_variables(encoder, "task")}
    peft.adapter_trainable_setup(encoder)
    norms = [
        v.path
        for layer in encoder._flatten_layers()
        if isinstance(layer, keras.layers.LayerNormalization)
        for v in layer.weights
    ]
    assert norms and set(norms) <= {v.path for v in encoder.trainable_weights}


def test_saved_adapters_reload_into_a_fresh_encoder_with_the_same_base():
    encoder = _encoder(0)
    base_weights = encoder.get_weights()
    peft.add_adapters(encoder, bottleneck_dim=4, placement="houlsby", name="sst2")
    _randomize(_adapter_variables(encoder, "sst2"))
    expected = _sequence(encoder)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "sst2.npz")
        peft.save_adapters(encoder, path, "sst2")
        with np.load(path) as data:  # adapter weights only (and how they were added)
            assert sum(k.startswith("block_") for k in data.files) == 2 * 2 * 4
        fresh = _encoder(1)
        fresh.set_weights(base_weights)
        peft.load_adapters(fresh, path, "sst2")
    np.testing.assert_allclose(_sequence(fresh), expected, atol=1e-6)


def test_two_task_adapters_on_one_base_switch():
    encoder = _encoder()
    base = _sequence(encoder)
    peft.add_adapters(encoder, bottleneck_dim=4, name="a")
    _randomize(_adapter_variables(encoder, "a"), seed=1)
    peft.add_adapters(encoder, bottleneck_dim=4, name="b")
    _randomize(_adapter_variables(encoder, "b"), seed=2)
    out_b = _sequence(encoder)  # the newest set is active
    peft.set_active_adapter(encoder, "a")
    out_a = _sequence(encoder)
    assert np.abs(out_a - out_b).max() > 1e-2
    peft.set_active_adapter(encoder, "b")
    np.testing.assert_allclose(_sequence(encoder), out_b, atol=1e-6)
    peft.set_active_adapter(encoder, "a")
    np.testing.assert_allclose(_sequence(encoder), out_a, atol=1e-6)
    peft.set_active_adapter(encoder, None)
    np.testing.assert_allclose(_sequence(encoder), base, atol=1e-6)
    with pytest.raises(ValueError, match="no adapters named 'c'"):
        peft.set_active_adapter(encoder, "c")
    peft.adapter_trainable_setup(encoder)  # only the active set trains ("a" here)
    assert not any("adapter_b" in v.path for v in encoder.trainable_weights)


# === LoRA ===


def test_lora_merges_exactly():
    encoder = _encoder()
    base = _sequence(encoder)
    num_weights = len(encoder.weights)
    peft.add_lora(encoder, targets=("query", "value", "feed_forward.output_dense"), rank=2, alpha=4)
    assert {v.name for v in encoder.trainable_weights} == {"lora_a", "lora_b"}
    assert len(encoder.trainable_weights) == 2 * 3 * 2
    np.testing.assert_allclose(_sequence(encoder), base, atol=1e-6)
    _randomize([v for v in encoder.trainable_weights if v.name == "lora_b"])
    wrapped = _sequence(encoder)
    assert np.abs(wrapped - base).max() > 1e-2
    lora = encoder.blocks[0].attention.query
    expected_kernel = np.array(lora.dense.kernel) + 2.0 * np.array(lora.lora_a) @ np.array(
        lora.lora_b
    )
    peft.merge_lora(encoder)
    merged = encoder.blocks[0].attention.query
    assert type(merged) is keras.layers.Dense
    np.testing.assert_allclose(np.array(merged.kernel), expected_kernel, atol=1e-6)
    np.testing.assert_allclose(_sequence(encoder), wrapped, atol=1e-5)
    assert len(encoder.weights) == num_weights  # the wrappers' weights are gone


def test_lora_trains_only_the_update():
    encoder = _encoder()
    peft.add_lora(encoder, rank=2, alpha=4)
    frozen = [v for v in encoder.weights if not v.trainable]
    before = [np.array(v) for v in frozen]
    model = _classifier(encoder)
    _fit(model)
    for variable, old in zip(frozen, before, strict=True):
        np.testing.assert_array_equal(np.array(variable), old, err_msg=variable.path)


@pytest.mark.parametrize(
    "target,message",
    [
        ("attention_norm", "'attention_norm' of block_0 is not a layer with a kernel"),
        ("missing", "'missing' is not a sublayer of block_0"),
        ("output_dense", "'output_dense' is ambiguous"),
    ],
)
def test_lora_target_errors(target, message):
    encoder = _encoder()
    with pytest.raises(ValueError, match=message):
        peft.add_lora(encoder, targets=("query", target))
    assert type(encoder.blocks[0].attention.query) is keras.layers.Dense  # nothing changed


# === Prefix tuning ===


def test_prefix_tuning_trains_only_prefixes():
    encoder = _encoder()
    base = _sequence(encoder)
    peft.add_prefix_tuning(encoder, prefix_length=3)
    outputs = encoder(INPUTS)
    assert tuple(outputs["sequence_output"].shape) == (2, 6, 16)
    assert np.abs(_sequence(encoder) - base).max() > 1e-4
    assert (
        sorted(v.name for v in encoder.trainable_weights)
        == ["key_prefix"] * 2 + ["value_prefix"] * 2
    )
    model = _classifier(encoder)
    frozen = [v for v in encoder.weights if not v.trainable]
    before = [np.array(v) for v in frozen]
    prefixes = [np.array(v) for v in encoder.trainable_weights]
    _fit(model)
    for variable, old in zip(frozen, before, strict=True):
        np.testing.assert_array_equal(np.array(variable), old, err_msg=variable.path)
    assert all(
        not np.array_equal(np.array(v), old)  # gradients reach every layer's prefix
        for v, old in zip(encoder.trainable_weights, prefixes, strict=True)
    )
    peft.remove_prefix_tuning(encoder)
    np.testing.assert_allclose(_sequence(encoder), base, atol=1e-6)


# === Prompt tuning ===


@pytest.mark.parametrize("keep", [False, True])
def test_prompt_tuned_encoder(keep):
    encoder = _encoder()
    model = peft.prompt_tuned_encoder(encoder, num_prompt_tokens=3, keep_prompt_positions=keep)
    outputs = model(INPUTS)
    seq = 9 if keep else 6
    assert tuple(outputs["sequence_output"].shape) == (2, seq, 16)
    assert tuple(outputs["pooled_output"].shape) == (2, 16)
    assert len(outputs["hidden_states"]) == 3
    assert [v.name for v in model.trainable_weights] == ["prompts"]
    head = keras.Model(
        model.inputs, keras.layers.Dense(2, name="head")(model.output["pooled_output"])
    )
    frozen = [v for v in encoder.weights]
    before = [np.array(v) for v in frozen]
    prompts = np.array(model.get_layer("prompt_tuning").prompts)
    _fit(head)
    assert not np.array_equal(np.array(model.get_layer("prompt_tuning").prompts), prompts)
    for variable, old in zip(frozen, before, strict=True):
        np.testing.assert_array_equal(np.array(variable), old, err_msg=variable.path)
