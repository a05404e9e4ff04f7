"""TF Hub SavedModels (TF2 format) as fine-tunable Keras 3 layers.

`tensorflow_hub.KerasLayer` is a tf_keras layer: inside a Keras 3 model it does not train
(tensorflow/hub#903). `HubLayer` is a Keras 3 layer instead. It loads the SavedModel
(`tf.saved_model.load`, after `tensorflow_hub.resolve` for tfhub.dev / Kaggle handles, which
caches under `TFHUB_CACHE_DIR`), then wraps each of the module's `tf.Variable`s in a
`keras.Variable`. On the TensorFlow backend `keras.Variable(v)` of an existing `tf.Variable` keeps
that very variable as its storage (`keras_variable.value is v`), so

- the module's restored functions, which captured the variables' handles when they were loaded,
  read exactly what the optimizer writes (`keras_variable.assign(...)` assigns `v`), and
- gradients flow: the tape records the restored function reading `v`, and Keras asks the tape
  for gradients of `v`'s handle.

No values are copied or substituted; Keras only learns which variables exist, which are
trainable (the module's `trainable_variables`, unless the layer is frozen) and how to save them
(`.keras` files hold them as the layer's weights; a loaded `.keras` model reloads the module from
its handle and assigns the saved values into it).

`HubPreprocessor` and `HubEncoder` are the BERT conveniences: text in, encoder inputs out; encoder
inputs in, `pooled_output` / `sequence_output` / `encoder_outputs` out.
"""

import os
import re
import sys
import types

import keras
import tensorflow as tf

HUB_INPUT_KEYS = ("input_word_ids", "input_mask", "input_type_ids")
_KBERT_TO_HUB = {
    "token_ids": "input_word_ids",
    "padding_mask": "input_mask",
    "segment_ids": "input_type_ids",
}
_REMOTE = re.compile(r"^(https?://|gs://|tfhub\.dev/|www\.kaggle\.com/|kaggle\.com/)")


def _import_tensorflow_hub():
    """Imports `tensorflow_hub`, which needs `pkg_resources` that setuptools >= 81 dropped.

    tensorflow_hub 0.16 imports `pkg_resources.parse_version` only to check the TF version at
    import time; when it is missing a stand-in built on `packaging` is put in place for that
    import and removed afterwards.
    """
    if "tensorflow_hub" in sys.modules:
        return sys.modules["tensorflow_hub"]
    shimmed = False
    try:
        import pkg_resources  # noqa: F401
    except ImportError:
        from packaging.version import parse

        sys.modules["pkg_resources"] = types.SimpleNamespace(parse_version=parse)
        shimmed = True
    try:
        import tensorflow_hub
    finally:
        if shimmed:
            sys.modules.pop("pkg_resources", None)
    return tensorflow_hub


def resolve_handle(handle):
    """Turns a handle into a local SavedModel directory.

    Args:
        handle: str or os.PathLike. A local directory, or a tfhub.dev / Kaggle / http(s) / gs
            handle, which `tensorflow_hub.resolve` downloads (once; cached under
            `TFHUB_CACHE_DIR`).

    Returns:
        str, a directory holding `saved_model.pb`.

    Raises:
        ValueError: the handle is not a str, the path does not exist, or it is not a TF2
            SavedModel directory.

    Example:
    >>> resolve_handle("/no/such/model")
    Traceback (most recent call last):
    ...
    ValueError: handle '/no/such/model' does not exist; expected a SavedModel directory or a ...
    """
    if not isinstance(handle, (str, os.PathLike)):
        raise ValueError(f"handle must be a str path or URL; received {type(handle).__name__}")
    handle = os.fspath(handle)
    if _REMOTE.match(handle):
        path = _import_tensorflow_hub().resolve(handle)
    else:
        path = os.path.expanduser(handle)
        if not os.path.exists(path):
            raise ValueError(
                f"handle {handle!r} does not exist; expected a SavedModel directory or a "
                "tfhub.dev / Kaggle handle"
            )
    if not os.path.isdir(path):
        raise ValueError(f"handle {handle!r} is a file; expected a SavedModel directory")
    names = set(os.listdir(path))
    if "saved_model.pb" not in names and "saved_model.pbtxt" not in names:
        hint = (
            " (tfhub_module.pb: a TF1 Hub module, which needs TF1-style hub.Module)"
            if "tfhub_module.pb" in names
            else ""
        )
        raise ValueError(
            f"handle {handle!r} is not a SavedModel: expected saved_model.pb in {path}{hint}"
        )
    return path


def load_module(handle):
    """Loads a TF2 SavedModel from a handle (see `resolve_handle`).

    Args:
        handle: str or os.PathLike.

    Returns:
        The restored object (`tf.saved_model.load`).

    Raises:
        ValueError: see `resolve_handle`.

    Example:
    >>> module = load_module("/tmp/enc")  # doctest: +SKIP
    """
    path = resolve_handle(handle)
    with tf.init_scope():  # a layer may be built inside a traced function
        return tf.saved_model.load(path)


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


