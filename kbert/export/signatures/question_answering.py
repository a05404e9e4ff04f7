"""The `answer` signature: questions and contexts in, answer spans out."""

import tensorflow as tf

from kbert.export.graph_decoding import answer_outputs
from kbert.export.graph_inputs import checked_texts, same_batch, substrings


def answer(graph, question, context):
    """Finds the best answer span of each question in its context, in the serving graph.

    `question` is segment A, `context` segment B of one window; the question is kept and the
    context cut to fit, so an answer beyond the window is not found.

    Args:
        graph: `kbert.export.signatures.serving_graph.ServingGraph` of a `QuestionAnswerer`.
        question: (batch,) string tensor.
        context: (batch,) string tensor.

    Returns:
        dict of `answer_start`, `answer_end` (character offsets into the cleaned, cut context,
        end exclusive; -1 without a candidate span), `answer_text` and `score`.
    """
    question, context = checked_texts("answer", question=question, context=context)
    check = same_batch(question, context, "question", "context")
    with tf.control_dependencies([check]):
        question = tf.identity(graph.clean(question))
        context = tf.identity(graph.clean(context))
    packed = graph.trimmed(graph.aligned((question, context)))
    logits = graph.run_model(packed)
    outputs = dict(
        answer_outputs(
            tf.cast(logits["start_logits"], tf.float32),
            tf.cast(logits["end_logits"], tf.float32),
            packed["segment_ids"],
            packed["padding_mask"],
            packed["start_offsets"],
            packed["end_offsets"],
            graph.settings.max_answer_length,
        )
    )
    outputs = {key: outputs[key] for key in ("answer_start", "answer_end", "score")}
    outputs["answer_text"] = substrings(context, outputs["answer_start"], outputs["answer_end"])
    return outputs
