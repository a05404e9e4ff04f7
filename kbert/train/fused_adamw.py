"""AdamW whose per-variable update is one fused TensorFlow kernel.

Keras 3 writes Adam's update in backend-neutral ops: for each variable about a dozen elementwise
passes (the two moment updates, the square root, the division, three assignments). TensorFlow
has the whole update as one kernel, `ResourceApplyAdam`, one pass over the variable and its two
moments: the same arithmetic, `m ← β₁m + (1−β₁)g`, `v ← β₂v + (1−β₂)g²`,
`θ ← θ − lr·√(1−β₂ᵗ)/(1−β₁ᵗ) · m / (√v + ε)`. Decoupled weight decay, clipping, gradient
accumulation, loss scaling and the schedule stay Keras's, before the update.

A sparse gradient (an embedding's `IndexedSlices`) is made dense first, as Keras's Adam does;
AMSGrad and other backends take Keras's path.
"""

import keras


@keras.saving.register_keras_serializable(package="kbert")
class FusedAdamW(keras.optimizers.AdamW):
    """`keras.optimizers.AdamW` (same arguments, config and variables) with the update fused on
    TensorFlow.

    Example:
    >>> variable = keras.Variable([1.0, -1.0])
    >>> optimizer = FusedAdamW(learning_rate=0.1, weight_decay=0.0)
    >>> optimizer.apply([keras.ops.convert_to_tensor([1.0, -1.0])], [variable])
    >>> [round(float(value), 4) for value in variable.value]
    [0.9, -0.9]
    """

    def update_step(self, gradient, variable, learning_rate):
        if self.amsgrad or keras.backend.backend() != "tensorflow":
            return super().update_step(gradient, variable, learning_rate)
        import tensorflow as tf

        if isinstance(gradient, tf.IndexedSlices):
            gradient = tf.convert_to_tensor(gradient)  # Keras's Adam densifies it too
        dtype = variable.dtype
        step = tf.cast(self.iterations + 1, dtype)
        index = self._get_variable_index(variable)
        tf.raw_ops.ResourceApplyAdam(
            var=_handle(variable),
            m=_handle(self._momentums[index]),
            v=_handle(self._velocities[index]),
            beta1_power=tf.pow(tf.cast(self.beta_1, dtype), step),
            beta2_power=tf.pow(tf.cast(self.beta_2, dtype), step),
            lr=tf.cast(learning_rate, dtype),
            beta1=tf.cast(self.beta_1, dtype),
            beta2=tf.cast(self.beta_2, dtype),
            epsilon=tf.cast(self.epsilon, dtype),
            grad=tf.cast(gradient, dtype),
        )
        return None


def _handle(variable):
    """The resource handle of a `keras.Variable` or the `tf.Variable` Keras passes."""
    return (variable.value if isinstance(variable, keras.Variable) else variable).handle
