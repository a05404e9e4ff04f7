"""`HubEncoder` and `hub_encoder_model`: a TF Hub BERT encoder with kbert's encoder interface."""

import keras
import tensorflow as tf

from kbert.hub.hub_inputs import HUB_INPUT_KEYS, hub_text_inputs_from_kbert
from kbert.hub.hub_layer import HubLayer


def _describe_inputs(structure):
    """A few words on what a traced function takes as its first argument."""
    if isinstance(structure, dict):
        return f"a dict with the keys {sorted(structure)}"
    if isinstance(structure, (list, tuple)):
        return f"a {type(structure).__name__} of {len(structure)} inputs"
    if isinstance(structure, tf.TensorSpec):
        return f"one {structure.dtype.name} tensor of shape {structure.shape}"
    if structure is None:
        return "no positional input"
    return type(structure).__name__


def _check_encoder_inputs(module, signature, handle):
    """Refuses a module that cannot take `HUB_INPUT_KEYS`, naming what it takes instead.

    A restored `__call__` only runs on the input structures it was traced with; checked here,
    a module with other input names fails with its names instead of TensorFlow's "Could not
    find matching concrete function" listing. A function whose traces are unknown passes.
    """
    expected = set(HUB_INPUT_KEYS)
    if signature is not None:
        names = set(module.signatures[signature].structured_input_signature[1])
        if names != expected:
            raise ValueError(
                f"HubEncoder needs a signature whose inputs are {list(HUB_INPUT_KEYS)} (TF "
                f"Hub's BERT encoder inputs); signature {signature!r} of the module at "
                f"{handle!r} takes {sorted(names)}"
            )
        return
    traces = getattr(module.__call__, "concrete_functions", None) if callable(module) else None
    if not traces:
        return
    found = []
    for trace in traces:
        args = trace.structured_input_signature[0]
        first = args[0] if args else None
        if isinstance(first, dict) and set(first) == expected:
            return
        described = _describe_inputs(first)
        if described not in found:
            found.append(described)
    raise ValueError(
        f"HubEncoder needs a module whose __call__ takes a dict with the keys "
        f"{list(HUB_INPUT_KEYS)} (TF Hub's BERT encoder inputs); the module at {handle!r} "
        f"takes {' or '.join(found)}"
    )


@keras.saving.register_keras_serializable(package="kbert")
class HubEncoder(HubLayer):
    """A TF Hub BERT encoder: `input_word_ids` / `input_mask` / `input_type_ids` in, dict out.

    Accepts kbert's input names too (`token_ids`, `padding_mask`, `segment_ids`), so kbert
    preprocessors and heads can sit around it.

    Args:
        handle: str or os.PathLike. See `HubLayer`.
        trainable: bool, default True.
        **kwargs: passed to `HubLayer` (`output_key`, `name`).

    Raises:
        ValueError: see `HubLayer`; also the module's `__call__` (or `signature`) does not take
            the inputs `input_word_ids`, `input_mask`, `input_type_ids` (the error lists the
            inputs it does take).

    Example:
    >>> encoder = HubEncoder("/tmp/enc")  # doctest: +SKIP
    >>> encoder(HubPreprocessor("/tmp/pre")(tf.constant(["hi"])))["pooled_output"]  # doctest: +SKIP
    """

    def __init__(self, handle, trainable=True, **kwargs):
        super().__init__(handle, trainable=trainable, **kwargs)
        _check_encoder_inputs(self.module, self.signature, self.handle)

    def call(self, inputs, training=None):
        if not isinstance(inputs, dict):
            raise ValueError(
                f"HubEncoder takes a dict of {list(HUB_INPUT_KEYS)}; received "
                f"{type(inputs).__name__}"
            )
        if "token_ids" in inputs:
            inputs = hub_text_inputs_from_kbert(inputs)
        missing = [key for key in HUB_INPUT_KEYS if key not in inputs]
        if missing:
            raise ValueError(f"inputs must have the keys {list(HUB_INPUT_KEYS)}; missing {missing}")
        inputs = {key: keras.ops.cast(inputs[key], "int32") for key in HUB_INPUT_KEYS}
        return super().call(inputs, training=training)


def hub_encoder_model(handle, trainable=True, name="hub_encoder"):
    """A TF Hub BERT encoder as a functional model with kbert's `Encoder` interface.

    Inputs `token_ids`, `segment_ids`, `padding_mask`; outputs `sequence_output` and
    `pooled_output`. Every kbert head built on an encoder's dict (`SequenceClassifier`,
    `TokenClassifier`, `QuestionAnswerer`) then works unchanged on a Hub module, and
    `kbert.export.export_saved_model` exports the result.

    Args:
        handle: str or os.PathLike. See `HubLayer`.
        trainable: bool, default True. False freezes the module's variables.
        name: str, default "hub_encoder".

    Returns:
        A `keras.Model`.

    Raises:
        ValueError: see `HubEncoder`; also the module's outputs lack `sequence_output` or
            `pooled_output` (the error lists the outputs it has).

    Example:
    >>> encoder = hub_encoder_model("/tmp/enc")  # doctest: +SKIP
    >>> QuestionAnswerer(encoder)  # doctest: +SKIP
    """
    layer = HubEncoder(handle, trainable=trainable, name=f"{name}_layer")
    inputs = {
        key: keras.Input(shape=(None,), dtype="int32", name=key)
        for key in ("token_ids", "segment_ids", "padding_mask")
    }
    outputs = layer(inputs)
    needed = ["sequence_output", "pooled_output"]
    if not isinstance(outputs, dict) or any(key not in outputs for key in needed):
        found = (
            f"the outputs {sorted(outputs)}"
            if isinstance(outputs, dict)
            else f"a {type(outputs).__name__}, not a dict"
        )
        raise ValueError(
            f"hub_encoder_model needs a module whose outputs include {needed} (TF Hub's BERT "
            f"encoder outputs); the module at {layer.handle!r} returns {found}"
        )
    return keras.Model(
        inputs,
        {"sequence_output": outputs["sequence_output"], "pooled_output": outputs["pooled_output"]},
        name=name,
    )
