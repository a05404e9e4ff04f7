"""Insert, switch, save and remove parameter-efficient adaptation wrappers in an `Encoder`.

Each method is a wrapper that replaces one sublayer attribute of every `TransformerBlock`
(`kbert.layers.adapter`, `lora`, `prefix_tuning`); the block's `call` looks its sublayers up at
call time, so the encoder's functional graph runs the wrappers with no change to the block.
Prompt tuning instead builds a new functional model around the encoder's layers.

Adapters: `add_adapters`, `set_active_adapter`, `adapter_trainable_setup`, `adapter_weights`,
`set_adapter_weights`, `save_adapters`, `load_adapters`, `remove_adapters`.
LoRA: `add_lora`, `merge_lora`. Prefix tuning: `add_prefix_tuning`, `remove_prefix_tuning`.
Prompt tuning: `prompt_tuned_encoder`.

Example:
>>> from kbert.models.encoder import Encoder
>>> encoder = Encoder.from_preset("tiny")
>>> add_adapters(encoder, bottleneck_dim=4, name="sst2")
>>> adapter_trainable_setup(encoder)
>>> len(encoder.trainable_weights)  # 4 adapters × 4, 5 LayerNorms × 2
26
"""

import keras
import numpy as np

from kbert.layers.adapter import AdaptedSublayer, Adapter
from kbert.layers.lora import LoRADense
from kbert.layers.prefix_tuning import PrefixAttention
from kbert.layers.prompt_tuning import PromptTuning

# Where each adapter placement wraps a block: paths from the block to the wrapped sublayer.
ADAPTER_PLACEMENTS = {
    "houlsby": ("attention.output_dense", "feed_forward.output_dense"),
    "pfeiffer": ("feed_forward.output_dense",),
    "parallel": ("feed_forward",),
}
# The Dense sublayers of a block that LoRA can address by a short name.
_DENSE_PATHS = (
    "attention.query",
    "attention.key",
    "attention.value",
    "attention.output_dense",
    "feed_forward.intermediate",
    "feed_forward.output_dense",
)
_WRAPPERS = (AdaptedSublayer, LoRADense, PrefixAttention)
_ADAPTER_PATHS = tuple(
    dict.fromkeys(path for paths in ADAPTER_PLACEMENTS.values() for path in paths)
)


# === Helpers ===


def _blocks(encoder):
    """The distinct blocks (a `share_layers` encoder repeats one)."""
    seen, blocks = set(), []
    for block in encoder.blocks:
        if id(block) not in seen:
            seen.add(id(block))
            blocks.append(block)
    return blocks


def _unwrap(layer):
    """The layer inside any adaptation wrappers (for walking paths through them)."""
    while isinstance(layer, _WRAPPERS):
        layer = {
            AdaptedSublayer: lambda w: w.sublayer,
            LoRADense: lambda w: w.dense,
            PrefixAttention: lambda w: w.attention,
        }[type(layer)](layer)
    return layer


def _resolve(block, path):
    """Returns `(parent, attribute, layer)` for a dotted path such as "attention.query"."""
    parent = block
    *parents, attribute = path.split(".")
    for name in parents:
        parent = _unwrap(getattr(parent, name))
    return parent, attribute, getattr(parent, attribute)


def _replace_sublayer(parent, attribute, new_layer):
    """Sets `parent.<attribute> = new_layer`, untracking the old layer.

    A built Keras layer locks its state against new sublayers; the replacement is deliberate,
    so the lock is lifted for it. The old layer is untracked so that its weights (a LoRA update
    merged away, say) no longer count as the parent's.
    """
    old = getattr(parent, attribute)
    locked = parent._tracker.locked
    parent._tracker.unlock()
    parent._tracker.untrack(old)
    setattr(parent, attribute, new_layer)
    if locked:
        parent._tracker.lock()


def _input_width(layer):
    if isinstance(layer, keras.layers.Dense):
        return layer.kernel.shape[0]
    return layer.hidden_dim  # FeedForward, MultiHeadAttention


