"""The `classify` signature: texts (or text pairs) in, labels and probabilities out."""

import tensorflow as tf

from kbert.export.graph_inputs import checked_texts, same_batch


def classify(graph, text, text_pair=None):
    """Classifies a batch of texts, or of text pairs, in the serving graph.

    Single texts go through the export's `LongTextPreprocessor` (head, head + tail, or sliding
    windows whose logits are averaged or max-pooled per text); pairs through its
    `BertPreprocessor`.

    Args:
        graph: `kbert.export.signatures.serving_graph.ServingGraph` of a `SequenceClassifier`.
        text: (batch,) string tensor.
        text_pair: (batch,) string tensor or None (default): second segments.

    Returns:
        dict of `label_ids` int32 (batch,), `labels` string (batch,), `probabilities` float32
        (batch, classes) (softmax, or one sigmoid per class for a `multi_label` model),
        `tokens` and `tokens_kept` int32 (batch,) and `truncated` bool (batch,).
    """
    if text_pair is None:
        (text,) = checked_texts("classify", text=text)
        logits, tokens, kept = _single_logits(graph, graph.clean(text))
    else:
        text, text_pair = checked_texts("classify", text=text, text_pair=text_pair)
        logits, tokens, kept = _pair_logits(graph, graph.clean(text), text_pair)
    if getattr(graph.model, "multi_label", False):
        probabilities = tf.sigmoid(logits)  # (batch, classes)
    else:
        probabilities = tf.nn.softmax(logits, axis=-1)  # (batch, classes)
    label_ids = tf.argmax(probabilities, axis=-1, output_type=tf.int32)  # (batch,)
    return {
        "label_ids": label_ids,
        "labels": graph.label_strings(label_ids),
        "probabilities": probabilities,
        "tokens": tokens,
        "tokens_kept": kept,
        "truncated": kept < tokens,
    }


def _single_logits(graph, text):
    """(logits (batch, classes), tokens (batch,), tokens kept (batch,)) of cleaned texts."""
    packed = graph.trimmed(graph.long_text(text))
    rows = tf.cast(graph.run_model(packed), tf.float32)
    logits = graph.long_text.aggregate(rows, packed)  # (batch, classes)
    return logits, packed["tokens"], packed["tokens_kept"]


def _pair_logits(graph, text, text_pair):
    """As `_single_logits`, for cleaned texts and their (checked, not yet cleaned) pairs."""
    check = same_batch(text, text_pair, "text", "text_pair")
    with tf.control_dependencies([check]):
        text_pair = tf.identity(graph.clean(text_pair))
    packed = graph.trimmed(graph.preprocessor((text, text_pair)))
    logits = tf.cast(graph.run_model(packed), tf.float32)
    tokenizer = graph.preprocessor.tokenizer
    tokens = (
        tf.cast(tokenizer(text).row_lengths() + tokenizer(text_pair).row_lengths(), tf.int32) + 3
    )  # (batch,) with [CLS] and two [SEP]
    kept = tf.reduce_sum(packed["padding_mask"], axis=1)
    return logits, tokens, kept
