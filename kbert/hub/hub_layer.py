"""`HubLayer`: a TF2 Hub-format SavedModel as a Keras 3 layer whose variables Keras trains."""

import os
import re

import keras
import tensorflow as tf

from kbert.hub.handles import load_module


def _module_variables(module):
    """(variables, trainable ids) of a restored module: its `variables` list, else all found."""
    listed = getattr(module, "variables", None)
    if listed is not None and not callable(listed):
        variables = list(listed)
    else:
        variables = [
            t for t in tf.train.TrackableView(module).descendants() if isinstance(t, tf.Variable)
        ]
    unique, seen = [], set()
    for variable in variables:
        if id(variable) not in seen:
            seen.add(id(variable))
            unique.append(variable)
    listed_trainable = getattr(module, "trainable_variables", None)
    if listed_trainable is not None and not callable(listed_trainable):
        trainable = {id(v) for v in listed_trainable}
    else:
        trainable = {id(v) for v in unique if v.trainable}
    return unique, trainable


def _accepts_training(function):
    spec = getattr(getattr(function, "function_spec", None), "fullargspec", None)
    if spec is not None:
        return "training" in spec.args or "training" in spec.kwonlyargs
    try:
        import inspect

        return "training" in inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False


def _variable_name(variable, index):
    name = getattr(variable, "name", "") or "variable"
    name = re.sub(r"[^A-Za-z0-9_]+", "_", name.split(":")[0]).strip("_") or "variable"
    return f"hub_{index}_{name}"


@keras.saving.register_keras_serializable(package="kbert")
class HubLayer(keras.layers.Layer):
    """A TF2 Hub-format SavedModel as a Keras 3 layer whose variables Keras trains and saves.

    Calls the module's `__call__` (with `training=` when it accepts it) or a named signature.
    See the module docstring for how the module's variables become Keras variables.

    Args:
        handle: str or os.PathLike. A SavedModel directory, or a tfhub.dev / Kaggle handle
            (resolved by `tensorflow_hub.resolve`, cached under `TFHUB_CACHE_DIR`).
        signature: str or None, default None. Call `module.signatures[signature]` instead of
            `module(...)`: dict inputs are passed as keyword arguments, a single tensor as the
            signature's only input. Signatures run without `training`.
        output_key: str or None, default None. Return only this key of a dict output.
        trainable: bool, default True. False freezes every module variable.
        arguments: dict or None, default None. Extra keyword arguments for every call (e.g.
            `{"seq_length": 64}` for a `bert_pack_inputs`-style function).
        **kwargs: passed to `keras.layers.Layer` (`name`, `dtype`).

    Raises:
        ValueError: the handle is missing or not a SavedModel, the module has no `__call__`
            (the available signatures are listed), `signature` is unknown (the available ones
            are listed), or `arguments` is not a dict.

    Example:
    >>> layer = HubLayer("/tmp/enc", output_key="pooled_output")  # doctest: +SKIP
    >>> inputs = {k: keras.Input((None,), dtype="int32", name=k) for k in HUB_INPUT_KEYS}
    >>> model = keras.Model(inputs, keras.layers.Dense(2)(layer(inputs)))  # doctest: +SKIP
    """

    def __init__(
        self, handle, signature=None, output_key=None, trainable=True, arguments=None, **kwargs
    ):
        super().__init__(trainable=trainable, **kwargs)
        # Strings, dicts of int tensors and ragged tensors go to the module untouched.
        self._convert_input_args = False
        self._allow_non_tensor_positional_args = True
        if arguments is not None and not isinstance(arguments, dict):
            raise ValueError(f"arguments must be a dict or None; received {arguments!r}")
        if signature is not None and not isinstance(signature, str):
            raise ValueError(f"signature must be a str or None; received {signature!r}")
        self.handle = os.fspath(handle) if isinstance(handle, os.PathLike) else handle
        self.signature = signature
        self.output_key = output_key
        self.arguments = dict(arguments or {})

        module = load_module(handle)
        self._module = module
        available = sorted(getattr(module, "signatures", {}) or {})
        if signature is None:
            if not callable(module):
                raise ValueError(
                    f"the module at {handle!r} has no __call__; pass signature= one of {available}"
                )
            self._function = module
            self._pass_training = _accepts_training(module.__call__)
        else:
            if signature not in available:
                raise ValueError(
                    f"signature {signature!r} is not in the module at {handle!r}; available "
                    f"signatures: {available}"
                )
            self._function = module.signatures[signature]
            self._pass_training = False

        variables, trainable_ids = _module_variables(module)
        # keras.Variable(tf_variable) keeps tf_variable as its storage (TF backend): no copy.
        self._hub_variables = [
            keras.Variable(
                variable,
                trainable=id(variable) in trainable_ids,
                name=_variable_name(variable, index),
            )
            for index, variable in enumerate(variables)
        ]
        if not trainable:
            # Keras skips the `trainable` setter when the value does not change (it already is
            # False here), so the wrapped variables are marked by hand.
            for variable in self._hub_variables:
                variable.trainable = False
        self.built = True

    def save_own_variables(self, store):
        # In the module's own order, whatever `trainable` was at save or load time.
        for index, variable in enumerate(self._hub_variables):
            store[str(index)] = variable.numpy()

    def load_own_variables(self, store):
        if len(store.keys()) != len(self._hub_variables):
            raise ValueError(
                f"the saved HubLayer {self.name!r} holds {len(store.keys())} variables; the "
                f"module at {self.handle!r} has {len(self._hub_variables)}"
            )
        for index, variable in enumerate(self._hub_variables):
            variable.assign(store[str(index)])

    @property
    def module(self):
        """The loaded SavedModel object."""
        return self._module

    def _call_module(self, inputs, training=None):
        kwargs = dict(self.arguments)
        if self.signature is not None:
            if isinstance(inputs, dict):
                outputs = self._function(**inputs, **kwargs)
            else:
                names = list(self._function.structured_input_signature[1])
                if len(names) != 1:
                    raise ValueError(
                        f"signature {self.signature!r} takes inputs {names}; pass a dict "
                        "with those keys"
                    )
                outputs = self._function(**{names[0]: inputs}, **kwargs)
        elif self._pass_training:
            outputs = self._function(inputs, training=bool(training) and self.trainable, **kwargs)
        else:
            outputs = self._function(inputs, **kwargs)
        if self.output_key is None:
            return outputs
        if not isinstance(outputs, dict):
            raise ValueError(
                f"output_key={self.output_key!r} needs a dict output; the module returned "
                f"{type(outputs).__name__}"
            )
        if self.output_key not in outputs:
            raise ValueError(
                f"output_key {self.output_key!r} is not among the module's outputs "
                f"{sorted(outputs)}"
            )
        return outputs[self.output_key]

    def call(self, inputs, training=None):
        """Runs the module.

        Args:
            inputs: what the module (or signature) takes: a tensor, a dict of tensors, ...
            training: bool or None. Passed on (dropout) when the module accepts it and the
                layer is trainable.

        Returns:
            The module's output, or its `output_key` entry.
        """
        # Keras converts dict inputs to its own structures; the module wants plain dicts.
        if isinstance(inputs, dict):
            inputs = dict(inputs)
        return self._call_module(inputs, training=training)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "handle": self.handle,
                "signature": self.signature,
                "output_key": self.output_key,
                "arguments": dict(self.arguments),
            }
        )
        return config