def _train_only(model, keep, candidates=None):
    """Makes `model`'s trainable variables non-trainable unless in `keep`.

    Acts on variables (a layer stays `trainable=True`, so a kept adapter inside a frozen block
    still trains); `candidates` limits the freezing to those variables (the encoder's, leaving
    a task head trainable).
    """
    model.trainable = True
    # `model.trainable = True` leaves a variable switched off by itself (an earlier setup's
    # work) off: reset every variable created trainable.
    for layer in model._flatten_layers():
        for variable in layer._trainable_variables:
            variable.trainable = True
    keep = {id(v) for v in keep}
    candidates = None if candidates is None else {id(v) for v in candidates}
    for variable in model.trainable_weights:
        if id(variable) not in keep and (candidates is None or id(variable) in candidates):
            variable.trainable = False


def _layers_of(layer, cls):
    return [sub for sub in layer._flatten_layers() if isinstance(sub, cls)]


# === Adapters ===


def _adapted_sublayers(encoder):
    """Yields `(location, wrapper)` for every `AdaptedSublayer`, location "block_0/attention…"."""
    for block in _blocks(encoder):
        for path in _ADAPTER_PATHS:
            _, _, layer = _resolve(block, path)
            if isinstance(layer, AdaptedSublayer):
                yield f"{block.name}/{path}", layer


def add_adapters(encoder, bottleneck_dim=32, placement="houlsby", name="task", activation="gelu"):
    """Adds a named set of bottleneck adapters to every block and makes it the active set.

    Placements: "houlsby" (Houlsby et al. 2019) after the attention output projection and after
    the feed-forward output projection, before each residual + LayerNorm; "pfeiffer" (Pfeiffer
    et al. 2021) after the feed-forward output only; "parallel" (He et al. 2021) beside the whole
    feed-forward sublayer. Calling again with another `name` adds a second task's adapters to
    the same wrappers; the base weights stay shared.

    Args:
        encoder: `kbert.models.Encoder`, modified in place.
        bottleneck_dim: int, default 32. Must be below the hidden size.
        placement: str, default "houlsby". One of `ADAPTER_PLACEMENTS`.
        name: str, default "task". The adapter set's (task's) name.
        activation: str, default "gelu".

    Raises:
        ValueError: unknown placement, bottleneck not below the hidden size, name taken.
    """
    if placement not in ADAPTER_PLACEMENTS:
        raise ValueError(
            f"placement must be one of {sorted(ADAPTER_PLACEMENTS)}; received {placement!r}"
        )
    hidden_dim = encoder.config.hidden_dim
    if bottleneck_dim >= hidden_dim:
        raise ValueError(
            f"bottleneck_dim must be below the hidden size {hidden_dim}; received "
            f"bottleneck_dim={bottleneck_dim}"
        )
    parallel = placement == "parallel"
    for block in _blocks(encoder):
        for path in ADAPTER_PLACEMENTS[placement]:
            parent, attribute, layer = _resolve(block, path)
            adapter = Adapter(
                bottleneck_dim,
                activation=activation,
                residual=not parallel,
                dtype=layer.dtype_policy,
                name=f"adapter_{name}",
            )
            if isinstance(layer, AdaptedSublayer):
                if layer.parallel != parallel:
                    raise ValueError(
                        f"{block.name}/{path} holds adapters with "
                        f"parallel={layer.parallel}; placement {placement!r} "
                        f"needs parallel={parallel}"
                    )
                layer.add_adapter(name, adapter)
            else:
                wrapper = AdaptedSublayer(
                    layer,
                    {name: adapter},
                    parallel=parallel,
                    dtype=layer.dtype_policy,
                    name=f"{layer.name}_adapted",
                )
                wrapper.build((None, _input_width(layer)))
                _replace_sublayer(parent, attribute, wrapper)
    set_active_adapter(encoder, name)
    encoder._peft_adapter_specs = {
        **getattr(encoder, "_peft_adapter_specs", {}),
        name: {"bottleneck_dim": bottleneck_dim, "placement": placement, "activation": activation},
    }


