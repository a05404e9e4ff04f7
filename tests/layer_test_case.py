"""One helper that checks a kbert layer end to end (after keras-hub's `run_layer_test`)."""

import os
import tempfile

import keras
import numpy as np


def _as_numpy(tree):
    return keras.tree.map_structure(lambda x: np.asarray(keras.ops.convert_to_numpy(x)), tree)


def run_layer_test(
    layer_cls,
    init_kwargs,
    call_inputs,
    call_kwargs=None,
    expected_output_shape=None,
    expected_num_trainable_weights=None,
    run_fit=True,
    run_saving=True,
    zero_gradient_weights=(),
):
    """Checks config round trip, eager and symbolic calls, one fit step and .keras save/load.

    Args:
        layer_cls: the layer class.
        init_kwargs: dict of constructor arguments.
        call_inputs: a numpy array (the positional input).
        call_kwargs: dict of extra numpy call arguments (masks), default None.
        expected_output_shape: tuple, default None.
        expected_num_trainable_weights: int, default None.
        run_fit: bool, default True. Train a model wrapping the layer for one step and check
            that every trainable weight moved.
        run_saving: bool, default True. Round-trip a wrapping model through a .keras file.
        zero_gradient_weights: tuple of str, default (). Path suffixes of weights whose gradient
            is zero by construction (attention's key bias: softmax ignores a per-query constant).
    """
    call_kwargs = call_kwargs or {}
    keras.utils.set_random_seed(0)  # dropout draws, initial weights: the same every run
    layer = layer_cls(**init_kwargs)

    # Config round trip: every argument comes back, and the rebuilt layer's config is equal.
    config = layer.get_config()
    for key in init_kwargs:
        assert key in config, f"get_config() lacks constructor argument {key!r}"
    rebuilt = layer_cls.from_config(config)
    assert rebuilt.get_config() == config

    # Eager call.
    output = layer(call_inputs, **call_kwargs)
    if expected_output_shape is not None:
        assert tuple(output.shape) == tuple(expected_output_shape), output.shape
    if expected_num_trainable_weights is not None:
        assert len(layer.trainable_weights) == expected_num_trainable_weights, [
            w.path for w in layer.trainable_weights
        ]

    # Symbolic call inside a functional model with the same inputs.
    def symbolic(array):
        return keras.Input(shape=array.shape[1:], dtype=str(array.dtype), batch_size=array.shape[0])

    main_input = symbolic(call_inputs)
    extra_inputs = {key: symbolic(value) for key, value in call_kwargs.items()}
    model_layer = layer_cls(**init_kwargs)
    outputs = model_layer(main_input, **extra_inputs)
    model = keras.Model([main_input, extra_inputs], outputs)
    model_inputs = [call_inputs, call_kwargs]
    result = model(model_inputs)
    assert tuple(result.shape) == tuple(output.shape)

    if run_fit:
        before = [np.array(w) for w in model.trainable_weights]
        model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
        target = np.random.default_rng(0).normal(size=tuple(result.shape)).astype("float32")
        model.fit(model_inputs, target, batch_size=call_inputs.shape[0], epochs=1, verbose=0)
        for weight, old in zip(model.trainable_weights, before, strict=True):
            if weight.path.endswith(tuple(zero_gradient_weights)):
                continue
            assert not np.array_equal(np.array(weight), old), f"{weight.path} did not train"

    if run_saving:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "model.keras")
            model.save(path)
            restored = keras.models.load_model(path)
        np.testing.assert_allclose(
            _as_numpy(restored(model_inputs)), _as_numpy(model(model_inputs)), atol=1e-6
        )
    return layer
