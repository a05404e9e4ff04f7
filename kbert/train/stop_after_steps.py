"""A Keras callback that ends `fit` after a number of optimizer steps, part-way through an epoch
if need be: how two runs with different epoch lengths (a dataset and its augmented copy, say)
take the same number of updates."""

import keras


class StopAfterSteps(keras.callbacks.Callback):
    """Ends `fit` once `steps` batches have trained, part-way through an epoch if need be.

    Args:
        steps: int >= 1. The batches to train.
    """

    def __init__(self, steps):
        super().__init__()
        if not isinstance(steps, int) or isinstance(steps, bool) or steps < 1:
            raise ValueError(f"steps must be an int >= 1; received {steps!r}")
        self.steps = steps
        self.seen = 0

    def on_train_batch_end(self, batch, logs=None):
        self.seen += 1
        if self.seen >= self.steps:
            self.model.stop_training = True
