"""Add, switch, save, merge and remove parameter-efficient adaptation in an `Encoder`.

How a wrapper (adapter, LoRA, prefix) gets into a block, for `add_lora`; `add_adapters`,
`add_prefix_tuning`, `merge_lora` and the `remove_*` functions differ only in the
`BlockAdaptation` they ask for:

    add_lora(encoder, targets, rank, ...)       checks; the encoder's BlockAdaptation + LoRA
    └ _rebuilt(encoder, adaptation)             encoder.get_config() with that adaptation;
      │                                         afterwards every kept weight copied across
      └ Encoder.from_config → Encoder(config, adaptation=...)
        ├ TransformerBlock.__init__             each block, before anything is built:
        │ └ block_adaptation.wrap_sublayers     a wrapper set over each named sublayer, found
        │                                       by `resolve`/`unwrap` ("attention.query",
        │                                       walked through wrappers already there)
        └ TransformerBlock.build
          └ block_adaptation.build_wrapped_sublayers
                                                each wrapped layer built in its parent's name
                                                scope, not inside its wrapper's
    and add_lora then freezes all but the LoRA matrices.

Why so: Keras locks a built layer's state, so a wrapper cannot be slipped into a built block;
and a wrapper that is config (`Encoder(adaptation=...)`, `kbert.layers.BlockAdaptation`) is
rebuilt by `from_config` and `.keras` loading like any other layer. Building the wrapped layers
first keeps every pretrained weight's path ("block_0/attention/query/kernel", not
".../query_lora/query/kernel"), so checkpoint import, weight copies and exports address an
adapted encoder's weights as a plain one's. The encoder passed in is left as it was. Prompt
tuning instead builds a new functional model around the encoder's layers.

Adapters: `add_adapters`, `set_active_adapter`, `adapter_trainable_setup`, `adapter_weights`,
`set_adapter_weights`, `remove_adapters` (adapter files: `kbert.checkpoints.save_adapters`,
`load_adapters`).
LoRA: `add_lora`, `merge_lora`. Prefix tuning: `add_prefix_tuning`, `remove_prefix_tuning`.
Prompt tuning: `prompt_tuned_encoder`.

Example:
>>> from kbert.models.encoder import Encoder
>>> encoder = add_adapters(Encoder.from_preset("tiny"), bottleneck_dim=4, name="sst2")
>>> adapter_trainable_setup(encoder)
>>> len(encoder.trainable_weights)  # 4 adapters × 4, 5 LayerNorms × 2
26
>>> encoder.get_config()["adaptation"]["adapters"]
{'sst2': {'placement': 'houlsby', 'activation': 'gelu', 'bottleneck_dim': 4}}
"""

import keras
import numpy as np

from kbert.layers.block_adaptation import (
    ADAPTER_PLACEMENTS,
    DENSE_PATHS,
    BlockAdaptation,
    adapted_sublayers,
    resolve,
    unwrap,
    wrapped_sublayers,
)
from kbert.layers.lora import LoRADense
from kbert.layers.prefix_tuning import PrefixAttention
from kbert.layers.prompt_tuning import PromptTuning
from kbert.models.encoder import Encoder
from kbert.models.pretraining_utils import symbolic_encoder_inputs

_NORM_PATHS = ("attention_norm", "feed_forward_norm")


# === Helpers ===


def _blocks(encoder):
    """The distinct blocks (a `share_layers` encoder repeats one)."""
    seen, blocks = set(), []
    for block in encoder.blocks:
        if id(block) not in seen:
            seen.add(id(block))
            blocks.append(block)
    return blocks


def _adaptation(encoder):
    return encoder.adaptation or BlockAdaptation()


def _base_parts(encoder):
    """Key → variables of every pretrained (non-adaptation) layer, whatever wraps it."""
    parts = {"embeddings": encoder.embeddings.weights, "pooler": encoder.pooler.weights}
    if encoder.final_norm is not None:
        parts["final_norm"] = encoder.final_norm.weights
    for block in _blocks(encoder):
        for path in DENSE_PATHS + _NORM_PATHS:
            parts[f"{block.name}/{path}"] = unwrap(resolve(block, path)[2]).weights
    return parts


def _adaptation_parts(encoder):
    """Key → variables of every adapter set, LoRA update and prefix."""
    parts = {}
    for block in _blocks(encoder):
        for path, wrapper in adapted_sublayers(block):
            for name, adapter in wrapper.adapters.items():
                parts[f"{block.name}/{path}/adapter_{name}"] = adapter.weights
        for path, lora in _lora_layers(block):
            parts[f"{block.name}/{path}/lora"] = [lora.lora_a, lora.lora_b]
        if isinstance(block.attention, PrefixAttention):
            attention = block.attention
            parts[f"{block.name}/prefix"] = [attention.key_prefix, attention.value_prefix]
    return parts