def hub_text_inputs_from_kbert(inputs):
    """Renames kbert encoder inputs to TF Hub's BERT names.

    Args:
        inputs: dict with `token_ids`, `padding_mask` and (optional) `segment_ids`.

    Returns:
        dict with `input_word_ids`, `input_mask`, `input_type_ids` (zeros when `segment_ids`
        is missing), int32.

    Raises:
        ValueError: `inputs` is not a dict or lacks `token_ids` / `padding_mask`.

    Example:
    >>> ids = tf.constant([[2, 5, 3]])
    >>> sorted(hub_text_inputs_from_kbert({"token_ids": ids, "padding_mask": ids > 0}))
    ['input_mask', 'input_type_ids', 'input_word_ids']
    """
    if not isinstance(inputs, dict):
        raise ValueError(f"inputs must be a dict of kbert inputs; received {type(inputs).__name__}")
    missing = [key for key in ("token_ids", "padding_mask") if key not in inputs]
    if missing:
        raise ValueError(f"inputs must have token_ids and padding_mask; missing {missing}")
    result = {
        hub: keras.ops.cast(inputs[kbert], "int32")
        for kbert, hub in _KBERT_TO_HUB.items()
        if kbert in inputs
    }
    if "input_type_ids" not in result:
        result["input_type_ids"] = keras.ops.zeros_like(result["input_word_ids"])
    return result


def kbert_inputs_from_hub(inputs):
    """Renames TF Hub BERT inputs (`input_word_ids`, ...) to kbert's (`token_ids`, ...).

    Args:
        inputs: dict with `input_word_ids`, `input_mask`, `input_type_ids`.

    Returns:
        dict with `token_ids`, `padding_mask`, `segment_ids`.

    Raises:
        ValueError: a key is missing.

    Example:
    >>> ids = tf.constant([[2, 5, 3]])
    >>> sorted(kbert_inputs_from_hub({"input_word_ids": ids, "input_mask": ids,
    ...                               "input_type_ids": ids}))
    ['padding_mask', 'segment_ids', 'token_ids']
    """
    missing = [key for key in HUB_INPUT_KEYS if key not in inputs]
    if missing:
        raise ValueError(f"inputs must have the keys {list(HUB_INPUT_KEYS)}; missing {missing}")
    return {kbert: inputs[hub] for kbert, hub in _KBERT_TO_HUB.items()}


@keras.saving.register_keras_serializable(package="kbert")
class HubPreprocessor(HubLayer):
    """A TF Hub BERT preprocessor: strings (or a pair) in, encoder inputs out; not trainable.

    Args:
        handle: str or os.PathLike. See `HubLayer`.
        seq_length: int or None, default None. None calls the module (its own length; one
            segment only, a pair uses `bert_pack_inputs` at its default length); an int
            tokenizes with `.tokenize` and packs with `.bert_pack_inputs(..., seq_length)`.
        **kwargs: passed to `keras.layers.Layer` (`name`).

    Raises:
        ValueError: see `HubLayer`; also the module lacks `tokenize` / `bert_pack_inputs`
            when they are needed, or `seq_length` is not a positive int.

    Example:
    >>> preprocessor = HubPreprocessor("/tmp/pre", seq_length=16)  # doctest: +SKIP
    >>> preprocessor(tf.constant(["hello world"]))["input_word_ids"].shape  # doctest: +SKIP
    TensorShape([1, 16])
    """

    def __init__(self, handle, seq_length=None, **kwargs):
        kwargs["trainable"] = False
        for key in ("signature", "output_key", "arguments"):
            kwargs.pop(key, None)
        super().__init__(handle, **kwargs)
        if seq_length is not None and (
            isinstance(seq_length, bool) or not isinstance(seq_length, int) or seq_length < 2
        ):
            raise ValueError(f"seq_length must be None or an int >= 2; received {seq_length!r}")
        self.seq_length = seq_length
        missing = [
            name for name in ("tokenize", "bert_pack_inputs") if not hasattr(self.module, name)
        ]
        if seq_length is not None and missing:
            raise ValueError(
                f"seq_length needs a preprocessor with tokenize and bert_pack_inputs; the "
                f"module at {handle!r} lacks {missing}"
            )
        self._missing_packing = missing

    def call(self, inputs, training=None):
        """Packs texts.

        Args:
            inputs: 1-D string tensor, or a tuple of two (a pair of segments).
            training: ignored.

        Returns:
            dict of int32 `input_word_ids`, `input_mask`, `input_type_ids` (batch, seq_length).
        """
        segments = list(inputs) if isinstance(inputs, (tuple, list)) else [inputs]
        if len(segments) not in (1, 2):
            raise ValueError(f"expected texts or a pair of texts; received {len(segments)}")
        if self.seq_length is None and len(segments) == 1:
            return self.module(segments[0])
        if self._missing_packing:
            raise ValueError(
                f"packing a pair needs tokenize and bert_pack_inputs; the module lacks "
                f"{self._missing_packing}"
            )
        tokens = [self.module.tokenize(segment) for segment in segments]
        if self.seq_length is None:
            return self.module.bert_pack_inputs(tokens)
        return self.module.bert_pack_inputs(tokens, seq_length=self.seq_length)

    def compute_output_spec(self, inputs, training=None):
        first = inputs[0] if isinstance(inputs, (tuple, list)) else inputs
        return {
            key: keras.KerasTensor((first.shape[0], self.seq_length), dtype="int32")
            for key in HUB_INPUT_KEYS
        }

    def get_config(self):
        config = super().get_config()
        for key in ("signature", "output_key", "arguments"):
            config.pop(key, None)
        config["seq_length"] = self.seq_length
        return config


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
