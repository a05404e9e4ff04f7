"""Low-rank adaptation of a Dense layer (Hu et al. 2021)."""

import math

import keras
from keras import ops

from kbert.layers.dropout import Dropout


@keras.saving.register_keras_serializable(package="kbert")
class LoRADense(keras.layers.Layer):
    """A frozen `Dense` plus a trainable low-rank update: `y = dense(x) + (alpha/rank)·B(A(x))`.

    `A` (in, rank) starts Kaiming-uniform, `B` (rank, out) at zero, so the wrapped layer starts
    equal to the base layer, and only `A` and `B` train (the base kernel and bias are frozen).
    The update is applied before the base layer's activation, as a change of its kernel would
    be; `merged_kernel()` returns that kernel, for export without the wrapper.

    Args:
        dense: `keras.layers.Dense`. The base layer; it is set non-trainable.
        rank: int, default 8. Rank `r` of the update.
        alpha: float, default 16. Scale numerator: the update is multiplied by `alpha / rank`.
        dropout: float, default 0.0. Dropout on the update branch's input.

    Example:
    >>> layer = LoRADense(keras.layers.Dense(8), rank=2, alpha=4)
    >>> tuple(layer(keras.ops.ones((2, 3, 8))).shape)
    (2, 3, 8)
    """

    def __init__(self, dense, rank=8, alpha=16, dropout=0.0, **kwargs):
        super().__init__(**kwargs)
        if isinstance(dense, dict):
            dense = keras.saving.deserialize_keras_object(dense)
        if not isinstance(dense, keras.layers.Dense):
            raise ValueError(
                f"LoRADense wraps a keras.layers.Dense (a layer with a kernel); "
                f"received {getattr(dense, 'name', dense)!r} of type "
                f"{type(dense).__name__}"
            )
        if rank < 1:
            raise ValueError(f"rank must be a positive int; received rank={rank}")
        self.dense = dense
        self.dense.trainable = False
        self.rank = rank
        self.alpha = alpha
        self.dropout = dropout
        self.scale = alpha / rank
        self.dropout_layer = Dropout(dropout, dtype=self.dtype_policy)

    def build(self, input_shape):
        if not self.dense.built:
            self.dense.build(input_shape)
        input_dim = input_shape[-1]
        # Hu et al.'s reference code: A Kaiming-uniform (a=√5, PyTorch's Linear default), B zero.
        bound = 1.0 / math.sqrt(input_dim)
        self.lora_a = self.add_weight(
            name="lora_a",
            shape=(input_dim, self.rank),
            initializer=keras.initializers.RandomUniform(-bound, bound),
        )
        self.lora_b = self.add_weight(
            name="lora_b", shape=(self.rank, self.dense.units), initializer="zeros"
        )
        self.built = True

    def call(self, inputs, training=None):
        dense = self.dense
        base = ops.matmul(inputs, dense.kernel)  # (..., units)
        update = ops.matmul(
            ops.matmul(self.dropout_layer(inputs, training=training), self.lora_a), self.lora_b
        )  # (..., units)
        outputs = base + ops.cast(self.scale, update.dtype) * update
        if dense.use_bias:
            outputs = outputs + dense.bias
        return dense.activation(outputs) if dense.activation is not None else outputs

    def merged_kernel(self):
        """Returns `W + (alpha/rank)·A·B`, shaped `(in, out)` like a Keras Dense kernel."""
        return self.dense.kernel + self.scale * ops.matmul(self.lora_a, self.lora_b)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-1]) + (self.dense.units,)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "dense": keras.saving.serialize_keras_object(self.dense),
                "rank": self.rank,
                "alpha": self.alpha,
                "dropout": self.dropout,
            }
        )
        return config
