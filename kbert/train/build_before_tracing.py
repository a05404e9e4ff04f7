"""`BuildBeforeTracing`: a callback that makes `fit` trace its train step once, not twice."""

import keras

from kbert.keras_internals import build_training_state


class BuildBeforeTracing(keras.callbacks.Callback):
    """Creates the optimizer's, metrics' and loss's variables at `on_train_begin`.

    With TensorFlow and no distribution strategy, Keras 3 creates them while it traces the
    first train step, and a `tf.function` that creates variables is traced twice. Building
    them first makes `fit` trace once: on 2 CPU cores a tiny encoder's short fit takes about a
    third less time, with identical weights (`tests/train/build_before_tracing_test.py`).
    Put it last in the callback list, after any callback that builds the optimizer itself on
    the weights a later stage will train (`GradualUnfreezing`, `ChainThaw`,
    `ResumableBackup`).

    Args:
        batches: the `tf.data.Dataset` given to `fit` (or its `element_spec`): one training
            batch's structure `(x, y)` or `(x, y, sample_weight)`.

    Example:

        model.fit(batches, epochs=3, callbacks=[*callbacks, BuildBeforeTracing(batches)])
    """

    def __init__(self, batches):
        super().__init__()
        self.batch_spec = getattr(batches, "element_spec", batches)

    def on_train_begin(self, logs=None):
        build_training_state(self.model, self.batch_spec)
