"""Fine-tuning a task model on pre-computed token features (NER, span NER, extractive QA)."""

import time

from kbert.checks import check_positive_int
from kbert.text.feature_batches import feature_batches
from kbert.train.build_before_tracing import BuildBeforeTracing
from kbert.train.fine_tuning import fine_tuning_optimizer, unused_pooler_frozen


def fine_tune_on_features(
    model,
    features,
    label_keys,
    validation=None,
    epochs=3,
    batch_size=32,
    learning_rate=5e-5,
    warmup_fraction=0.1,
    weight_decay=0.01,
    seed=0,
    extra_length_keys=(),
    metrics=None,
    jit_compile=False,
    callbacks=(),
    gradient_accumulation_steps=1,
    verbose=1,
):
    """Compiles and fits `model` with the standard recipe; returns `(history, seconds)`.

    The recipe is the sentence-level one (`kbert.train.fine_tune_classifier`): AdamW with warmup
    then linear decay to 0 over exactly the run's steps, weight decay off for biases and
    LayerNorms; batches come from `kbert.text.feature_batches` (length-grouped, trimmed) and the
    loss from `model.default_loss()`.

    Args:
        model: a kbert task model with `default_loss()` (`TokenClassifier`, `SpanClassifier`,
            `QuestionAnswerer`).
        features: dict of numpy arrays (a featurizer's output).
        label_keys: str, sequence of str or dict, as in `feature_batches`.
        validation: features dict, default None. Its loss is logged after every epoch.
        epochs: int, default 3.
        batch_size: int, default 32.
        learning_rate: float, default 5e-5.
        warmup_fraction: float, default 0.1.
        weight_decay: float, default 0.01.
        seed: int, default 0. Shuffling seed.
        extra_length_keys: sequence of str, default (). See `feature_batches`.
        metrics: Keras metrics, default None.
        jit_compile: bool, default False.
        callbacks: list of Keras callbacks.
        gradient_accumulation_steps: int >= 1, default 1. Update once every N batches with
            their mean gradient (`fine_tuning_optimizer`). The loss of a token task is a mean
            over the batch's labelled tokens, so N batches of B equal one batch of N × B
            exactly only when each holds as many labelled tokens; otherwise each batch's
            tokens weigh in proportion to 1 / (its labelled tokens).
        verbose: int, default 1.

    Returns:
        `(keras.callbacks.History, training seconds)`.
    """
    epochs = check_positive_int("epochs", epochs)
    if isinstance(label_keys, str):
        label_keys = (label_keys,)
    input_keys = list(model.input) if isinstance(model.input, dict) else None
    train_batches = feature_batches(
        features,
        label_keys,
        batch_size,
        training=True,
        seed=seed,
        extra_length_keys=extra_length_keys,
        input_keys=input_keys,
    )
    validation_batches = (
        None
        if validation is None
        else feature_batches(
            validation, label_keys, 64, extra_length_keys=extra_length_keys, input_keys=input_keys
        )
    )
    steps = -(-len(features["padding_mask"]) // batch_size) * epochs
    with unused_pooler_frozen(model):  # token and span heads read no pooler: no gradient
        model.compile(
            optimizer=fine_tuning_optimizer(
                steps,
                learning_rate,
                warmup_fraction,
                weight_decay,
                gradient_accumulation_steps=gradient_accumulation_steps,
            ),
            loss=model.default_loss(),
            metrics=metrics,
            jit_compile=jit_compile,
        )
        start = time.perf_counter()
        history = model.fit(
            train_batches,
            validation_data=validation_batches,
            epochs=epochs,
            shuffle=False,  # the batches are reshuffled by `feature_batches`; Keras would warn
            callbacks=[*callbacks, BuildBeforeTracing(train_batches)],  # last: see its docstring
            verbose=verbose,
        )
    return history, time.perf_counter() - start