def _lora_layers(block):
    return wrapped_sublayers(block, LoRADense, DENSE_PATHS)


def _lora_weights(encoder):
    """Every block's LoRA matrices (the only weights `add_lora` leaves trainable)."""
    return [
        weight
        for block in _blocks(encoder)
        for _, lora in _lora_layers(block)
        for weight in (lora.lora_a, lora.lora_b)
    ]


def _rebuilt(encoder, adaptation):
    """A new encoder of `encoder`'s config with `adaptation`, holding `encoder`'s weights.

    Every base layer's and every kept adaptation part's weights are copied (with their
    `trainable` flags, so frozen stays frozen); new parts keep their fresh initial values.
    """
    if not isinstance(encoder, Encoder):
        raise ValueError(
            f"parameter-efficient methods adapt a kbert Encoder; received {type(encoder).__name__}"
        )
    config = encoder.get_config()
    config["adaptation"] = adaptation.to_dict() if adaptation else None
    rebuilt = type(encoder).from_config(config)
    for parts in (_base_parts, _adaptation_parts):
        targets = parts(rebuilt)
        for key, variables in parts(encoder).items():
            if key not in targets:  # a part removed (adapters, prefixes) or merged (LoRA)
                continue
            for source, target in zip(variables, targets[key], strict=True):
                target.assign(source)
                target.trainable = source.trainable
    return rebuilt


def _train_only(model, keep, candidates=None):
    """Makes `model`'s trainable variables non-trainable unless in `keep`.

    Acts on variables (a layer stays `trainable=True`, so a kept adapter inside a frozen block
    still trains); `candidates` limits the freezing to those variables (the encoder's, leaving
    a task head trainable).
    """
    # Switching the model off and on again (Keras cascades `trainable` to every sublayer) sets
    # every variable created trainable back to trainable, one an earlier setup switched off by
    # itself included; `model.trainable = True` alone leaves those off.
    model.trainable = False
    model.trainable = True
    keep = {id(v) for v in keep}
    candidates = None if candidates is None else {id(v) for v in candidates}
    for variable in model.trainable_weights:
        if id(variable) not in keep and (candidates is None or id(variable) in candidates):
            variable.trainable = False


def _layer_norms(encoder):
    """The encoder's LayerNormalizations: the embeddings', each block's two, the final one."""
    norms = [encoder.embeddings.norm, encoder.final_norm]
    for block in _blocks(encoder):
        norms += [unwrap(resolve(block, path)[2]) for path in _NORM_PATHS]
    return [norm for norm in norms if isinstance(norm, keras.layers.LayerNormalization)]


# === Adapters ===


def _adapted_sublayers(encoder):
    """Yields `(location, wrapper)` for every `AdaptedSublayer`, location "block_0/attention…"."""
    for block in _blocks(encoder):
        for path, wrapper in adapted_sublayers(block):
            yield f"{block.name}/{path}", wrapper


