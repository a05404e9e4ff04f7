"""Activation names as checkpoints spell them."""

import math

import keras

# Both GELUs compute in float32 whatever the input's dtype, rounded once at the end: under
# mixed_bfloat16 TensorFlow runs each elementwise step of Keras's GELU (and of its gradient) in
# bfloat16, converting every element at every step and rounding each time; in float32 both passes
# ran faster on the course's CPUs (`benchmarks/step_profile.py` shows the share left). Plain ops,
# no custom gradient: TensorFlow could not take the gradient of a custom gradient inside a
# SavedModel fine-tuned after `hub.load` (`tests/hub/hub_test.py`).
_SQRT_HALF = math.sqrt(0.5)
_TANH_SCALE = math.sqrt(2.0 / math.pi)
_TANH_CUBIC = 0.044715


def gelu_exact(x):
    """GELU with the error function: what BERT's "gelu" means (Hendrycks & Gimpel 2016),
    x · Φ(x), computed in float32 whatever the input's dtype."""
    x32 = keras.ops.cast(x, "float32")
    cdf = 0.5 * keras.ops.erfc(-x32 * _SQRT_HALF)  # Φ(x), accurate in the left tail
    return keras.ops.cast(x32 * cdf, x.dtype)


def gelu_approximate(x):
    """GELU with the tanh approximation: GPT-2's "gelu_new", and keras-hub's BERT,
    0.5 x (1 + tanh(√(2/π) (x + 0.044715 x³))) (a formula, not-measured), in float32."""
    x32 = keras.ops.cast(x, "float32")
    t = keras.ops.tanh(_TANH_SCALE * (x32 + _TANH_CUBIC * x32 * x32 * x32))
    return keras.ops.cast(0.5 * x32 * (1.0 + t), x.dtype)


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
