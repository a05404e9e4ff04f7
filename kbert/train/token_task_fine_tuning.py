"""The NER and extractive-QA recipes the labs, the CLI and the benchmark share.

NER comes in three methods over the same encoder: `softmax` (J&M's BIO tagger, a softmax per
token), `crf` (the same emissions plus a linear-chain CRF) and `span` (J&M §11.5.2, every span of
up to `max_span_length` words classified as a type or NULL). QA is BERT's start/end pointer over
the context (tutorial §5.B).
"""

import time

import numpy as np
from keras import ops

from kbert.data.question_answering_features import question_answering_features
from kbert.data.span_features import decode_spans, span_features
from kbert.data.token_classification_features import token_classification_features
from kbert.metrics.entity_metrics import bio_to_entities, repair_bio
from kbert.metrics.squad_metrics import squad_scores
from kbert.metrics.token_task_evaluation import (
    evaluate_span_classifier,
    evaluate_tagger,
    predict_span_probabilities,
)
from kbert.models.answer_decoding import decode_answers
from kbert.models.question_answerer import QuestionAnswerer
from kbert.models.span_classifier import SpanClassifier
from kbert.models.token_classifier import TokenClassifier
from kbert.text.feature_batches import feature_batches
from kbert.train.feature_fine_tuning import fine_tune_on_features

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


# ------------------------------------------------------------------ extractive QA


def question_budget(sequence_length):
    """Most question tokens kept: 64 (BERT's `max_query_length`), or half a short input."""
    return min(64, sequence_length // 2)


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


def predict_answers(
    model,
    tokenizer,
    examples,
    sequence_length=384,
    stride=128,
    n_best=20,
    max_answer_length=30,
    batch_size=64,
):
    """Answers (text, character offsets, score, probability) per example id."""
    features = question_answering_features(
        examples, tokenizer, sequence_length, stride, question_budget(sequence_length)
    )
    width = features["token_ids"].shape[1]
    starts, ends = [], []
    inputs = {key: features[key] for key in ("token_ids", "segment_ids", "padding_mask")}
    for batch in feature_batches(inputs, batch_size=batch_size):
        outputs = model(batch, training=False)
        for name, parts in (("start_logits", starts), ("end_logits", ends)):
            logits = ops.convert_to_numpy(outputs[name])
            parts.append(
                np.pad(logits, ((0, 0), (0, width - logits.shape[1])), constant_values=-1e4)
            )
    return decode_answers(
        examples,
        features,
        np.concatenate(starts),
        np.concatenate(ends),
        n_best=n_best,
        max_answer_length=max_answer_length,
    )


def evaluate_question_answerer(
    model,
    tokenizer,
    examples,
    sequence_length=384,
    stride=128,
    n_best=20,
    max_answer_length=30,
    batch_size=64,
):
    """SQuAD v1.1 exact match and F1 (percent) of a `QuestionAnswerer` on examples."""
    start = time.perf_counter()
    answers = predict_answers(
        model, tokenizer, examples, sequence_length, stride, n_best, max_answer_length, batch_size
    )
    references = {example.id: [text for text, _ in example.answers] for example in examples}
    scores = squad_scores({key: value["text"] for key, value in answers.items()}, references)
    scores["seconds"] = time.perf_counter() - start
    scores["answers"] = answers
    return scores