def add_adapters(encoder, bottleneck_dim=32, placement="houlsby", name="task", activation="gelu"):
    """Returns the encoder with a named set of bottleneck adapters in every block, active.

    Placements: "houlsby" (Houlsby et al. 2019) after the attention output projection and after
    the feed-forward output projection, before each residual + LayerNorm; "pfeiffer" (Pfeiffer
    et al. 2021) after the feed-forward output only; "parallel" (He et al. 2021) beside the whole
    feed-forward sublayer. Calling again with another `name` adds a second task's adapters
    beside the first (the base weights are shared by both sets).

    Args:
        encoder: `kbert.models.Encoder`. Left as it is: a new encoder, holding its weights and
            the new adapters (which start as the identity), is returned.
        bottleneck_dim: int, default 32. Must be below the hidden size.
        placement: str, default "houlsby". One of `ADAPTER_PLACEMENTS`.
        name: str, default "task". The adapter set's (task's) name.
        activation: str, default "gelu".

    Returns:
        `kbert.models.Encoder`.

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
    adaptation = _adaptation(encoder)
    if name in adaptation.adapters:
        raise ValueError(f"the encoder has adapters named {name!r} already")
    spec = {"bottleneck_dim": bottleneck_dim, "placement": placement, "activation": activation}
    return _rebuilt(
        encoder,
        adaptation.replace(adapters={**adaptation.adapters, name: spec}, active_adapter=name),
    )


def set_active_adapter(encoder, name):
    """Makes the adapter set `name` run in every wrapper (None: the bare base model), in place.

    Which set runs is config, not state, so the encoder itself changes (and its `get_config`
    says so). Eager calls see the change at once; a model's compiled `fit`/`predict` functions
    were traced with the old choice, so rebuild them (`model.compile(...)` again, or
    `make_train_function(force=True)`).

    Raises:
        ValueError: the encoder has no adapters named `name`.
    """
    if name is not None and name not in _adaptation(encoder).adapters:
        raise ValueError(f"the encoder has no adapters named {name!r}")
    for block in _blocks(encoder):
        block.set_active_adapter(name)


def _encoder_of(model, encoder):
    if encoder is not None:
        return encoder
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
        for norm in _layer_norms(encoder):
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


def remove_adapters(encoder):
    """Returns the encoder without any adapters (a new one; its base weights copied)."""
    return _rebuilt(encoder, _adaptation(encoder).replace(adapters={}, active_adapter=None))


# === LoRA ===


def add_lora(encoder, targets=("query", "value"), rank=8, alpha=16, dropout=0.0):
    """Returns the encoder with the named Dense sublayers of every block in `LoRADense`.

    Only the LoRA matrices are trainable in the returned encoder; the rest of it is frozen.

    Args:
        encoder: `kbert.models.Encoder`. Left as it is: a new encoder, holding its weights and
            the new (zero) updates, is returned.
        targets: tuple of str, default ("query", "value") (Hu et al.'s choice). Short names
            ("query", "key", "value", "intermediate") or paths from the block
            ("attention.output_dense", "feed_forward.output_dense").
        rank, alpha, dropout: see `LoRADense`.

    Returns:
        `kbert.models.Encoder`.

    Raises:
        ValueError: a target that is not found or is not a layer with a kernel (named), or
            that has LoRA already; LoRA of another rank, alpha or dropout already there.
    """
    adaptation = _adaptation(encoder)
    lora = {"targets": targets, "rank": rank, "alpha": alpha, "dropout": dropout}
    lora = _joined_lora(adaptation.lora, lora, encoder.blocks[0].name)
    adapted = _rebuilt(encoder, adaptation.replace(lora=lora))
    _train_only(adapted, _lora_weights(adapted))
    return adapted


def _joined_lora(old, new, block_name):
    """`new` LoRA settings, normalized, with `old`'s targets in front (None: none yet).

    Raises:
        ValueError: a target `old` has already; `old` of another rank, alpha or dropout.
    """
    new = BlockAdaptation(lora=new).lora  # short names as paths, defaults filled in
    if old is None:
        return new
    taken = [t for t in new["targets"] if t in old["targets"]]
    if taken:
        raise ValueError(f"LoRA target {taken[0]!r} of {block_name} has LoRA already")
    old_settings = {key: value for key, value in old.items() if key != "targets"}
    new_settings = {key: value for key, value in new.items() if key != "targets"}
    if old_settings != new_settings:
        raise ValueError(
            f"the encoder has LoRA with {old_settings} already; new targets need the same "
            f"settings (received {new_settings}), or merge_lora first"
        )
    return {**new, "targets": old["targets"] + new["targets"]}


def merge_lora(encoder):
    """Returns the encoder with every `LoRADense` a plain Dense of kernel `W + (alpha/rank)·A·B`.

    The merged encoder computes the same outputs with no extra cost, for export. Its merged
    layers are trainable; other layers keep their flags.
    """
    merged = _rebuilt(encoder, _adaptation(encoder).replace(lora=None))
    for source_block, target_block in zip(_blocks(encoder), _blocks(merged), strict=True):
        for path, wrapper in _lora_layers(source_block):
            dense = unwrap(resolve(target_block, path)[2])
            dense.kernel.assign(wrapper.merged_kernel())
            for variable in dense.weights:
                variable.trainable = True
    return merged


# === Prefix tuning ===


def add_prefix_tuning(encoder, prefix_length=10):
    """Returns the encoder with every block's attention a `PrefixAttention`; only prefixes train.

    Args:
        encoder: `kbert.models.Encoder`. Left as it is (a new encoder is returned).
        prefix_length: int, default 10.

    Raises:
        ValueError: the encoder has prefixes already.
    """
    adaptation = _adaptation(encoder)
    if adaptation.prefix_length is not None:
        raise ValueError(f"{encoder.blocks[0].name} has prefix tuning already")
    adapted = _rebuilt(encoder, adaptation.replace(prefix_length=prefix_length))
    _train_only(
        adapted,
        [
            v
            for block in _blocks(adapted)
            for v in (block.attention.key_prefix, block.attention.value_prefix)
        ],
    )
    return adapted


def remove_prefix_tuning(encoder):
    """Returns the encoder without prefixes (a new one; its layers keep their flags)."""
    return _rebuilt(encoder, _adaptation(encoder).replace(prefix_length=None))


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
    inputs = symbolic_encoder_inputs()
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
    "merge_lora",
    "prompt_tuned_encoder",
    "remove_adapters",
    "remove_prefix_tuning",
    "set_active_adapter",
    "set_adapter_weights",
]
