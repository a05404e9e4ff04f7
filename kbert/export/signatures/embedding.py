"""The `embed` signature: texts in, the encoder's [CLS] and mean embeddings out."""

import tensorflow as tf

from kbert.export.graph_inputs import checked_texts


def embed(graph, text):
    """Embeds a batch of texts with the exported model's encoder, in the serving graph.

    Args:
        graph: `kbert.export.signatures.serving_graph.ServingGraph` of any exported model.
        text: (batch,) string tensor.

    Returns:
        dict of `cls_embedding` (the top layer's [CLS] vector) and `mean_embedding` (the mean
        of `sequence_output` over the real tokens, [CLS] and [SEP] included), float32
        (batch, hidden).
    """
    (text,) = checked_texts("embed", text=text)
    packed = graph.trimmed(graph.preprocessor(graph.clean(text)))
    outputs = graph.run_encoder(packed)
    sequence = tf.cast(outputs["sequence_output"], tf.float32)  # (batch, seq, hidden)
    mask = tf.cast(packed["padding_mask"], tf.float32)[:, :, None]  # (batch, seq, 1)
    total = tf.reduce_sum(sequence * mask, axis=1)  # (batch, hidden)
    count = tf.maximum(tf.reduce_sum(mask, axis=1), 1.0)  # (batch, 1)
    return {"cls_embedding": sequence[:, 0, :], "mean_embedding": total / count}
