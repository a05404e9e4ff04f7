"""NER inference and evaluation: featurize words for a method, predict, decode, score like CoNLL.

NER comes in three methods over the same encoder: `softmax` (J&M's BIO tagger, a softmax per
token), `crf` (the same emissions plus a linear-chain CRF) and `span` (J&M §11.5.2, every span
of up to `max_span_length` words classified as a type or NULL). Training is
`kbert.train.token_task_fine_tuning.fine_tune_ner`; everything that reads a trained model is
here: `predict_entities` (character spans in raw texts), `evaluate_ner` (entity scores), and the
pieces they share.
"""

import time

import numpy as np
from keras import ops

from kbert.data.span_features import decode_spans, span_features
from kbert.data.token_classification_features import token_classification_features
from kbert.metrics.entity_metrics import bio_to_entities, entity_scores, repair_bio, token_accuracy
from kbert.models.span_classifier import SpanClassifier
from kbert.models.token_classifier import TokenClassifier
from kbert.text.feature_batches import feature_batches

NER_METHODS = ("softmax", "crf", "span")


def entity_types(tag_names):
    """The entity types of an IOB2 tag set, sorted: ("B-PER", "I-PER", "O") → ("PER",)."""
    return tuple(sorted({name[2:] for name in tag_names if name[:2] in ("B-", "I-")}))


def ner_features(
    method,
    words,
    tokenizer,
    tag_names,
    tags=None,
    sequence_length=128,
    max_span_length=8,
    label_all_subwords=False,
    stride=None,
):
    """Featurizes sentences for one NER method (`NER_METHODS`); `stride` as in
    `token_classification_features`."""
    if method not in NER_METHODS:
        raise ValueError(f"NER method must be one of {NER_METHODS}; received {method!r}")
    features = token_classification_features(
        words,
        tokenizer,
        tags=tags if method != "span" else None,
        tag_names=tag_names,
        sequence_length=sequence_length,
        stride=stride,
        label_all_subwords=label_all_subwords and method != "span",
    )
    if method == "span":
        entities = None if tags is None else [bio_to_entities(list(t)) for t in tags]
        features = span_features(
            features,
            max_span_length,
            entities,
            entity_types(tag_names) if tags is not None else None,
        )
    return features


def build_ner_model(method, encoder, tag_names, dropout=0.1, span_pooling="mean"):
    """A fresh `TokenClassifier` (softmax or CRF) or `SpanClassifier` on `encoder`."""
    if method not in NER_METHODS:
        raise ValueError(f"NER method must be one of {NER_METHODS}; received {method!r}")
    if method == "span":
        return SpanClassifier(
            encoder, len(entity_types(tag_names)), pooling=span_pooling, dropout=dropout
        )
    return TokenClassifier(encoder, len(tag_names), dropout=dropout, crf=method == "crf")


def model_method(model):
    """Which NER method a model implements."""
    if isinstance(model, SpanClassifier):
        return "span"
    if isinstance(model, TokenClassifier):
        return "crf" if model.crf else "softmax"
    raise ValueError(
        f"expected a TokenClassifier or SpanClassifier; received {type(model).__name__}"
    )


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


def evaluate_ner(
    model,
    tokenizer,
    words,
    tags,
    tag_names,
    sequence_length=128,
    max_span_length=8,
    combine="first",
    nested=False,
    batch_size=64,
    stride=None,
):
    """Entity scores (CoNLL exact match) of an NER model on tagged sentences.

    Returns:
        The dict of `evaluate_tagger` or `evaluate_span_classifier`, plus `seconds`.
    """
    method = model_method(model)
    start = time.perf_counter()
    features = ner_features(
        method, words, tokenizer, tag_names, None, sequence_length, max_span_length, stride=stride
    )
    if method == "span":
        result = evaluate_span_classifier(
            model, features, tags, entity_types(tag_names), nested=nested, batch_size=batch_size
        )
    else:
        result = evaluate_tagger(
            model, features, tags, tag_names, combine=combine, batch_size=batch_size
        )
    result["seconds"] = time.perf_counter() - start
    return result


def predict_entities(
    model,
    tokenizer,
    texts,
    tag_names,
    sequence_length=128,
    max_span_length=8,
    combine="first",
    nested=False,
    batch_size=64,
    stride=None,
):
    """Entities with character spans in raw texts.

    Words are the tokenizer's pre-tokenized words (whitespace-separated pieces with punctuation
    split off), read from its character offsets, so every entity maps back to the original text.

    Returns:
        A list (one per text) of lists of dicts `{"text", "type", "start", "end"}` (characters,
        end exclusive), in text order.
    """
    method = model_method(model)
    spans = []
    tokenized = tokenizer.tokenize_with_alignment(list(texts))
    for word_ids, starts, ends in zip(
        tokenized["word_ids"].to_list(),
        tokenized["start_offsets"].to_list(),
        tokenized["end_offsets"].to_list(),
        strict=True,
    ):
        words = {}
        for word, start, end in zip(word_ids, starts, ends, strict=True):
            low, high = words.get(word, (start, end))
            words[word] = (min(low, start), max(high, end))
        spans.append([words[w] for w in sorted(words)])
    nonempty = [i for i, s in enumerate(spans) if s]
    words = [[texts[i][a:b] for a, b in spans[i]] for i in nonempty]
    results = [[] for _ in texts]
    if not words:
        return results
    features = ner_features(
        method, words, tokenizer, tag_names, None, sequence_length, max_span_length, stride=stride
    )
    if method == "span":
        probabilities = predict_span_probabilities(model, features, batch_size)
        entities = decode_spans(
            features, probabilities, len(words), entity_types(tag_names), nested=nested
        )
    else:
        ids = model.predict_word_tags(
            features,
            batch_size=batch_size,
            combine=combine,
            num_sentences=len(words),
            tag_names=tag_names,
        )
        entities = [bio_to_entities(repair_bio([tag_names[i] for i in row])) for row in ids]
    for index, found in zip(nonempty, entities, strict=True):
        for start, end, kind in sorted(found):
            begin, finish = spans[index][start][0], spans[index][end - 1][1]
            results[index].append(
                {
                    "text": texts[index][begin:finish],
                    "type": kind,
                    "start": int(begin),
                    "end": int(finish),
                }
            )
    return results
