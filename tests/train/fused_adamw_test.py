"""kbert.train.FusedAdamW: Keras's AdamW with TensorFlow's fused Adam kernel."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from kbert.train import FusedAdamW


def _train(optimizer_class, steps=5, sparse=False, **kwargs):
    rng = np.random.default_rng(0)
    variables = [
        keras.Variable(rng.normal(size=shape).astype("float32")) for shape in [(6, 4), (4,)]
    ]
    optimizer = optimizer_class(**kwargs)
    for step in range(steps):
        gradients = [
            tf.constant(np.random.default_rng(step + 10 * i).normal(size=v.shape), "float32")
            for i, v in enumerate(variables)
        ]
        if sparse:
            rows = tf.constant([1, 4])
            gradients[0] = tf.IndexedSlices(tf.gather(gradients[0], rows), rows, [6, 4])
        optimizer.apply(gradients, variables)
    return [v.numpy() for v in variables], optimizer


@pytest.mark.parametrize(
    "settings",
    [
        {"learning_rate": 1e-2},
        {"learning_rate": 3e-3, "weight_decay": 0.1, "global_clipnorm": 0.5},
        {"learning_rate": 1e-2, "beta_1": 0.8, "beta_2": 0.95, "epsilon": 1e-6},
        {"learning_rate": 1e-2, "gradient_accumulation_steps": 2},
        {"learning_rate": 1e-2, "amsgrad": True},
    ],
)
@pytest.mark.parametrize("sparse", [False, True])
def test_updates_are_keras_s_adamw(settings, sparse):
    """Every setting (decay, clipping, betas, accumulation, AMSGrad's fallback) and a sparse
    gradient give Keras's AdamW's variables to rounding, and the same optimizer state."""
    ours, fused = _train(FusedAdamW, sparse=sparse, **settings)
    theirs, plain = _train(keras.optimizers.AdamW, sparse=sparse, **settings)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert not np.allclose(ours[0], _train(FusedAdamW, steps=0, **settings)[0][0])
    for a, b in zip(fused.variables, plain.variables, strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)


def test_inside_a_compiled_fit_and_saved_with_the_model(tmp_path):
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    model.compile(optimizer=FusedAdamW(1e-2), loss="mse")
    before = model.get_weights()[0].copy()
    model.fit(np.ones((8, 3)), np.zeros((8, 2)), epochs=2, verbose=0)
    assert not np.allclose(before, model.get_weights()[0])
    model.save(tmp_path / "m.keras")
    restored = keras.saving.load_model(tmp_path / "m.keras")
    assert type(restored.optimizer) is FusedAdamW
    assert restored.optimizer.get_config() == model.optimizer.get_config()


@pytest.mark.parametrize(("amsgrad", "fused"), [(False, True), (True, False)])
def test_the_update_is_the_fused_kernel(amsgrad, fused):
    """One `ResourceApplyAdam` per variable in the traced update (none for AMSGrad)."""
    variables = [keras.Variable(np.ones((4, 4), "float32")), keras.Variable(np.ones(4, "float32"))]
    optimizer = FusedAdamW(1e-3, amsgrad=amsgrad)
    optimizer.build(variables)
    gradients = [tf.ones((4, 4)), tf.ones(4)]
    graph = tf.function(lambda: optimizer.apply(gradients, variables)).get_concrete_function()
    kinds = [op.type for op in graph.graph.get_operations()]
    assert kinds.count("ResourceApplyAdam") == (2 if fused else 0)
