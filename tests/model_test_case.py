"""One helper that checks a kbert model end to end (after keras-hub's `run_task_test`).

`tests/layer_test_case.py` does this for layers; this is its model-level twin, used by the task
models' and the language models' test files: the config round trip, the `.keras` round trip,
one `fit` step that moves every trainable weight, and (for the models kbert exports) a TF Serving
SavedModel with the task's signatures.
"""

import os
import tempfile

import keras
import numpy as np
import tensorflow as tf


def _outputs(model, x):
    """The model's outputs on `x` (inference mode) as a flat list of float64 arrays."""
    outputs = model(x, training=False)
    return [
        np.asarray(keras.ops.convert_to_numpy(o), "float64") for o in keras.tree.flatten(outputs)
    ]


def _as_json(config):
    """`config` as a `.keras` file stores it (tuples become lists)."""
    if isinstance(config, dict):
        return {key: _as_json(value) for key, value in config.items()}
    if isinstance(config, (list, tuple)):
        return [_as_json(value) for value in config]
    return config


def _assert_same_outputs(model, other, x, what):
    expected, received = _outputs(model, x), _outputs(other, x)
    assert len(expected) == len(received), what
    for want, got in zip(expected, received, strict=True):
        np.testing.assert_allclose(got, want, atol=1e-5, err_msg=what)


def run_model_test(
    model,
    x,
    y=None,
    loss=None,
    zero_gradient_weights=(),
    export=None,
):
    """Checks a built model's config and `.keras` round trips, a `fit` step and its export.

    Args:
        model: a built `keras.Model` (a kbert task model or pretraining objective).
        x: dict of numpy arrays, the model's inputs (a pretraining objective's batch holds
            its targets too).
        y: numpy array or dict, default None (the model computes its own loss from `x`).
        loss: a Keras loss, default None (`model.default_loss()` when the model has one and
            `y` is given).
        zero_gradient_weights: tuple of str, default (). Path suffixes of weights that get no
            gradient from this loss by construction (the pooler of a head that reads tokens).
        export: dict or None. Arguments of `kbert.export.export_saved_model` (`tokenizer` and
            the task's: `task`, `label_names`, `sequence_length`, `pair`), plus `signatures`
            (the set of signature names the SavedModel must have) and `call` (the
            `serving_default` inputs, a dict of name → list of str).

    Returns:
        The model after the `fit` step.
    """
    keras.utils.set_random_seed(0)

    # Config round trip: the rebuilt model has the same config and, given the same weights,
    # the same outputs.
    config = model.get_config()
    rebuilt = type(model).from_config(config)
    assert rebuilt.get_config() == config
    if not rebuilt.built:  # a subclassed model that creates its weights on its first call
        rebuilt(x, training=False)
    rebuilt.set_weights(model.get_weights())
    _assert_same_outputs(model, rebuilt, x, "the model rebuilt from its config")

    # .keras round trip: the same class, config and outputs.
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "model.keras")
        model.save(path)
        restored = keras.saving.load_model(path)
    assert type(restored) is type(model)
    assert _as_json(restored.get_config()) == _as_json(config)
    _assert_same_outputs(model, restored, x, "the model loaded from .keras")

    # One fit step in graph mode moves every trainable weight that has a gradient.
    if y is not None and loss is None and hasattr(model, "default_loss"):
        loss = model.default_loss()
    before = [np.array(w) for w in model.trainable_weights]
    assert before, "the model has no trainable weights"
    model.compile(optimizer=keras.optimizers.Adam(1e-2), loss=loss)
    batch_size = len(next(iter(x.values())))
    history = model.fit(x, y, batch_size=batch_size, epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"]).all(), history.history
    for weight, old in zip(model.trainable_weights, before, strict=True):
        if weight.path.endswith(tuple(zero_gradient_weights)):
            continue
        assert not np.array_equal(np.array(weight), old), f"{weight.path} did not train"

    if export is not None:
        _check_export(model, dict(export))
    return model


def _check_export(model, export):
    """Exports `model` for TF Serving and checks the signatures and one serving call."""
    from kbert.export import ExportSettings, export_saved_model

    signatures = set(export.pop("signatures"))
    call = export.pop("call")
    tokenizer = export.pop("tokenizer")
    with tempfile.TemporaryDirectory() as directory:
        path = export_saved_model(model, tokenizer, directory, "model", ExportSettings(**export))
        loaded = tf.saved_model.load(str(path))
        assert set(loaded.signatures) == signatures, sorted(loaded.signatures)
        outputs = loaded.signatures["serving_default"](
            **{name: tf.constant(texts) for name, texts in call.items()}
        )
    assert outputs, "serving_default returned nothing"
    rows = len(next(iter(call.values())))
    for name, value in outputs.items():
        assert value.shape[0] == rows, f"{name}: {value.shape}"
        if value.dtype.is_floating:  # -inf is allowed (an answer's score with no candidate)
            assert not np.isnan(value.numpy()).any(), name
