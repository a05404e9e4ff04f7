"""kbert's only reach-ins to Keras and TensorFlow internals, each with the reason no public API
will do.

Keras 3 has no public way to list a layer's nested sublayers, to list the variables a frozen
layer would train once unfrozen, to mark a container trainable without unfreezing every
sublayer, to ask an optimizer which variables it was built for, to read the step an
optimizer hands its learning-rate schedule, to tell `fit` to skip the epochs a backup already
holds, or to build a model's training state before `fit` traces its step. Freezing, gradual
unfreezing, per-group learning rates, resumable training and `kbert.train.BuildBeforeTracing`
need these seven. TensorFlow has no public plain trackable object (the TF Hub export's modules)
and no public way to ask whether a function is being traced for XLA (`apply_to_real_tokens`).
They live here, so a release that changes one fails `tests/keras_internals_test.py` in this one
place, and no other kbert module names a private Keras attribute, `tf.__internal__` or
`tensorflow.python` (`tests/style_test.py` checks).

`kbert.train.DiscriminativeOptimizer` is the one exception: it subclasses Keras's optimizer
and overrides `_backend_update_step`, the hook `BaseOptimizer.apply` calls once the gradients
of all variables are unscaled, accumulated and clipped together; a subclass is where Keras
expects that hook to be overridden.
"""

import tensorflow as tf


def sublayers(layer):
    """`layer` and every layer nested in it, each once, outermost first."""
    return list(layer._flatten_layers(include_self=True))


def variables_created_trainable(layer):
    """The variables `layer` itself created trainable, whatever its `trainable` flag is now.

    Freezing a layer sets each of these variables' `trainable` to False but keeps them in this
    list, so it tells a frozen layer's weights apart from state that never trains (BatchNorm
    statistics, seed generators). Sublayers' variables are not included (see `sublayers`).
    """
    return list(layer._trainable_variables)


def mark_trainable(layer):
    """Sets `layer.trainable` to True without the setter's cascade to every sublayer.

    The setter would unfreeze all of `layer`'s sublayers; unfreezing one group of an encoder
    must leave the encoder's other groups frozen, while the encoder itself (a container of the
    group) must be trainable for the group's weights to be listed in `trainable_weights`.
    """
    layer._trainable = True


def optimizer_knows(optimizer, variable):
    """Whether a built `optimizer` was built for `variable` (and so can update it)."""
    return optimizer._var_key(variable) in optimizer._trainable_variables_indices


def schedule_step(optimizer):
    """The step Keras calls `optimizer`'s learning-rate schedule with: its `apply` calls so far.

    Under gradient accumulation this counts batches, while the public `optimizer.iterations`
    counts updates (the batch count floor-divided by the accumulation steps). A schedule that
    `kbert.train.DiscriminativeOptimizer` evaluates for a group must see the count Keras gives
    its own schedules, so that `LearningRateSchedule(steps_per_update=N)` means the same for
    every optimizer kbert builds.
    """
    return optimizer._iterations


def skip_to_epoch(model, epoch):
    """Makes the running `fit` of `model` start at `epoch` (call it from `on_train_begin`).

    `fit` reads `model._initial_epoch` after the callbacks' `on_train_begin`; Keras's own
    `BackupAndRestore` resumes through the same attribute.
    """
    model._initial_epoch = epoch


def build_training_state(model, batch_spec):
    """Creates the variables `fit` would create while tracing its first step, before it does.

    The optimizer's slots, the compiled metrics' counters and the loss's state, through
    Keras's own `_symbolic_build`, which `fit` runs only for a model made under a distribution
    strategy. Why this matters, and when to call it: `kbert.train.BuildBeforeTracing`.

    Args:
        model: a compiled Keras model.
        batch_spec: the structure of one training batch `(x, y)` or `(x, y, sample_weight)`,
            as `tf.TensorSpec`s (a `tf.data.Dataset`'s `element_spec`) or tensors.
    """
    model._symbolic_build(data_batch=batch_spec)


def trackable_object():
    """An empty object that `tf.saved_model.save` saves with every trackable set on it.

    The TF Hub export builds its modules from these (`tf.__internal__.tracking.AutoTrackable`).
    `tf.Module`, the public subclass, will not do: its `variables` and `trainable_variables` are
    read-only properties, and the reusable-SavedModel interface TF Hub loads wants them set to
    lists of the encoder's variables.
    """
    return tf.__internal__.tracking.AutoTrackable()


def tracing_for_xla():
    """True while TensorFlow traces a function to be compiled with XLA (`jit_compile=True`).

    Through a private TensorFlow helper (Keras 2 used it for the same purpose); should it vanish,
    this returns False, and `kbert.layers.unpadding` keeps its gather path, which is correct, only
    slower under XLA.
    """
    try:
        from tensorflow.python.ops import control_flow_util
    except ImportError:
        return False
    check = getattr(control_flow_util, "GraphOrParentsInXlaContext", None)
    return bool(check and check(tf.compat.v1.get_default_graph()))
