"""Each Keras internal kbert relies on (`kbert.keras_internals`) still behaves as kbert needs:
a Keras release that changes one fails here, in one place."""

import keras
import numpy as np
import tensorflow as tf

from kbert import keras_internals
from kbert.models import Encoder


def _frozen_encoder():
    encoder = Encoder.from_preset("tiny")
    encoder.trainable = False
    return encoder


def test_sublayers_walk_every_nested_layer_once():
    encoder = Encoder.from_preset("tiny")
    layers = keras_internals.sublayers(encoder)
    assert layers[0] is encoder and len({id(layer) for layer in layers}) == len(layers)
    assert encoder.embeddings in layers
    owned = {id(v) for layer in layers for v in keras_internals.variables_created_trainable(layer)}
    assert owned == {id(v) for v in encoder.trainable_weights}


def test_a_frozen_layer_still_lists_the_variables_it_would_train():
    encoder = _frozen_encoder()
    assert encoder.trainable_weights == []
    listed = [
        v
        for layer in keras_internals.sublayers(encoder)
        for v in keras_internals.variables_created_trainable(layer)
    ]
    assert listed and not any(v.trainable for v in listed)
    encoder.trainable = True
    assert {id(v) for v in listed} == {id(v) for v in encoder.trainable_weights}


def test_mark_trainable_does_not_unfreeze_the_sublayers():
    encoder = _frozen_encoder()
    keras_internals.mark_trainable(encoder)
    assert encoder.trainable and not encoder.embeddings.trainable
    assert encoder.trainable_weights == []


def test_an_optimizer_knows_only_the_variables_it_was_built_for():
    built, other = keras.Variable(np.zeros(2)), keras.Variable(np.zeros(2))
    optimizer = keras.optimizers.Adam()
    optimizer.build([built])
    assert keras_internals.optimizer_knows(optimizer, built)
    assert not keras_internals.optimizer_knows(optimizer, other)


def test_skip_to_epoch_makes_fit_start_there():
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    epochs = []

    class Skip(keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            keras_internals.skip_to_epoch(self.model, 2)

        def on_epoch_begin(self, epoch, logs=None):
            epochs.append(epoch)

    model.fit(np.zeros((4, 2)), np.zeros((4, 1)), epochs=4, verbose=0, callbacks=[Skip()])
    assert epochs == [2, 3]


def test_build_training_state_creates_the_optimizer_and_metric_variables():
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(3)])
    model.compile("adam", keras.losses.SparseCategoricalCrossentropy(True), metrics=["accuracy"])
    assert not model.optimizer.built and not model.metrics[-1].built
    spec = (tf.TensorSpec((None, 2), tf.float32), tf.TensorSpec((None,), tf.int32))
    keras_internals.build_training_state(model, spec)
    assert model.optimizer.built and model.metrics[-1].built
    assert all(
        keras_internals.optimizer_knows(model.optimizer, v) for v in model.trainable_variables
    )


def test_schedule_step_is_the_batch_count_keras_gives_its_schedules():
    steps = []

    class Record(keras.optimizers.schedules.LearningRateSchedule):
        def __call__(self, step):
            steps.append(int(step))
            return 0.1

    variable = keras.Variable(np.zeros(1, "float32"))
    optimizer = keras.optimizers.SGD(Record(), gradient_accumulation_steps=3)
    for _ in range(7):
        optimizer.apply([np.ones(1, "float32")], [variable])
    assert int(optimizer.iterations) == 2  # updates
    assert int(keras_internals.schedule_step(optimizer)) == 7  # batches
    steps.clear()
    optimizer.learning_rate  # noqa: B018 (evaluates the schedule)
    assert steps == [7]


def test_tracing_for_xla_is_true_only_inside_a_jit_compiled_trace():
    seen = []

    def record(x):
        seen.append(keras_internals.tracing_for_xla())
        return x

    tf.function(record, jit_compile=True)(tf.constant(1.0))
    tf.function(record)(tf.constant(1.0))
    assert seen == [True, False]
    assert keras_internals.tracing_for_xla() is False  # eager


def test_a_trackable_object_saves_what_is_set_on_it(tmp_path):
    module = keras_internals.trackable_object()
    module.variables = [tf.Variable(2.0)]  # a list, as the TF Hub interface wants
    module.double = tf.function(lambda x: 2 * x, input_signature=[tf.TensorSpec([], tf.float32)])
    tf.saved_model.save(module, str(tmp_path))
    loaded = tf.saved_model.load(str(tmp_path))
    assert float(loaded.double(3.0)) == 6.0
    assert [float(v) for v in loaded.variables] == [2.0]