def set_active_adapter(encoder, name):
    """Makes the adapter set `name` run in every wrapper (None: the bare base model).

    Eager calls see the change at once; a model's compiled `fit`/`predict` functions were
    traced with the old choice, so rebuild them (`model.compile(...)` again, or
    `make_train_function(force=True)`).

    Raises:
        ValueError: no wrapper holds an adapter named `name`.
    """
    wrappers = list(_adapted_sublayers(encoder))
    if name is not None and not any(name in wrapper.adapters for _, wrapper in wrappers):
        raise ValueError(f"the encoder has no adapters named {name!r}")
    for _, wrapper in wrappers:
        wrapper.set_active_adapter(name if name in wrapper.adapters else None)


def _encoder_of(model, encoder):
    if encoder is not None:
        return encoder
    from kbert.models.encoder import Encoder

    if isinstance(model, Encoder):
        return model
    if isinstance(getattr(model, "encoder", None), Encoder):
        return model.encoder
    raise ValueError(f"cannot find the encoder of {type(model).__name__}; pass `encoder=`")


def adapter_trainable_setup(model, encoder=None, train_embeddings=False, train_layer_norms=True):
    """Freezes the encoder except the active adapters and LayerNorms; the head stays trainable.

    Houlsby et al. train the LayerNorms with each task's adapters. The LayerNorms belong to the
    shared base, though: when several tasks' adapters sit on one base, train a later task with
    `train_layer_norms=False`, or the earlier tasks' outputs drift.

    Args:
        model: a `keras.Model`: the encoder, or a task model built on it.
        encoder: `kbert.models.Encoder`, default `model` itself or `model.encoder`.
        train_embeddings: bool, default False. Also train the embeddings group.
        train_layer_norms: bool, default True. Also train the encoder's LayerNorms.
    """
    encoder = _encoder_of(model, encoder)
    keep = []
    for _, wrapper in _adapted_sublayers(encoder):
        if wrapper.active_adapter is not None:
            keep += wrapper.adapters[wrapper.active_adapter].weights
    if train_layer_norms:
        for norm in _layers_of(encoder, keras.layers.LayerNormalization):
            keep += norm.weights
    if train_embeddings:
        keep += encoder.embeddings.weights
    _train_only(model, keep, candidates=encoder.weights)


def adapter_weights(encoder, name):
    """Returns the adapter set `name`'s weights as a dict of location → numpy array."""
    weights = {}
    for location, wrapper in _adapted_sublayers(encoder):
        if name in wrapper.adapters:
            for index, variable in enumerate(wrapper.adapters[name].weights):
                weights[f"{location}/{index}"] = np.asarray(variable)
    if not weights:
        raise ValueError(f"the encoder has no adapters named {name!r}")
    return weights


def set_adapter_weights(encoder, name, weights):
    """Assigns the arrays of `adapter_weights` to the adapter set `name` (which must exist)."""
    expected = set(adapter_weights(encoder, name))
    if expected != set(weights):
        raise ValueError(
            f"adapter weights do not match the encoder's adapters {name!r}: "
            f"missing {sorted(expected - set(weights))}, unexpected "
            f"{sorted(set(weights) - expected)}"
        )
    for location, wrapper in _adapted_sublayers(encoder):
        if name in wrapper.adapters:
            for index, variable in enumerate(wrapper.adapters[name].weights):
                variable.assign(weights[f"{location}/{index}"])


def save_adapters(encoder, path, name):
    """Writes only the adapter set `name` (weights and how it was added) to an `.npz` file."""
    spec = getattr(encoder, "_peft_adapter_specs", {}).get(name, {})
    np.savez(
        path,
        **adapter_weights(encoder, name),
        **{f"__{key}__": np.asarray(value) for key, value in spec.items()},
    )


def load_adapters(encoder, path, name):
    """Loads an `.npz` from `save_adapters` as the adapter set `name` and activates it.

    If the encoder has no adapters `name` yet they are added first, with the saved bottleneck,
    placement and activation. The base weights are not touched: load into an encoder holding the
    same base (pretrained) weights the adapters were trained on.
    """
    with np.load(path) as data:
        arrays = {key: data[key] for key in data.files}
    spec = {key[2:-2]: arrays.pop(key).item() for key in list(arrays) if key.startswith("__")}
    known = any(name in wrapper.adapters for _, wrapper in _adapted_sublayers(encoder))
    if not known:
        if not spec:
            raise ValueError(
                f"{path} does not say how its adapters were added; call "
                f"add_adapters(encoder, ..., name={name!r}) first"
            )
        add_adapters(encoder, name=name, **spec)
    set_adapter_weights(encoder, name, arrays)
    set_active_adapter(encoder, name)


