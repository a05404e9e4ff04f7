import json
import os
import tempfile

import keras
import numpy as np
import pytest

from kbert.checkpoints import load_adapters, save_adapters
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
    encoder = peft.add_adapters(encoder, bottleneck_dim=4, placement=placement)
    assert len(list(peft._adapted_sublayers(encoder))) == count
    np.testing.assert_allclose(_sequence(encoder), base, atol=1e-3)
    _randomize(_adapter_variables(encoder, "task"))
    assert np.abs(_sequence(encoder) - base).max() > 1e-2  # the functional graph calls them
    encoder = peft.remove_adapters(encoder)
    np.testing.assert_allclose(_sequence(encoder), base, atol=1e-6)


def test_bottleneck_not_below_hidden_is_an_error():
    with pytest.raises(ValueError, match="below the hidden size 16; received bottleneck_dim=16"):
        peft.add_adapters(_encoder(), bottleneck_dim=16)
    with pytest.raises(ValueError, match="placement must be one of"):
        peft.add_adapters(_encoder(), bottleneck_dim=4, placement="sideways")


def test_setup_trains_only_adapters_norms_and_head():
    encoder = _encoder()
    encoder = peft.add_adapters(encoder, bottleneck_dim=4)
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
    encoder = peft.add_adapters(encoder, bottleneck_dim=4, placement="pfeiffer")
    peft.adapter_trainable_setup(encoder, train_embeddings=True)
    assert {v.path for v in encoder.embeddings.weights} <= {
        v.path for v in encoder.trainable_weights
    }


def test_setup_can_leave_the_shared_layer_norms_frozen():
    encoder = _encoder()
    encoder = peft.add_adapters(encoder, bottleneck_dim=4, placement="houlsby")
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
    encoder = peft.add_adapters(encoder, bottleneck_dim=4, placement="houlsby", name="sst2")
    _randomize(_adapter_variables(encoder, "sst2"))
    expected = _sequence(encoder)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "sst2.npz")
        save_adapters(encoder, path, "sst2")
        with np.load(path) as data:  # adapter weights only (and how they were added)
            assert sum(k.startswith("block_") for k in data.files) == 2 * 2 * 4
        fresh = _encoder(1)
        fresh.set_weights(base_weights)
        fresh = load_adapters(fresh, path, "sst2")
    np.testing.assert_allclose(_sequence(fresh), expected, atol=1e-6)


def test_two_task_adapters_on_one_base_switch():
    encoder = _encoder()
    base = _sequence(encoder)
    encoder = peft.add_adapters(encoder, bottleneck_dim=4, name="a")
    _randomize(_adapter_variables(encoder, "a"), seed=1)
    encoder = peft.add_adapters(encoder, bottleneck_dim=4, name="b")
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
    encoder = peft.add_lora(
        encoder, targets=("query", "value", "feed_forward.output_dense"), rank=2, alpha=4
    )
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
    encoder = peft.merge_lora(encoder)
    merged = encoder.blocks[0].attention.query
    assert type(merged) is keras.layers.Dense
    np.testing.assert_allclose(np.array(merged.kernel), expected_kernel, atol=1e-6)
    np.testing.assert_allclose(_sequence(encoder), wrapped, atol=1e-5)
    assert len(encoder.weights) == num_weights  # the wrappers' weights are gone


def test_lora_trains_only_the_update():
    encoder = _encoder()
    encoder = peft.add_lora(encoder, rank=2, alpha=4)
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
    encoder = peft.add_prefix_tuning(encoder, prefix_length=3)
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
    encoder = peft.remove_prefix_tuning(encoder)
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


# === Adaptation as config: round trips and export ===

VOCABULARY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "good", "bad", "film", "the"]
ADAPT = {
    "adapters": lambda e: peft.add_adapters(
        peft.add_adapters(e, bottleneck_dim=4, name="a"),
        bottleneck_dim=4,
        placement="parallel",
        name="b",
    ),
    "lora": lambda e: peft.add_lora(e, targets=("query", "value", "intermediate"), rank=2),
    # Every wrapper in one block: LoRA inside the Houlsby adapter on the attention output,
    # inside the prefix attention.
    "all": lambda e: peft.add_prefix_tuning(
        peft.add_adapters(
            peft.add_lora(e, targets=("attention.output_dense",), rank=2), bottleneck_dim=4
        ),
        prefix_length=2,
    ),
}


def _adapted(method):
    keras.utils.set_random_seed(0)
    adapted = ADAPT[method](Encoder.from_preset("tiny", vocabulary_size=len(VOCABULARY)))
    # Zero-started parts (an adapter's up-projection, LoRA's B) would leave their partners
    # without a gradient in one step: give every adaptation weight a value.
    _randomize([v for part in peft._adaptation_parts(adapted).values() for v in part], scale=0.1)
    return adapted


