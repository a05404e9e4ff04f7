"""The NER and extractive-QA training recipes the labs, the CLI and the benchmark share.

NER comes in three methods over the same encoder (`kbert.tasks.ner.NER_METHODS`: softmax, CRF,
span-based); QA is BERT's start/end pointer over the context (tutorial §5.B). Predicting and
scoring a trained model is `kbert.tasks.ner` and `kbert.tasks.question_answering`.
"""

from kbert.data.question_answering_features import question_answering_features
from kbert.models.question_answerer import QuestionAnswerer
from kbert.tasks.ner import NER_METHODS, build_ner_model, entity_types, model_method, ner_features
from kbert.tasks.question_answering import question_budget
from kbert.train.feature_fine_tuning import fine_tune_on_features
from kbert.train.training_settings import TrainingSettings

__all__ = [
    "NER_METHODS",
    "NER_TRAINING",
    "QUESTION_ANSWERING_TRAINING",
    "build_ner_model",
    "entity_types",
    "fine_tune_ner",
    "fine_tune_question_answerer",
    "model_method",
    "ner_features",
    "question_budget",
]

# Each task's defaults: the sentence-level recipe's, at the higher rates these heads train at.
NER_TRAINING = TrainingSettings(learning_rate=3e-4)
QUESTION_ANSWERING_TRAINING = TrainingSettings(epochs=2, learning_rate=1e-4)


def fine_tune_ner(
    model,
    tokenizer,
    words,
    tags,
    tag_names,
    settings=NER_TRAINING,
    sequence_length=128,
    max_span_length=8,
    label_all_subwords=False,
    stride=None,
):
    """Featurizes tagged sentences and fine-tunes an NER model; returns `(history, seconds)`.

    `settings` is a `kbert.train.TrainingSettings`, default `NER_TRAINING` (peak rate 3e-4);
    change a field with `NER_TRAINING.replace(...)`.
    """
    method = model_method(model)
    features = ner_features(
        method,
        words,
        tokenizer,
        tag_names,
        tags,
        sequence_length,
        max_span_length,
        label_all_subwords,
        stride,
    )
    label = "span_labels" if method == "span" else "labels"
    extra = ("span_mask",) if method == "span" else ()
    return fine_tune_on_features(model, features, label, settings=settings, extra_length_keys=extra)


def fine_tune_question_answerer(
    model,
    tokenizer,
    examples,
    settings=QUESTION_ANSWERING_TRAINING,
    sequence_length=384,
    stride=128,
):
    """Featurizes SQuAD-style examples (windows) and fine-tunes a `QuestionAnswerer`.

    `settings` is a `kbert.train.TrainingSettings`, default `QUESTION_ANSWERING_TRAINING`
    (2 epochs, peak rate 1e-4); change a field with `QUESTION_ANSWERING_TRAINING.replace(...)`.

    Returns:
        `(history, seconds, number of training windows)`.
    """
    features = question_answering_features(
        examples,
        tokenizer,
        sequence_length,
        stride,
        question_budget(sequence_length),
        training=True,
    )
    labels = {output: key for key, output in QuestionAnswerer.LABEL_OUTPUTS.items()}
    history, seconds = fine_tune_on_features(model, features, labels, settings=settings)
    return history, seconds, len(features["token_ids"])
