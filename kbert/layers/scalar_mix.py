"""ELMo's scalar mix: a learned, softmax-normalised weighted sum of an encoder's layers."""

import keras
import numpy as np
from keras import ops

from kbert.checks import check_positive_int


@keras.saving.register_keras_serializable(package="kbert")
class ScalarMix(keras.layers.Layer):
    """Computes `gamma * sum_k softmax(w)_k * x_k` over `num_inputs` layer representations.

    ELMo (Peters et al. 2018, eq. 1) feeds a task model this task-specific mix of the biLM's
    layers; a feature-based BERT does the same over `hidden_states` (the NAACL 2019 tutorial,
    §4.2.A). `w` starts at zeros (every layer weighted equally) and `gamma`, a scalar that lets
    the task rescale the whole vector, at `initial_gamma`; both are trained with the task.

    Args:
        num_inputs: int. How many layers are mixed (an `Encoder`'s `num_layers + 1`).
        initial_gamma: float, default 1.0. Starting value of the trainable scale `gamma`.
        **kwargs: passed to `keras.layers.Layer`.

    Call args:
        inputs: float tensor `(batch, num_inputs, ..., hidden)` (the layers stacked on axis 1),
            or a list of `num_inputs` tensors `(batch, ..., hidden)`.

    Returns:
        The mix, `(batch, ..., hidden)`: the input shape without axis 1.

    Example:
    >>> mix = ScalarMix(2)
    >>> x = ops.array([[[1.0, 2.0], [3.0, 6.0]]])  # (batch 1, 2 layers, hidden 2)
    >>> ops.convert_to_numpy(mix(x)).tolist()  # equal weights at the start: the mean
    [[2.0, 4.0]]
    >>> mix.mixing_weights().tolist()
    [0.5, 0.5]
    """

    def __init__(self, num_inputs, initial_gamma=1.0, **kwargs):
        super().__init__(**kwargs)
        self.num_inputs = check_positive_int("num_inputs", num_inputs)
        self.initial_gamma = float(initial_gamma)

    def build(self, input_shape):
        self._check_count(input_shape)
        self.scalar_weights = self.add_weight(
            shape=(self.num_inputs,), initializer="zeros", name="scalar_weights"
        )
        self.gamma = self.add_weight(
            shape=(), initializer=keras.initializers.Constant(self.initial_gamma), name="gamma"
        )
        self.built = True

    def _check_count(self, shapes):
        """Raises unless `shapes` (one stacked shape, or one shape per input) has num_inputs."""
        if _is_shape_list(shapes):
            if len(shapes) == self.num_inputs:
                return
            received = f"a list of {len(shapes)} tensors"
        else:
            if len(shapes) >= 3 and shapes[1] in (None, self.num_inputs):
                return
            received = f"a tensor of shape {tuple(shapes)}"
        raise ValueError(
            f"ScalarMix expected {self.num_inputs} inputs: a list of {self.num_inputs} tensors "
            f"or a tensor (batch, {self.num_inputs}, ..., hidden); received {received}"
        )

    def call(self, inputs):
        if isinstance(inputs, (list, tuple)):
            self._check_count([tuple(x.shape) for x in inputs])
            inputs = ops.stack(list(inputs), axis=1)  # (batch, num_inputs, ..., hidden)
        else:
            self._check_count(tuple(inputs.shape))
        # Softmax in float32 whatever the compute dtype: the weights are few and compete closely.
        weights = ops.softmax(ops.cast(self.scalar_weights, "float32"))  # (num_inputs,)
        weights = ops.cast(weights * ops.cast(self.gamma, "float32"), inputs.dtype)
        rank = len(inputs.shape)
        weights = ops.reshape(weights, (1, self.num_inputs) + (1,) * (rank - 2))
        return ops.sum(inputs * weights, axis=1)  # (batch, ..., hidden)

    def mixing_weights(self):
        """Returns the normalised layer weights `softmax(w)` as a float32 numpy array.

        Returns:
            numpy array `(num_inputs,)` summing to 1, bottom layer first (for reporting which
            layers a task uses; multiply by `gamma` for the effective scale).

        Example:
        >>> ScalarMix(4).mixing_weights().tolist()
        [0.25, 0.25, 0.25, 0.25]
        """
        if not self.built:  # before the first call the weights are their initial zeros
            return np.full((self.num_inputs,), 1.0 / self.num_inputs, "float32")
        weights = ops.softmax(ops.cast(self.scalar_weights, "float32"))
        return np.asarray(ops.convert_to_numpy(weights), "float32")

    def compute_output_shape(self, input_shape):
        if _is_shape_list(input_shape):
            return tuple(input_shape[0])
        return (input_shape[0],) + tuple(input_shape[2:])

    def get_config(self):
        return {
            **super().get_config(),
            "num_inputs": self.num_inputs,
            "initial_gamma": self.initial_gamma,
        }


def _is_shape_list(shapes):
    """True for a list of shapes (list input), False for one shape (stacked input)."""
    if isinstance(shapes, list) and not shapes:
        return True
    return (
        isinstance(shapes, (list, tuple))
        and len(shapes) > 0
        and all(isinstance(shape, (list, tuple)) for shape in shapes)
    )
