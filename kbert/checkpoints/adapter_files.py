"""An adapter set as a file of its own: the few weights a task adds to a shared base encoder.

Houlsby et al.'s point: one frozen base serves many tasks, each task shipping only its adapters
(a few percent of the weights). `save_adapters` writes the set `name` (weights and how it was
added: bottleneck, placement, activation) to an `.npz`, atomically; `load_adapters` puts it
into an encoder holding the same base weights, adding the set first when the encoder has none.
"""

import numpy as np

from kbert.files import atomic_path
from kbert.layers.block_adaptation import BlockAdaptation
from kbert.models.peft import (
    adapter_weights,
    add_adapters,
    set_active_adapter,
    set_adapter_weights,
)


def _adapter_specs(encoder):
    """Adapter set name → how it was added (bottleneck, placement, activation)."""
    return (encoder.adaptation or BlockAdaptation()).adapters


def save_adapters(encoder, path, name):
    """Writes only the adapter set `name` (weights and how it was added) to an `.npz` file.

    The file is written under a temporary name and renamed over `path` when complete, so an
    earlier file there survives a failure.
    """
    spec = _adapter_specs(encoder).get(name, {})
    arrays = adapter_weights(encoder, name)  # refuses an unknown set before any file is touched
    with atomic_path(path) as temporary:
        np.savez(
            temporary,
            **arrays,
            **{f"__{key}__": np.asarray(value) for key, value in spec.items()},
        )


def load_adapters(encoder, path, name):
    """Loads an `.npz` from `save_adapters` as the adapter set `name`; returns the encoder.

    If the encoder has no adapters `name` yet, a new encoder with them (the saved bottleneck,
    placement and activation) is built, as `add_adapters` does, and returned; otherwise the
    weights go into `encoder`'s own set. Either way the set is made active. The base weights
    are not touched: load into an encoder holding the same base (pretrained) weights the
    adapters were trained on.

    Returns:
        `kbert.models.Encoder`: the encoder holding the loaded set.
    """
    with np.load(path) as data:
        arrays = {key: data[key] for key in data.files}
    spec = {key[2:-2]: arrays.pop(key).item() for key in list(arrays) if key.startswith("__")}
    if name not in _adapter_specs(encoder):
        if not spec:
            raise ValueError(
                f"{path} does not say how its adapters were added; call "
                f"add_adapters(encoder, ..., name={name!r}) first"
            )
        encoder = add_adapters(encoder, name=name, **spec)
    set_adapter_weights(encoder, name, arrays)
    set_active_adapter(encoder, name)
    return encoder
