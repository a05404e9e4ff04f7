"""Which adaptation wrappers a transformer block is built with: adapters, LoRA, prefix tuning.

A `BlockAdaptation` is plain data in the block's (and the encoder's) config. The block wraps its
sublayers while it is constructed, before anything is built, so an adapted encoder is rebuilt
by `from_config` and `.keras` loading like any other, and no built Keras layer is ever changed
(`kbert.models.peft` adds a method by building a new encoder with a new `BlockAdaptation` and
copying the weights across).

The wrappers, innermost first: `LoRADense` around the Dense projections named in `lora`;
`AdaptedSublayer` around each adapter placement's sublayer (deeper paths first, so a Houlsby
adapter on `feed_forward.output_dense` sits inside a parallel one on `feed_forward`); and
`PrefixAttention` around the whole attention.

Example:
>>> BlockAdaptation(lora={"targets": ("query", "value")}).lora["targets"]
('attention.query', 'attention.value')
"""

import contextlib
import dataclasses

import keras

from kbert.checks import check_positive_int
from kbert.layers.adapter import AdaptedSublayer, Adapter
from kbert.layers.lora import LoRADense
from kbert.layers.prefix_tuning import PrefixAttention

# Where each adapter placement wraps a block: paths from the block to the wrapped sublayer.
ADAPTER_PLACEMENTS = {
    "houlsby": ("attention.output_dense", "feed_forward.output_dense"),
    "pfeiffer": ("feed_forward.output_dense",),
    "parallel": ("feed_forward",),
}
# The Dense sublayers of a block that LoRA can address by a short name.
DENSE_PATHS = (
    "attention.query",
    "attention.key",
    "attention.value",
    "attention.output_dense",
    "feed_forward.intermediate",
    "feed_forward.output_dense",
)
ADAPTER_FIELDS = ("bottleneck_dim", "placement", "activation")
LORA_DEFAULTS = {"rank": 8, "alpha": 16, "dropout": 0.0}


def lora_path(target):
    """The path from a block of a LoRA `target`: a short name ("query") or a dotted path.

    A short name that matches no Dense path is returned as it is, so the block names it in its
    error ("attention_norm" is refused as kernel-less, "missing" as not a sublayer).

    Raises:
        ValueError: a short name that matches two paths ("output_dense").
    """
    if "." in target:
        return target
    matches = [path for path in DENSE_PATHS if path.split(".")[-1] == target]
    if len(matches) > 1:
        raise ValueError(f"LoRA target {target!r} is ambiguous; use one of {matches}")
    return matches[0] if matches else target


@dataclasses.dataclass(frozen=True)
class BlockAdaptation:
    """The adaptation wrappers of every block of an encoder, as config data.

    Args:
        adapters: dict of name → `{"bottleneck_dim": int, "placement": str, "activation": str}`,
            default none. Each named set puts an `Adapter` at each path of its placement
            (`ADAPTER_PLACEMENTS`); sets at the same path share one `AdaptedSublayer`.
        active_adapter: str or None, default None. The set that runs.
        lora: dict or None, default None: `{"targets": paths or short names, "rank": int,
            "alpha": float, "dropout": float}` (rank 8, alpha 16, dropout 0 when left out).
        prefix_length: int or None, default None. Prefix positions of a `PrefixAttention`.

    Raises:
        ValueError: an unknown placement or field, a non-positive size, an active set that is
            not among the adapters.
    """

    adapters: dict = dataclasses.field(default_factory=dict)
    active_adapter: str | None = None
    lora: dict | None = None
    prefix_length: int | None = None

    def __post_init__(self):
        adapters = {}
        for name, spec in dict(self.adapters).items():
            unknown = set(spec) - set(ADAPTER_FIELDS)
            if unknown:
                raise ValueError(
                    f"adapters[{name!r}] has unknown fields {sorted(unknown)}; expected "
                    f"{list(ADAPTER_FIELDS)}"
                )
            spec = {"placement": "houlsby", "activation": "gelu", **spec}
            if spec["placement"] not in ADAPTER_PLACEMENTS:
                raise ValueError(
                    f"placement must be one of {sorted(ADAPTER_PLACEMENTS)}; received "
                    f"{spec['placement']!r}"
                )
            check_positive_int(f"adapters[{name!r}].bottleneck_dim", spec.get("bottleneck_dim"))
            adapters[name] = spec
        object.__setattr__(self, "adapters", adapters)
        if self.active_adapter is not None and self.active_adapter not in adapters:
            raise ValueError(
                f"active_adapter {self.active_adapter!r} is not among the adapters "
                f"{sorted(adapters)}"
            )
        if self.lora is not None:
            unknown = set(self.lora) - {"targets", *LORA_DEFAULTS}
            if unknown or "targets" not in self.lora:
                raise ValueError(
                    f"lora must be a dict with 'targets' and optionally {sorted(LORA_DEFAULTS)}; "
                    f"received {self.lora!r}"
                )
            lora = {**LORA_DEFAULTS, **self.lora}
            check_positive_int("lora rank", lora["rank"])
            lora["targets"] = tuple(dict.fromkeys(lora_path(t) for t in lora["targets"]))
            object.__setattr__(self, "lora", lora)
        if self.prefix_length is not None:
            check_positive_int("prefix_length", self.prefix_length)

    def __bool__(self):
        return bool(self.adapters or self.lora or self.prefix_length)

    def replace(self, **changes):
        """Returns a copy with some fields changed."""
        return dataclasses.replace(self, **changes)

    def to_dict(self):
        """JSON-ready fields (tuples as lists), for `get_config`."""
        lora = None if self.lora is None else {**self.lora, "targets": list(self.lora["targets"])}
        return {
            "adapters": {name: dict(spec) for name, spec in self.adapters.items()},
            "active_adapter": self.active_adapter,
            "lora": lora,
            "prefix_length": self.prefix_length,
        }

    @classmethod
    def from_dict(cls, config):
        """Rebuilds from `to_dict`'s output (None, or an instance, passes through)."""
        if config is None or isinstance(config, cls):
            return config
        unknown = set(config) - {field.name for field in dataclasses.fields(cls)}
        if unknown:
            raise ValueError(
                f"adaptation has unknown fields {sorted(unknown)}; expected "
                f"{[field.name for field in dataclasses.fields(cls)]}"
            )
        return cls(**config)