@pytest.mark.parametrize("method", sorted(ADAPT))
def test_an_adapted_encoder_is_config(method):
    adapted = _adapted(method)
    config = adapted.get_config()["adaptation"]
    rebuilt = Encoder.from_config(adapted.get_config())
    assert rebuilt.get_config()["adaptation"] == config
    rebuilt.set_weights(adapted.get_weights())
    np.testing.assert_allclose(_sequence(rebuilt), _sequence(adapted), atol=1e-6)
    if method == "adapters":
        assert config["active_adapter"] == "b"
        peft.set_active_adapter(adapted, "a")
        assert adapted.get_config()["adaptation"]["active_adapter"] == "a"
        again = Encoder.from_config(adapted.get_config())
        again.set_weights(adapted.get_weights())
        np.testing.assert_allclose(_sequence(again), _sequence(adapted), atol=1e-6)


def test_adding_leaves_the_encoder_passed_in_as_it_was():
    encoder = _encoder()
    weights = [np.array(v) for v in encoder.weights]
    config = encoder.get_config()
    adapted = peft.add_lora(peft.add_adapters(encoder, bottleneck_dim=4), rank=2)
    assert adapted is not encoder
    assert encoder.get_config() == config and "adaptation" not in config
    assert all(v.trainable for v in encoder.weights)
    for variable, old in zip(encoder.weights, weights, strict=True):
        np.testing.assert_array_equal(np.array(variable), old)
    with pytest.raises(ValueError, match="has adapters named 'task' already"):
        peft.add_adapters(adapted, bottleneck_dim=4)
    with pytest.raises(ValueError, match="'attention.query' of block_0 has LoRA already"):
        peft.add_lora(adapted, targets=("query",), rank=2)
    with pytest.raises(ValueError, match="new targets need the same settings"):
        peft.add_lora(adapted, targets=("key",), rank=4)


@pytest.mark.parametrize(
    "adaptation,message",
    [
        ({"adapters": {"a": {"bottleneck_dim": 0}}}, r"adapters\['a'\].bottleneck_dim must be"),
        ({"adapters": {"a": {"bottleneck_dim": 4, "size": 1}}}, "unknown fields"),
        ({"adapters": {}, "active_adapter": "a"}, "active_adapter 'a' is not among"),
        ({"lora": {"rank": 2}}, "lora must be a dict with 'targets'"),
        ({"prefix_length": 0}, "prefix_length must be a positive int; received 0"),
        ({"prompt": 3}, r"adaptation has unknown fields \['prompt'\]"),
    ],
)
def test_bad_adaptation_config_is_named(adaptation, message):
    with pytest.raises(ValueError, match=message):
        Encoder.from_preset("tiny", adaptation=adaptation)


@pytest.mark.parametrize("method", sorted(ADAPT))
def test_model_contract_of_an_adapted_classifier(method):
    from kbert.models import SequenceClassifier
    from kbert.text import WordPieceTokenizer
    from tests.model_test_case import run_model_test

    classifier = SequenceClassifier(_adapted(method), 3, pooling="mean")
    # The pooler is unread (mean pooling); of two adapter sets only the active one ("b") runs.
    unused = ("pooler/kernel", "pooler/bias")
    if method == "adapters":
        unused += tuple(
            f"adapter_a/{dense}/{w}" for dense in ("down", "up") for w in ("kernel", "bias")
        )
    run_model_test(
        classifier,
        INPUTS,
        np.array([0, 2]),
        zero_gradient_weights=unused,
        export={
            "tokenizer": WordPieceTokenizer(VOCABULARY),
            "label_names": ["x", "y", "z"],
            "sequence_length": 8,
            "signatures": {"serving_default", "classify", "embed", "token_ids"},
            "call": {"text": ["a good film", "bad"]},
        },
    )


def test_a_merged_lora_encoder_saves_and_exports_without_wrappers(tmp_path, capsys):
    import tensorflow as tf

    from kbert.checkpoints import save_pretrained
    from kbert.cli.main import main
    from kbert.export import load_exported
    from kbert.text import WordPieceTokenizer

    adapted = _adapted("lora")
    merged = peft.merge_lora(adapted)
    assert "adaptation" not in merged.get_config()  # a plain encoder again
    np.testing.assert_allclose(_sequence(merged), _sequence(adapted), atol=1e-5)
    for encoder, name in ((adapted, "lora"), (merged, "merged")):
        model = save_pretrained(encoder, WordPieceTokenizer(VOCABULARY), tmp_path / name)
        status = main(
            ["export", "--model", str(model), "--name", name, "--export-dir", str(tmp_path / "x")]
        )
        assert status == 0
        path = json.loads(capsys.readouterr().out)["path"]
        served = load_exported(path).signatures["serving_default"](text=tf.constant(["good"]))
        expected = encoder(
            {
                "token_ids": np.array([[2, 6, 3]], "int32"),
                "segment_ids": np.zeros((1, 3), "int32"),
                "padding_mask": np.ones((1, 3), "int32"),
            }
        )["sequence_output"][:, 0]
        np.testing.assert_allclose(served["cls_embedding"], expected, atol=1e-5, err_msg=name)
