"""One helper that checks a kbert layer end to end (after keras-hub's `run_layer_test` and
`run_precision_test`)."""

import os
import tempfile

import keras
import numpy as np

PRECISION_POLICIES = ("mixed_float16", "mixed_bfloat16")


def _as_numpy(tree):
    return keras.tree.map_structure(lambda x: np.asarray(keras.ops.convert_to_numpy(x)), tree)


def _is_float(dtype):
    return keras.backend.standardize_dtype(dtype).startswith(("float", "bfloat"))


def _is_float_array(value):
    return hasattr(value, "dtype") and _is_float(value.dtype)


def _call(layer, call_inputs, call_kwargs):
    """`layer(call_inputs, **call_kwargs)`, or `layer(**call_kwargs)` when there is no input."""
    if call_inputs is None:
        return layer(**call_kwargs)
    return layer(call_inputs, **call_kwargs)


def _under_policy(argument, policy):
    """`argument` with each layer in it rebuilt under `policy` (as an encoder builds the
    sublayers a wrapper receives), through dicts, lists and tuples."""
    if isinstance(argument, keras.layers.Layer):
        return type(argument).from_config({**argument.get_config(), "dtype": policy})
    if isinstance(argument, dict):
        return {key: _under_policy(value, policy) for key, value in argument.items()}
    if isinstance(argument, (list, tuple)):
        return type(argument)(_under_policy(value, policy) for value in argument)
    return argument


def run_precision_test(layer_cls, init_kwargs, call_inputs, call_kwargs=None, output_dtype=None):
    """Builds the layer under each mixed policy and checks its dtypes and a call.

    Under `mixed_float16` and `mixed_bfloat16`: every float variable is float32 (the policy's
    variable dtype), every float output has the compute dtype (or `output_dtype`, for layers
    that return float32 logits on purpose) and is finite. Layers among the arguments (a
    wrapper's sublayer) are rebuilt under the same policy, and float call arguments (a
    decoder's context) are cast to its compute dtype; Keras casts the positional input.

    Args:
        layer_cls: the layer class.
        init_kwargs: dict of constructor arguments (without `dtype`).
        call_inputs: a numpy array, a dict of them (the positional input), or None when the
            layer takes keyword arguments only.
        call_kwargs: dict of extra call arguments (masks, lengths), default None.
        output_dtype: str, default None. The float outputs' dtype when it is not the
            policy's compute dtype.
    """
    call_kwargs = call_kwargs or {}
    for name in PRECISION_POLICIES:
        policy = keras.DTypePolicy(name)
        layer = layer_cls(**_under_policy(init_kwargs, policy), dtype=policy)
        # Float arguments arrive in the compute dtype, as from layers under the same policy.
        as_computed = {
            key: keras.ops.cast(value, policy.compute_dtype) if _is_float_array(value) else value
            for key, value in call_kwargs.items()
        }
        outputs = keras.tree.flatten(_call(layer, call_inputs, as_computed))
        expected = output_dtype or policy.compute_dtype
        floats = [output for output in outputs if _is_float(output.dtype)]
        assert floats, f"{layer_cls.__name__} has no float output under {name}"
        for output in floats:
            dtype = keras.backend.standardize_dtype(output.dtype)
            assert dtype == expected, f"{name}: output dtype {dtype}, expected {expected}"
            values = np.asarray(keras.ops.convert_to_numpy(keras.ops.cast(output, "float32")))
            assert np.isfinite(values).all(), f"{name}: non-finite outputs"
        for weight in layer.weights:
            if _is_float(weight.dtype):
                assert weight.dtype == policy.variable_dtype, (name, weight.path, weight.dtype)


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
    run_precision=True,
    precision_output_dtype=None,
):
    """Checks config round trip, eager and symbolic calls, one fit step, .keras save/load and
    mixed precision.

    Args:
        layer_cls: the layer class.
        init_kwargs: dict of constructor arguments.
        call_inputs: a numpy array or a dict of numpy arrays (the positional input).
        call_kwargs: dict of extra numpy call arguments (masks), default None.
        expected_output_shape: tuple, or a list of tuples for a layer with several outputs,
            default None.
        expected_num_trainable_weights: int, default None.
        run_fit: bool, default True. Train a model wrapping the layer for one step and check
            that every trainable weight moved (the loss is MSE on every float output).
        run_saving: bool, default True. Round-trip a wrapping model through a .keras file.
        zero_gradient_weights: tuple of str, default (). Path suffixes of weights whose gradient
            is zero by construction (attention's key bias: softmax ignores a per-query constant).
        run_precision: bool, default True. `run_precision_test` under the mixed policies.
        precision_output_dtype: str, default None. See `run_precision_test`'s `output_dtype`.
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
    shapes = [tuple(o.shape) for o in keras.tree.flatten(output)]
    if expected_output_shape is not None:
        expected = expected_output_shape
        expected = [tuple(s) for s in expected] if isinstance(expected, list) else [tuple(expected)]
        assert shapes == expected, shapes
    if expected_num_trainable_weights is not None:
        assert len(layer.trainable_weights) == expected_num_trainable_weights, [
            w.path for w in layer.trainable_weights
        ]

    # Symbolic call inside a functional model with the same inputs.
    def symbolic(array):
        return keras.Input(shape=array.shape[1:], dtype=str(array.dtype), batch_size=array.shape[0])

    main_input = keras.tree.map_structure(symbolic, call_inputs)
    extra_inputs = {key: symbolic(value) for key, value in call_kwargs.items()}
    model_layer = layer_cls(**init_kwargs)
    outputs = model_layer(main_input, **extra_inputs)
    model = keras.Model([main_input, extra_inputs], outputs)
    model_inputs = [call_inputs, call_kwargs]
    result = model(model_inputs)
    assert [tuple(r.shape) for r in keras.tree.flatten(result)] == shapes

    if run_fit:
        before = [np.array(w) for w in model.trainable_weights]
        rng = np.random.default_rng(0)
        flat = keras.tree.flatten(result)
        targets = [rng.normal(size=tuple(r.shape)).astype("float32") for r in flat]
        losses = ["mse" if _is_float(r.dtype) else None for r in flat]
        if len(flat) == 1:
            targets, losses = targets[0], losses[0]
        model.compile(optimizer=keras.optimizers.SGD(0.1), loss=losses)
        batch_size = keras.tree.flatten(call_inputs)[0].shape[0]
        model.fit(model_inputs, targets, batch_size=batch_size, epochs=1, verbose=0)
        for weight, old in zip(model.trainable_weights, before, strict=True):
            if weight.path.endswith(tuple(zero_gradient_weights)):
                continue
            assert not np.array_equal(np.array(weight), old), f"{weight.path} did not train"

    if run_saving:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "model.keras")
            model.save(path)
            restored = keras.models.load_model(path)
        got, want = (keras.tree.flatten(_as_numpy(m(model_inputs))) for m in (restored, model))
        for got_output, want_output in zip(got, want, strict=True):
            np.testing.assert_allclose(got_output, want_output, atol=1e-6)

    if run_precision:
        run_precision_test(
            layer_cls, init_kwargs, call_inputs, call_kwargs, output_dtype=precision_output_dtype
        )
    return layer
