"""Fine-tuning a task model on pre-computed token features (NER, span NER, extractive QA)."""

from kbert.text.feature_batches import feature_batches
from kbert.train.fine_tuning import compile_and_fit
from kbert.train.training_settings import DEFAULT_TRAINING


def fine_tune_on_features(
    model,
    features,
    label_keys,
    validation=None,
    settings=DEFAULT_TRAINING,
    extra_length_keys=(),
    metrics=None,
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
        settings: `kbert.train.TrainingSettings`, default `DEFAULT_TRAINING`. With
            gradient accumulation, mind that the loss of a token task is a mean over the
            batch's labelled tokens, so N batches of B equal one batch of N × B exactly only
            when each holds as many labelled tokens; otherwise each batch's tokens weigh in
            proportion to 1 / (its labelled tokens).
        extra_length_keys: sequence of str, default (). See `feature_batches`.
        metrics: Keras metrics, default None.

    Returns:
        `(keras.callbacks.History, training seconds)`.
    """
    if isinstance(label_keys, str):
        label_keys = (label_keys,)
    input_keys = list(model.input) if isinstance(model.input, dict) else None
    train_batches = feature_batches(
        features,
        label_keys,
        settings.batch_size,
        training=True,
        seed=settings.seed,
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
    batches_per_epoch = -(-len(features["padding_mask"]) // settings.batch_size)
    # token and span heads read no pooler: `compile_and_fit` freezes it
    return compile_and_fit(
        model,
        settings,
        train_batches,
        validation_batches,
        batches_per_epoch,
        model.default_loss(),
        metrics=metrics,
    )