def unwrap(layer):
    """The layer inside any adaptation wrappers around it."""
    while isinstance(layer, (AdaptedSublayer, LoRADense, PrefixAttention)):
        if isinstance(layer, AdaptedSublayer):
            layer = layer.sublayer
        elif isinstance(layer, LoRADense):
            layer = layer.dense
        else:
            layer = layer.attention
    return layer


def resolve(block, path):
    """`(parent, attribute, layer)` for a dotted path, walking through wrappers on the way.

    The last layer is returned as it is (a wrapper, if one is there).
    """
    parent = block
    *parents, attribute = path.split(".")
    for name in parents:
        parent = unwrap(getattr(parent, name))
    return parent, attribute, getattr(parent, attribute)


ADAPTER_PATHS = tuple(
    dict.fromkeys(path for paths in ADAPTER_PLACEMENTS.values() for path in paths)
)


def wrapped_sublayers(block, wrapper_class, paths):
    """Yields `(path, wrapper)` for each of `paths` whose layer is a `wrapper_class`."""
    for path in paths:
        layer = resolve(block, path)[2]
        if isinstance(layer, wrapper_class):
            yield path, layer


def adapted_sublayers(block):
    """Yields `(path, wrapper)` for each `AdaptedSublayer` of a block, e.g. "feed_forward"."""
    return wrapped_sublayers(block, AdaptedSublayer, ADAPTER_PATHS)


def wrap_sublayers(block, adaptation):
    """Replaces `block`'s sublayers by the wrappers `adaptation` names (block not yet built).

    Raises:
        ValueError: a LoRA target that is not a sublayer of the block, or has no kernel.
    """
    if adaptation.lora is not None:
        lora = adaptation.lora
        found = []
        for path in lora["targets"]:
            try:
                found.append(resolve(block, path))
            except AttributeError:
                raise ValueError(
                    f"LoRA target {path!r} is not a sublayer of {block.name}"
                ) from None
            layer = found[-1][2]
            if not isinstance(layer, keras.layers.Dense):
                raise ValueError(
                    f"LoRA target {path!r} of {block.name} is not a layer with a kernel; "
                    f"received {type(layer).__name__}"
                )
        for parent, attribute, layer in found:
            wrapper = LoRADense(
                layer,
                rank=lora["rank"],
                alpha=lora["alpha"],
                dropout=lora["dropout"],
                dtype=layer.dtype_policy,
                name=f"{layer.name}_lora",
            )
            setattr(parent, attribute, wrapper)
    at_path = {}  # path → {set name: Adapter}
    for name, spec in adaptation.adapters.items():
        parallel = spec["placement"] == "parallel"
        for path in ADAPTER_PLACEMENTS[spec["placement"]]:
            at_path.setdefault(path, {})[name] = Adapter(
                spec["bottleneck_dim"],
                activation=spec["activation"],
                residual=not parallel,
                dtype=block.dtype_policy,
                name=f"adapter_{name}",
            )
    for path in sorted(at_path, key=lambda p: -p.count(".")):  # inner sublayers first
        parent, attribute, layer = resolve(block, path)
        wrapper = AdaptedSublayer(
            layer,
            at_path[path],
            parallel=path in ADAPTER_PLACEMENTS["parallel"],
            dtype=layer.dtype_policy,
            name=f"{layer.name}_adapted",
        )
        active = adaptation.active_adapter
        wrapper.set_active_adapter(active if active in wrapper.adapters else None)
        setattr(parent, attribute, wrapper)
    if adaptation.prefix_length is not None:
        block.attention = PrefixAttention(
            block.attention,
            prefix_length=adaptation.prefix_length,
            dtype=block.dtype_policy,
            name="prefix_attention",
        )


def build_wrapped_sublayers(block, input_shape):
    """Builds each wrapped sublayer of a block where it would be built without its wrapper.

    A wrapper builds what it wraps inside its own name scope, which would move a pretrained
    kernel from "block_0/attention/query/kernel" to ".../query_lora/query/kernel". Built here
    first, under its parents' scopes, every pretrained weight keeps its path, so code and
    checkpoints that address weights by path find them in an adapted encoder too. (Only
    wrapped layers: the others are built by their parents, which do not check `built`.)
    """
    widths = {"feed_forward.output_dense": block.intermediate_dim}
    for path in DENSE_PATHS + ("attention", "feed_forward"):
        wrapped = resolve(block, path)[2]
        layer = unwrap(wrapped)
        if layer is wrapped or layer.built:
            continue
        shape = tuple(input_shape[:-1]) + (widths.get(path, input_shape[-1]),)
        with contextlib.ExitStack() as scopes:
            parent = block
            for name in path.split(".")[:-1]:
                parent = unwrap(getattr(parent, name))
                scopes.enter_context(keras.name_scope(parent.name))
            layer.build(shape)
