"""Activation names as checkpoints spell them."""

import math

import keras

# Both GELUs compute in float32 with a hand-written derivative: under mixed_bfloat16 TensorFlow
# runs the error function and each elementwise step of its gradient in bfloat16, one pass over the
# (batch, length, intermediate) tensor each, rounding at every step. Here the forward pass is one
# float32 expression rounded once, and the backward pass one expression of the saved inputs;
# `step_profile` measures the activation's share of a training step.
_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_TANH_SCALE = math.sqrt(2.0 / math.pi)
_TANH_CUBIC = 0.044715


@keras.ops.custom_gradient
def _gelu_exact(x):
    x32 = keras.ops.cast(x, "float32")
    cdf = 0.5 * keras.ops.erfc(-x32 * _SQRT_HALF)  # Φ(x), accurate in the left tail

    def grad(*args, upstream=None):
        upstream = args[0] if upstream is None else upstream
        pdf = keras.ops.exp(-0.5 * keras.ops.square(x32)) * _INV_SQRT_2PI  # φ(x)
        return upstream * keras.ops.cast(cdf + x32 * pdf, upstream.dtype)

    return keras.ops.cast(x32 * cdf, x.dtype), grad


@keras.ops.custom_gradient
def _gelu_tanh(x):
    x32 = keras.ops.cast(x, "float32")
    t = keras.ops.tanh(_TANH_SCALE * (x32 + _TANH_CUBIC * x32 * x32 * x32))

    def grad(*args, upstream=None):
        upstream = args[0] if upstream is None else upstream
        inner = _TANH_SCALE * (1.0 + 3.0 * _TANH_CUBIC * keras.ops.square(x32))
        slope = 0.5 * (1.0 + t) + 0.5 * x32 * (1.0 - keras.ops.square(t)) * inner
        return upstream * keras.ops.cast(slope, upstream.dtype)

    return keras.ops.cast(0.5 * x32 * (1.0 + t), x.dtype), grad


def gelu_exact(x):
    """GELU with the error function: what BERT's "gelu" means (Hendrycks & Gimpel 2016),
    x · Φ(x), computed in float32 whatever the input's dtype."""
    return _gelu_exact(x)


def gelu_approximate(x):
    """GELU with the tanh approximation: GPT-2's "gelu_new", and keras-hub's BERT,
    0.5 x (1 + tanh(√(2/π) (x + 0.044715 x³))) (a formula, not-measured), in float32."""
    return _gelu_tanh(x)


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
