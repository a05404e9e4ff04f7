import keras
import numpy as np
import pytest

from kbert.models import Encoder, SequenceClassifier
from kbert.train.discriminative_learning_rates import (
    DiscriminativeOptimizer,
    layerwise_learning_rates,
    layerwise_schedules,
)
from kbert.train.freezing import freeze, group_variables, layer_groups
from kbert.train.schedules import slanted_triangular
from kbert.train.unfreezing import GradualUnfreezing


def _classifier():
    keras.utils.set_random_seed(0)
    return SequenceClassifier(
        Encoder.from_preset("tiny", dropout=0.0), num_classes=2, pooling="pooler", dropout=0.0
    )


def _data(batch=8, length=6):
    rng = np.random.default_rng(0)
    inputs = {
        "token_ids": rng.integers(1, 50, (batch, length)).astype("int32"),
        "segment_ids": np.zeros((batch, length), "int32"),
        "padding_mask": np.ones((batch, length), "int32"),
    }
    return inputs, rng.integers(0, 2, (batch,)).astype("int32")


def test_layerwise_rates_ulmfit_and_decay():
    names = ["embeddings", "block_0", "block_1", "head"]
    rates = layerwise_learning_rates(names, 0.01)
    assert list(rates) == names
    np.testing.assert_allclose(
        list(rates.values()), [0.01 / 2.6**3, 0.01 / 2.6**2, 0.01 / 2.6, 0.01], rtol=1e-12
    )
    decayed = layerwise_learning_rates(names, 0.01, decay=0.9)
    np.testing.assert_allclose(
        list(decayed.values()), [0.01 * 0.9**3, 0.01 * 0.81, 0.009, 0.01], rtol=1e-12
    )


def test_bad_rates_arguments():
    with pytest.raises(ValueError, match="factor must be > 0; received 0"):
        layerwise_learning_rates(["a", "b"], 0.01, factor=0)
    with pytest.raises(ValueError, match="factor must be > 0"):
        layerwise_learning_rates(["a", "b"], 0.01, factor=-2.6)
    with pytest.raises(ValueError, match="decay must be > 0"):
        layerwise_learning_rates(["a", "b"], 0.01, decay=0.0)
    with pytest.raises(ValueError, match="top_learning_rate"):
        layerwise_learning_rates(["a", "b"], 0.0)
    with pytest.raises(ValueError, match="distinct"):
        layerwise_learning_rates(["a", "a"], 0.01)


def test_unknown_or_missing_groups_are_rejected():
    model = _classifier()
    rates = layerwise_learning_rates(list(layer_groups(model)), 0.01)
    with pytest.raises(ValueError, match=r"unknown: \['block_9'\], missing: \[\]"):
        DiscriminativeOptimizer(model, keras.optimizers.SGD, {**rates, "block_9": 0.1})
    del rates["pooler"]
    with pytest.raises(ValueError, match=r"unknown: \[\], missing: \['pooler'\]"):
        DiscriminativeOptimizer(model, keras.optimizers.SGD, rates)
    with pytest.raises(ValueError, match="Encoder"):
        DiscriminativeOptimizer("model", keras.optimizers.SGD, rates)


@pytest.mark.parametrize("factor", [2.6, 0.5])
def test_one_sgd_step_moves_each_group_by_exactly_the_configured_factor(factor):
    model = _classifier()
    groups = layer_groups(model)
    rates = layerwise_learning_rates(list(groups), 0.1, factor=factor)
    optimizer = DiscriminativeOptimizer(model, lambda lr: keras.optimizers.SGD(lr), rates)
    variables = model.trainable_variables
    for variable in variables:  # from zero, a step is exactly -lr (no float32 cancellation)
        variable.assign(keras.ops.zeros(variable.shape))
    before = [np.array(v, dtype="float64") for v in variables]
    optimizer.apply([keras.ops.ones(v.shape) for v in variables], variables)
    step = {
        id(v): np.abs(np.array(v, dtype="float64") - b).max()
        for v, b in zip(variables, before, strict=True)
    }
    sizes = []
    for name, layers in groups.items():
        group_steps = [step[id(v)] for v in group_variables(layers)]
        # Every weight of a group moves by the group's rate (float32 rounding aside).
        np.testing.assert_allclose(group_steps, rates[name], rtol=1e-6)
        sizes.append(group_steps[0])
        assert optimizer.group_of(group_variables(layers)[0]) == name
    np.testing.assert_allclose(np.array(sizes[1:]) / np.array(sizes[:-1]), factor, rtol=1e-6)
    # The rate each inner optimizer applied, group to group: the configured factor.
    applied = [float(optimizer.group_optimizers[name].learning_rate) for name in groups]
    np.testing.assert_allclose(np.array(applied[1:]) / np.array(applied[:-1]), factor, rtol=1e-6)
    np.testing.assert_allclose(applied, sizes, rtol=1e-6)


def test_compile_and_fit_with_adamw_and_a_frozen_group():
    model = _classifier()
    rates = layerwise_learning_rates(list(layer_groups(model)), 1e-2)
    model.compile(
        optimizer=DiscriminativeOptimizer(
            model,
            lambda lr: keras.optimizers.AdamW(lr, weight_decay=0.01),
            rates,
            global_clipnorm=1.0,
        ),
        loss=model.default_loss(),
    )
    freeze(model, ["embeddings"])
    embeddings = [np.array(v) for v in model.encoder.embeddings.weights]
    head = [np.array(v) for v in model.layers[-1].weights]
    history = model.fit(*_data(), epochs=2, batch_size=4, verbose=0)
    assert np.isfinite(history.history["loss"]).all()
    assert all(
        np.array_equal(a, np.array(v))
        for a, v in zip(embeddings, model.encoder.embeddings.weights, strict=True)
    )
    assert not np.array_equal(head[0], np.array(model.layers[-1].weights[0]))
    assert int(model.optimizer.iterations) == 4


def test_scaled_slanted_triangular_schedules_follow_the_global_step():
    model = _classifier()
    names = list(layer_groups(model))
    schedules = layerwise_schedules(names, "slanted_triangular", 0.01, factor=2.0, total_steps=20)
    optimizer = DiscriminativeOptimizer(model, lambda lr: keras.optimizers.SGD(lr), schedules)
    model.compile(optimizer=optimizer, loss=model.default_loss())
    # Gradual unfreezing: lower groups join late but still read the global step's rate.
    model.fit(*_data(), epochs=1, batch_size=1, verbose=0, callbacks=[GradualUnfreezing(every=1)])
    assert int(optimizer.iterations) == 8
    for index, name in enumerate(names):
        expected = float(
            slanted_triangular(8, 0.01 / 2.0 ** (len(names) - 1 - index), total_steps=20)
        )
        assert float(optimizer.group_optimizers[name].learning_rate) == pytest.approx(
            expected, rel=1e-6
        )
    # The embeddings joined at step 4, so their optimizer counted 4 of its own steps.
    assert int(optimizer.group_optimizers["embeddings"].iterations) == 4
    assert int(optimizer.group_optimizers["head"].iterations) == 8
