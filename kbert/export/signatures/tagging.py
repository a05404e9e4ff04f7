"""The `tag` signature: texts in, a tag per word and the entities they form out."""

import tensorflow as tf

from kbert.export.graph_decoding import tag_outputs
from kbert.export.graph_inputs import checked_texts, substrings


def tag(graph, text):
    """Tags a batch of texts in the serving graph.

    Tags are read at each word's first subword (Viterbi under IOB2 constraints when the model
    has a CRF); entity spans are character offsets into the cleaned, cut text, and words past
    the window get no tag.

    Args:
        graph: `kbert.export.signatures.serving_graph.ServingGraph` of a `TokenClassifier`
            with IOB2 `label_names`.
        text: (batch,) string tensor.

    Returns:
        dict of `tags`, `word_starts`, `word_ends`, `num_words`, `entity_types`,
        `entity_starts`, `entity_ends`, `entity_texts` and `num_entities`
        (see `kbert.export.graph_decoding.tag_outputs`).
    """
    (text,) = checked_texts("tag", text=text)
    text = graph.clean(text)
    packed = graph.trimmed(graph.aligned(text))
    emissions = tf.cast(graph.run_model(packed), tf.float32)
    outputs = dict(
        tag_outputs(
            emissions,
            packed["word_ids"],
            packed["start_offsets"],
            packed["end_offsets"],
            graph.settings.label_names,
            crf=graph.model.crf_layer,
        )
    )
    outputs["entity_texts"] = substrings(text, outputs["entity_starts"], outputs["entity_ends"])
    return outputs
