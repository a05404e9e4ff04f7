"""The position-wise feed-forward sublayer of a transformer block."""

import keras

from kbert.layers.activations import get_activation
from kbert.layers.initializers import clone_initializer


@keras.saving.register_keras_serializable(package="kbert")
class FeedForward(keras.layers.Layer):
    """Dense → activation → Dense, applied to every position independently.

    The two projections are named sublayers, `intermediate` and `output`, so adaptation wrappers
    can address them.

    Args:
        hidden_dim: int. Input and output width.
        intermediate_dim: int. Width of the inner layer (4 × hidden_dim in BERT).
        activation: str, default "gelu" (exact). See `kbert.layers.activations.get_activation`.
        kernel_initializer: initializer, default TruncatedNormal(stddev=0.02).

    Example:
    >>> layer = FeedForward(hidden_dim=8, intermediate_dim=32)
    >>> tuple(layer(keras.ops.ones((2, 3, 8))).shape)
    (2, 3, 8)
    """

    def __init__(
        self, hidden_dim, intermediate_dim, activation="gelu", kernel_initializer=None, **kwargs
    ):
        super().__init__(**kwargs)
        self.hidden_dim = hidden_dim
        self.intermediate_dim = intermediate_dim
        self.activation = activation
        self.activation_fn = get_activation(activation)
        self.kernel_initializer = keras.initializers.get(
            kernel_initializer or keras.initializers.TruncatedNormal(stddev=0.02)
        )
        self.intermediate = keras.layers.Dense(
            intermediate_dim,
            kernel_initializer=clone_initializer(self.kernel_initializer),
            dtype=self.dtype_policy,
            name="intermediate",
        )
        self.output_dense = keras.layers.Dense(
            hidden_dim,
            kernel_initializer=clone_initializer(self.kernel_initializer),
            dtype=self.dtype_policy,
            name="output",
        )

    def build(self, input_shape):
        self.intermediate.build(input_shape)
        self.output_dense.build(tuple(input_shape[:-1]) + (self.intermediate_dim,))
        self.built = True

    def call(self, inputs):
        return self.output_dense(self.activation_fn(self.intermediate(inputs)))

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-1]) + (self.hidden_dim,)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "hidden_dim": self.hidden_dim,
                "intermediate_dim": self.intermediate_dim,
                "activation": self.activation,
                "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
            }
        )
        return config