def remove_adapters(encoder):
    """Removes every adapter wrapper, restoring the bare sublayers."""
    for block in _blocks(encoder):
        for path in _ADAPTER_PATHS:
            parent, attribute, layer = _resolve(block, path)
            if isinstance(layer, AdaptedSublayer):
                _replace_sublayer(parent, attribute, layer.sublayer)
    encoder._peft_adapter_specs = {}


# === LoRA ===


def _lora_path(block, target):
    """The path of `target` (a short name such as "query", or a dotted path) in a block."""
    if "." in target:
        return target
    matches = [path for path in _DENSE_PATHS if path.split(".")[-1] == target]
    if len(matches) > 1:
        raise ValueError(f"LoRA target {target!r} is ambiguous; use one of {matches}")
    if matches:
        return matches[0]
    return target  # e.g. "attention_norm": resolved, then refused as kernel-less


def add_lora(encoder, targets=("query", "value"), rank=8, alpha=16, dropout=0.0):
    """Wraps the named Dense sublayers of every block in `LoRADense`.

    Only the LoRA matrices are trainable afterwards; the rest of the encoder is frozen.

    Args:
        encoder: `kbert.models.Encoder`, modified in place.
        targets: tuple of str, default ("query", "value") (Hu et al.'s choice). Short names
            ("query", "key", "value", "intermediate") or paths from the block
            ("attention.output_dense", "feed_forward.output_dense").
        rank, alpha, dropout: see `LoRADense`.

    Raises:
        ValueError: a target that is not found or is not a layer with a kernel (named).
    """
    found = []
    for block in _blocks(encoder):
        for target in targets:
            path = _lora_path(block, target)
            try:
                parent, attribute, layer = _resolve(block, path)
            except AttributeError:
                raise ValueError(
                    f"LoRA target {target!r} is not a sublayer of {block.name}"
                ) from None
            if isinstance(layer, LoRADense):
                raise ValueError(f"LoRA target {target!r} of {block.name} has LoRA already")
            if not isinstance(layer, keras.layers.Dense):
                raise ValueError(
                    f"LoRA target {target!r} of {block.name} is not a layer with a "
                    f"kernel; received {type(layer).__name__}"
                )
            found.append((parent, attribute, layer))
    for parent, attribute, layer in found:  # all checked before anything changes
        wrapper = LoRADense(
            layer,
            rank=rank,
            alpha=alpha,
            dropout=dropout,
            dtype=layer.dtype_policy,
            name=f"{layer.name}_lora",
        )
        wrapper.build((None, _input_width(layer)))
        _replace_sublayer(parent, attribute, wrapper)
    _train_only(
        encoder,
        [v for _, wrapper in _lora_layers(encoder) for v in (wrapper.lora_a, wrapper.lora_b)],
    )


def _lora_layers(encoder):
    for block in _blocks(encoder):
        for path in _DENSE_PATHS:
            parent, attribute, layer = _resolve(block, path)
            if isinstance(layer, LoRADense):
                yield (parent, attribute), layer


def merge_lora(encoder):
    """Replaces every `LoRADense` by a plain Dense with kernel `W + (alpha/rank)·A·B`.

    The merged encoder computes the same outputs with no extra cost, for export. Its layers are
    left trainable.
    """
    for (parent, attribute), wrapper in list(_lora_layers(encoder)):
        dense = wrapper.dense
        merged = keras.layers.Dense.from_config({**dense.get_config(), "trainable": True})
        merged.build((None, dense.kernel.shape[0]))
        merged.kernel.assign(wrapper.merged_kernel())
        if dense.use_bias:
            merged.bias.assign(dense.bias)
        _replace_sublayer(parent, attribute, merged)


