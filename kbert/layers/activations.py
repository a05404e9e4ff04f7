"""Activation names as checkpoints spell them."""

import keras


def gelu_exact(x):
    """GELU with the error function: what BERT's "gelu" means (Hendrycks & Gimpel 2016)."""
    return keras.activations.gelu(x, approximate=False)


def gelu_approximate(x):
    """GELU with the tanh approximation: GPT-2's "gelu_new", and keras-hub's BERT."""
    return keras.activations.gelu(x, approximate=True)


_BY_NAME = {
    "gelu": gelu_exact,
    "gelu_approximate": gelu_approximate,
    "gelu_new": gelu_approximate,
    "gelu_pytorch_tanh": gelu_approximate,
    "relu": keras.activations.relu,
    "silu": keras.activations.silu,
    "swish": keras.activations.silu,
    "tanh": keras.activations.tanh,
}


def get_activation(name):
    """Returns the activation function for a name from a checkpoint config or a preset.

    Args:
        name: str. One of "gelu" (exact), "gelu_approximate" (also "gelu_new",
            "gelu_pytorch_tanh"), "relu", "silu"/"swish", "tanh".

    Returns:
        A function of one tensor.

    Example:
    >>> float(get_activation("relu")(keras.ops.array(-1.0)))
    0.0
    """
    if name not in _BY_NAME:
        raise ValueError(f"unknown activation {name!r}; expected one of {sorted(_BY_NAME)}")
    return _BY_NAME[name]
