"""Fine-tuning a `SequenceClassifier` on `Examples`: the loop the CLI, labs and benchmarks share."""

import time

import keras
import tensorflow as tf

from kbert.checks import check_positive_int
from kbert.data.classification_dataset import classification_dataset
from kbert.models.sequence_classifier import classification_loss
from kbert.train.build_before_tracing import BuildBeforeTracing
from kbert.train.fine_tuning import (
    check_accumulation_steps,
    count_batches,
    fine_tuning_optimizer,
    unused_pooler_frozen,
)


def fine_tune_classifier(
    classifier,
    preprocessor,
    train,
    validation=None,
    epochs=3,
    batch_size=32,
    learning_rate=5e-5,
    warmup_fraction=0.1,
    warmup_steps=None,
    weight_decay=0.01,
    seed=0,
    jit_compile=False,
    callbacks=(),
    optimizer=None,
    gradient_accumulation_steps=1,
    verbose=1,
):
    """Compiles and fits `classifier` with the standard recipe; returns `(history, seconds)`.

    Batches are grouped by length (`classification_dataset`), the optimizer is AdamW with
    warmup then linear decay to 0 over exactly the run's steps (`fine_tuning_optimizer`), and
    validation (when given) runs after every epoch, so `val_accuracy` is in the logs.

    Args:
        classifier: `kbert.models.SequenceClassifier` (or any model taking the encoder's dict).
        preprocessor: `kbert.text.BertPreprocessor`.
        train: `kbert.data.Examples` (texts, text_pairs, labels).
        validation: `Examples`, default None.
        epochs: int, default 3.
        batch_size: int, default 32.
        learning_rate: float, default 5e-5. Peak rate.
        warmup_fraction: float, default 0.1. Ignored when `warmup_steps` is given.
        warmup_steps: int, default None. An absolute number of warmup steps (the NAACL
            tutorial warms up for 10).
        weight_decay: float, default 0.01.
        seed: int, default 0. Shuffling seed (set Keras's global seed for weights and dropout).
        jit_compile: bool, default False.
        callbacks: list of Keras callbacks.
        optimizer: callable or None, default None. `optimizer(total_steps)` returns the
            optimizer to use instead of the standard one (a `DiscriminativeOptimizer` with
            per-group schedules, say); the run's exact step count (in batches) is only known
            here. With accumulation it must accumulate as many batches itself.
        gradient_accumulation_steps: int >= 1, default 1. Update once every N batches with
            their mean gradient: `batch_size × N` examples per update
            (`fine_tuning_optimizer`).
        verbose: int, default 1.

    Returns:
        `(keras.callbacks.History, training seconds)`.
    """
    epochs = check_positive_int("epochs", epochs)
    accumulation = check_accumulation_steps(gradient_accumulation_steps)
    train_batches = classification_dataset(
        preprocessor,
        train.texts,
        train.text_pairs,
        train.labels,
        batch_size,
        training=True,
        seed=seed,
    )
    validation_batches = (
        None
        if validation is None
        else classification_dataset(
            preprocessor, validation.texts, validation.text_pairs, validation.labels, 64
        )
    )
    batches_per_epoch = count_batches(train_batches)  # exact: it does not depend on the order
    # Told its length, Keras shows the first epoch's total too ("1/Unknown" otherwise).
    train_batches = train_batches.apply(tf.data.experimental.assert_cardinality(batches_per_epoch))
    steps = batches_per_epoch * epochs
    if warmup_steps is not None:
        warmup_fraction = min(warmup_steps / steps, 1.0)
    if optimizer is None:
        compiled_optimizer = fine_tuning_optimizer(
            steps,
            learning_rate,
            warmup_fraction,
            weight_decay,
            gradient_accumulation_steps=accumulation,
        )
    else:
        compiled_optimizer = optimizer(steps)
        if not isinstance(compiled_optimizer, keras.optimizers.Optimizer):
            raise ValueError(
                "optimizer must be a callable returning a keras Optimizer from the "
                f"step count; it returned {type(compiled_optimizer).__name__}"
            )
        if (compiled_optimizer.gradient_accumulation_steps or 1) != accumulation:
            raise ValueError(
                f"gradient_accumulation_steps={accumulation} but the optimizer from "
                "`optimizer(total_steps)` accumulates "
                f"{compiled_optimizer.gradient_accumulation_steps or 1}; make it with "
                f"gradient_accumulation_steps={accumulation}"
            )
    with unused_pooler_frozen(classifier):  # a pooler the head does not read gets no gradient
        classifier.compile(
            optimizer=compiled_optimizer,
            loss=classifier.default_loss()
            if hasattr(classifier, "default_loss")
            else classification_loss(),
            metrics=["accuracy"],
            jit_compile=jit_compile,
        )
        start = time.perf_counter()
        history = classifier.fit(
            train_batches,
            validation_data=validation_batches,
            epochs=epochs,
            shuffle=False,  # the dataset reshuffles itself every epoch; Keras would only warn
            callbacks=[*callbacks, BuildBeforeTracing(train_batches)],  # last: see its docstring
            verbose=verbose,
        )
    return history, time.perf_counter() - start
