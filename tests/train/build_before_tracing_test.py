"""`BuildBeforeTracing`: `fit` traces its train step once, and trains exactly as without it."""

import keras
import numpy as np
import tensorflow as tf

from kbert.models import Encoder, SequenceClassifier
from kbert.train import BuildBeforeTracing, GradualUnfreezing


def _fit(callbacks_for):
    keras.utils.set_random_seed(0)
    model = SequenceClassifier(Encoder.from_preset("tiny", vocabulary_size=50), num_classes=3)
    traces = []
    train_step = model.train_step

    def counted(data):
        traces.append(1)  # Python runs here only while tracing
        return train_step(data)

    model.train_step = counted
    rng = np.random.default_rng(0)
    inputs = {
        "token_ids": rng.integers(1, 50, (32, 8)).astype("int32"),
        "segment_ids": np.zeros((32, 8), "int32"),
        "padding_mask": np.ones((32, 8), bool),
    }
    batches = tf.data.Dataset.from_tensor_slices((inputs, rng.integers(0, 3, 32))).batch(8)
    model.compile("adamw", model.default_loss(), metrics=["accuracy"])
    model.fit(batches, epochs=2, verbose=0, callbacks=callbacks_for(batches))
    return len(traces), model.get_weights()


def test_fit_traces_once_and_trains_the_same_weights():
    traces, weights = _fit(lambda batches: [BuildBeforeTracing(batches)])
    plain_traces, plain_weights = _fit(lambda batches: [])
    assert (traces, plain_traces) == (1, 2)
    for built, plain in zip(weights, plain_weights, strict=True):
        np.testing.assert_array_equal(built, plain)


def test_after_gradual_unfreezing_the_optimizer_knows_every_group():
    # GradualUnfreezing builds the optimizer on the weights of every stage at on_train_begin;
    # BuildBeforeTracing, after it, must leave that optimizer as it is.
    def callbacks(batches):
        return [GradualUnfreezing(every=1, total_steps=8), BuildBeforeTracing(batches)]

    traces, weights = _fit(callbacks)
    _, plain_weights = _fit(lambda batches: [GradualUnfreezing(every=1, total_steps=8)])
    assert traces >= 1  # every stage retraces: its trainable weights differ
    for built, plain in zip(weights, plain_weights, strict=True):
        np.testing.assert_array_equal(built, plain)
