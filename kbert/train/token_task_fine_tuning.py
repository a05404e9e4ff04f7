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

__all__ = [
    "NER_METHODS",
    "build_ner_model",
    "entity_types",
    "fine_tune_ner",
    "fine_tune_question_answerer",
    "model_method",
    "ner_features",
    "question_budget",
]


def fine_tune_ner(
    model,
    tokenizer,
    words,
    tags,
    tag_names,
    epochs=3,
    batch_size=32,
    learning_rate=3e-4,
    warmup_fraction=0.1,
    weight_decay=0.01,
    seed=0,
    sequence_length=128,
    max_span_length=8,
    label_all_subwords=False,
    stride=None,
    callbacks=(),
    gradient_accumulation_steps=1,
    verbose=1,
):
    """Featurizes tagged sentences and fine-tunes an NER model; returns `(history, seconds)`."""
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
    return fine_tune_on_features(
        model,
        features,
        label,
        epochs=epochs,
        batch_size=batch_size,
        learning_rate=learning_rate,
        warmup_fraction=warmup_fraction,
        weight_decay=weight_decay,
        seed=seed,
        extra_length_keys=extra,
        callbacks=callbacks,
        gradient_accumulation_steps=gradient_accumulation_steps,
        verbose=verbose,
    )


def fine_tune_question_answerer(
    model,
    tokenizer,
    examples,
    epochs=2,
    batch_size=32,
    learning_rate=1e-4,
    warmup_fraction=0.1,
    weight_decay=0.01,
    seed=0,
    sequence_length=384,
    stride=128,
    callbacks=(),
    gradient_accumulation_steps=1,
    verbose=1,
):
    """Featurizes SQuAD-style examples (windows) and fine-tunes a `QuestionAnswerer`.

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
    history, seconds = fine_tune_on_features(
        model,
        features,
        labels,
        epochs=epochs,
        batch_size=batch_size,
        learning_rate=learning_rate,
        warmup_fraction=warmup_fraction,
        weight_decay=weight_decay,
        seed=seed,
        callbacks=callbacks,
        gradient_accumulation_steps=gradient_accumulation_steps,
        verbose=verbose,
    )
    return history, seconds, len(features["token_ids"])
