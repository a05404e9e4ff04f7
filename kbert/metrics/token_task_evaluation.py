"""Evaluating token and span models end to end: predict, decode to words, score like CoNLL."""

import numpy as np
from keras import ops

from kbert.data.span_features import decode_spans
from kbert.metrics.entity_metrics import bio_to_entities, entity_scores, repair_bio, token_accuracy
from kbert.text.feature_batches import feature_batches


def evaluate_tagger(
    tagger, features, gold_tags, tag_names, combine="first", repair="begin", batch_size=64
):
    """Tags sentences with a `TokenClassifier` and scores entities and tokens.

    Args:
        tagger: `kbert.models.TokenClassifier`.
        features: dict from `kbert.data.token_classification_features` for these sentences.
        gold_tags: list (one per sentence) of lists of str tags.
        tag_names: sequence of str, the tag set in id order.
        combine: str, default "first". See `TokenClassifier.predict_word_tags`.
        repair: str, default "begin". How invalid predicted `I-X` are read (`repair_bio`); a
            CRF tagger decodes valid IOB2 paths only, so it leaves nothing to repair within a
            window.
        batch_size: int, default 64.

    Returns:
        A dict: `entity` (the `entity_scores` dict), `token_accuracy`, `predicted_tags` (the
        repaired tags per sentence), `repaired_tags` (how many predicted tags were invalid IOB2).
    """
    predicted_ids = tagger.predict_word_tags(
        features,
        batch_size=batch_size,
        combine=combine,
        num_sentences=len(gold_tags),
        tag_names=tag_names,
    )
    raw = [[tag_names[i] for i in ids] for ids in predicted_ids]
    predicted = [repair_bio(tags, repair) for tags in raw]
    repaired = sum(
        a != b
        for tags, fixed in zip(raw, predicted, strict=False)
        for a, b in zip(tags, fixed, strict=False)
    )
    return {
        "entity": entity_scores([list(tags) for tags in gold_tags], predicted),
        "token_accuracy": token_accuracy([list(tags) for tags in gold_tags], predicted),
        "predicted_tags": predicted,
        "repaired_tags": int(repaired),
    }


def predict_span_probabilities(model, features, batch_size=64):
    """Span-type probabilities `(rows, spans, 1 + types)` from a `SpanClassifier`."""
    keys = list(model.input)
    width = features["span_starts"].shape[1]
    parts = []
    for batch in feature_batches(
        features, batch_size=batch_size, input_keys=keys, extra_length_keys=("span_mask",)
    ):
        probabilities = ops.convert_to_numpy(ops.softmax(model(batch, training=False), axis=-1))
        parts.append(np.pad(probabilities, ((0, 0), (0, width - probabilities.shape[1]), (0, 0))))
    return np.concatenate(parts)


def evaluate_span_classifier(model, features, gold_tags, type_names, nested=False, batch_size=64):
    """Labels candidate spans with a `SpanClassifier`, decodes entities, scores them.

    Args:
        model: `kbert.models.SpanClassifier`.
        features: dict from `kbert.data.span_features`.
        gold_tags: list (one per sentence) of IOB2 tag lists, or of entity collections.
        type_names: sequence of str, entity types without NULL.
        nested: bool, default False. See `decode_spans`.
        batch_size: int, default 64.

    Returns:
        A dict: `entity` (the `entity_scores` dict) and `predicted_entities` per sentence.
    """
    probabilities = predict_span_probabilities(model, features, batch_size)
    predicted = decode_spans(features, probabilities, len(gold_tags), type_names, nested=nested)
    gold = [
        bio_to_entities(list(tags)) if tags and isinstance(next(iter(tags)), str) else set(tags)
        for tags in gold_tags
    ]
    return {"entity": entity_scores(gold, predicted), "predicted_entities": predicted}
