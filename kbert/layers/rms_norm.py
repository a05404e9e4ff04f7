"""Root-mean-square layer normalization (Zhang & Sennrich 2019), as T5 uses it."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="kbert")
class RMSNorm(keras.layers.Layer):
    """x / sqrt(mean(x²) + ε) · γ over the last axis: no mean subtraction and no bias.

    T5's layer norm: it only rescales, so it is cheaper than LayerNorm and has one weight
    vector (γ, initialised to 1). Computed in float32 under mixed precision.

    Args:
        epsilon: float, default 1e-6.
        **kwargs: `name`, `dtype`, `trainable`.

    Example:
    >>> norm = RMSNorm()
    >>> [round(float(v), 3) for v in norm(ops.array([[3.0, 4.0]]))[0]]
    [0.849, 1.131]
    """

    def __init__(self, epsilon=1e-6, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(epsilon, (int, float)) or epsilon <= 0:
            raise ValueError(f"epsilon must be a number > 0; received {epsilon!r}")
        self.epsilon = float(epsilon)

    def build(self, input_shape):
        self.scale = self.add_weight(
            name="scale", shape=(input_shape[-1],), initializer="ones", trainable=True
        )
        self.built = True

    def call(self, x):
        values = ops.cast(x, "float32")
        mean_square = ops.mean(ops.square(values), axis=-1, keepdims=True)  # (..., 1)
        normalized = values * ops.rsqrt(mean_square + self.epsilon)
        return ops.cast(normalized * ops.cast(self.scale, "float32"), self.compute_dtype)

    def get_config(self):
        return {**super().get_config(), "epsilon": self.epsilon}