# === Prefix tuning ===


def add_prefix_tuning(encoder, prefix_length=10):
    """Replaces every block's attention by a `PrefixAttention`; only the prefixes train.

    Raises:
        ValueError: the encoder has prefixes already.
    """
    for block in _blocks(encoder):
        if isinstance(block.attention, PrefixAttention):
            raise ValueError(f"{block.name} has prefix tuning already")
    for block in _blocks(encoder):
        attention = block.attention
        wrapper = PrefixAttention(
            attention,
            prefix_length=prefix_length,
            dtype=attention.dtype_policy,
            name="prefix_attention",
        )
        wrapper.build((None, None, attention.hidden_dim))
        _replace_sublayer(block, "attention", wrapper)
    _train_only(
        encoder,
        [
            v
            for block in _blocks(encoder)
            for v in (block.attention.key_prefix, block.attention.value_prefix)
        ],
    )


def remove_prefix_tuning(encoder):
    """Restores the wrapped attention layers (left frozen as they were)."""
    for block in _blocks(encoder):
        if isinstance(block.attention, PrefixAttention):
            _replace_sublayer(block, "attention", block.attention.attention)


# === Prompt tuning ===


def prompt_tuned_encoder(encoder, num_prompt_tokens=20, keep_prompt_positions=False):
    """Builds a prompt-tuned model around a frozen encoder (Lester et al. 2021).

    `num_prompt_tokens` trainable vectors are put in front of the embedding output (they take
    no position or segment embedding, so segment ids need no extension) and the padding mask is
    extended with ones. The returned functional model has the encoder's dict inputs and
    outputs, so task heads built on `model.inputs`/`model.outputs` work unchanged:
    `pooled_output` is the pooler on the first input token ([CLS], after the prompts), and
    `sequence_output` and `hidden_states` drop the prompt positions (`(batch, seq, hidden)`,
    aligned with the input tokens) unless `keep_prompt_positions=True`
    (`(batch, prompts + seq, hidden)`).

    The encoder is set non-trainable (its layers are shared with the returned model); the
    model's only trainable variable is the prompt matrix, `model.get_layer("prompt_tuning")`.

    Args:
        encoder: `kbert.models.Encoder`.
        num_prompt_tokens: int, default 20.
        keep_prompt_positions: bool, default False.

    Returns:
        a `keras.Model`.
    """
    encoder.trainable = False
    prompt_layer = PromptTuning(
        num_prompt_tokens, dtype=encoder.embeddings.dtype_policy, name="prompt_tuning"
    )
    inputs = {
        name: keras.Input(shape=(None,), dtype="int32", name=name)
        for name in ("token_ids", "segment_ids", "padding_mask")
    }
    x = encoder.embeddings(inputs["token_ids"], inputs["segment_ids"])
    x, padding_mask = prompt_layer(x, padding_mask=inputs["padding_mask"])
    hidden_states = [x]
    for block in encoder.blocks:
        x = block(x, padding_mask=padding_mask)  # (batch, prompts + seq, hidden)
        hidden_states.append(x)
    if encoder.final_norm is not None:
        x = encoder.final_norm(x)
        hidden_states[-1] = x
    pooled = encoder.pooler(x[:, num_prompt_tokens, :])  # the [CLS] token
    if not keep_prompt_positions:
        hidden_states = [h[:, num_prompt_tokens:, :] for h in hidden_states]
        x = hidden_states[-1]
    outputs = {"sequence_output": x, "pooled_output": pooled, "hidden_states": hidden_states}
    return keras.Model(inputs=inputs, outputs=outputs, name=f"{encoder.name}_prompt_tuned")


__all__ = [
    "ADAPTER_PLACEMENTS",
    "adapter_trainable_setup",
    "adapter_weights",
    "add_adapters",
    "add_lora",
    "add_prefix_tuning",
    "load_adapters",
    "merge_lora",
    "prompt_tuned_encoder",
    "remove_adapters",
    "remove_prefix_tuning",
    "save_adapters",
    "set_active_adapter",
    "set_adapter_weights",
]
