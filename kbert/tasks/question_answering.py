"""Extractive QA inference and evaluation: windows, start/end logits, answers, SQuAD scores.

BERT's start/end pointer over the context (tutorial §5.B, J&M §11.4.4). Training is
`kbert.train.token_task_fine_tuning.fine_tune_question_answerer`; `predict_answers` and
`evaluate_question_answerer` read a trained `QuestionAnswerer`.
"""

import time

import numpy as np
from keras import ops

from kbert.data.question_answering_features import question_answering_features
from kbert.metrics.squad_metrics import squad_scores
from kbert.models.answer_decoding import decode_answers
from kbert.text.feature_batches import feature_batches


def question_budget(sequence_length):
    """Most question tokens kept: 64 (BERT's `max_query_length`), or half a short input."""
    return min(64, sequence_length // 2)


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
