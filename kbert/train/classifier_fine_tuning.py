"""Fine-tuning a `SequenceClassifier` on `Examples`: the loop the CLI, labs and benchmarks share."""

import tensorflow as tf

from kbert.data.classification_dataset import classification_dataset
from kbert.models.sequence_classifier import classification_loss
from kbert.train.fine_tuning import compile_and_fit, count_batches
from kbert.train.training_settings import DEFAULT_TRAINING


def fine_tune_classifier(
    classifier,
    preprocessor,
    train,
    validation=None,
    settings=DEFAULT_TRAINING,
    optimizer=None,
):
    """Compiles and fits `classifier` with the standard recipe; returns `(history, seconds)`.

    Batches are grouped by length (`classification_dataset`), the optimizer is AdamW with
    warmup then linear decay to 0 over exactly the run's steps (`fine_tuning_optimizer`), and
    validation (when given) runs after every epoch, so `val_accuracy` is in the logs. A model
    with `default_loss()` / `default_metrics()` (`SliceAwareClassifier`) is compiled with those.

    Args:
        classifier: `kbert.models.SequenceClassifier` (or any model taking the encoder's dict).
        preprocessor: `kbert.text.BertPreprocessor`.
        train: `kbert.data.Examples` (texts, text_pairs, labels).
        validation: `Examples`, default None.
        settings: `kbert.train.TrainingSettings`, default `DEFAULT_TRAINING` (3 epochs of
            batches of 32, peak rate 5e-5, 10% warmup, weight decay 0.01, seed 0).
        optimizer: callable or None, default None. `optimizer(total_steps)` returns the
            optimizer to use instead of the standard one (a `DiscriminativeOptimizer` with
            per-group schedules, say); the run's exact step count (in batches) is only known
            here. With accumulation it must accumulate as many batches itself.

    Returns:
        `(keras.callbacks.History, training seconds)`.
    """
    train_batches = classification_dataset(
        preprocessor,
        train.texts,
        train.text_pairs,
        train.labels,
        settings.batch_size,
        training=True,
        seed=settings.seed,
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
    loss = (
        classifier.default_loss() if hasattr(classifier, "default_loss") else classification_loss()
    )
    return compile_and_fit(
        classifier,
        settings,
        train_batches,
        validation_batches,
        batches_per_epoch,
        loss,
        metrics=(
            classifier.default_metrics() if hasattr(classifier, "default_metrics") else ["accuracy"]
        ),
        optimizer=optimizer,
    )
