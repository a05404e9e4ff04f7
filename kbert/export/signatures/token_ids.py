"""The `token_ids` signature: packed ids in, the model's raw float32 outputs out.

For clients that tokenize themselves (with the exported `assets/vocab.txt`). The graph checks the
three (batch, sequence) inputs first: one shape, `token_ids` in [0, vocabulary_size),
`segment_ids` in [0, num_segments) when the model has a segment table, `padding_mask` 0 or 1.
"""

import tensorflow as tf

from kbert.export.graph_inputs import assert_in_range, assert_rank

# The model's raw outputs per task; a bare encoder ("embed") gives both of its outputs.
_OUTPUTS = {
    "answer": ("start_logits", "end_logits"),
    "embed": ("sequence_output", "pooled_output"),
}
_SIGNATURE = "token_ids"


def token_ids(graph, token_ids, segment_ids, padding_mask):
    """Runs the exported model on packed ids.

    Args:
        graph: `kbert.export.signatures.serving_graph.ServingGraph`.
        token_ids: int32 (batch, sequence).
        segment_ids: int32 (batch, sequence).
        padding_mask: int32 (batch, sequence), 1 at tokens and 0 at padding.

    Returns:
        dict of float32 outputs: `logits` ("classify"), `emissions` ("tag"), `start_logits` and
        `end_logits` ("answer"), or `sequence_output` and `pooled_output` ("embed").
    """
    inputs = {"token_ids": token_ids, "segment_ids": segment_ids, "padding_mask": padding_mask}
    outputs = graph.model(_checked_inputs(graph, inputs), training=False)
    task = graph.settings.task
    if task == "classify":
        return {"logits": tf.cast(outputs, tf.float32)}
    if task == "tag":
        return {"emissions": tf.cast(outputs, tf.float32)}
    return {key: tf.cast(outputs[key], tf.float32) for key in _OUTPUTS[task]}


def _checked_inputs(graph, inputs):
    """The inputs, asserted (batch, sequence), of one shape and in range first."""
    ranks = [
        assert_rank(value, 2, _SIGNATURE, name, "int32 tensor [batch, sequence]")
        for name, value in inputs.items()
    ]
    with tf.control_dependencies(ranks):  # the checks below need rank 2
        inputs = {name: tf.identity(value) for name, value in inputs.items()}
    checks = [_same_shape(inputs), *_range_checks(graph, inputs)]
    with tf.control_dependencies(checks):
        return {name: tf.identity(value) for name, value in inputs.items()}


def _same_shape(inputs):
    """Asserts `segment_ids` and `padding_mask` have the shape of `token_ids`."""
    shapes = {name: tf.shape(value) for name, value in inputs.items()}  # (2,) each
    same = tf.reduce_all(
        tf.stack(
            [
                tf.equal(shapes[name], shapes["token_ids"])
                for name in ("segment_ids", "padding_mask")
            ]
        )
    )
    message = tf.strings.format(
        f"signature {_SIGNATURE}: inputs segment_ids and padding_mask must have the shape "
        "of token_ids; received token_ids {}, segment_ids {}, padding_mask {}",
        tuple(shapes.values()),
    )
    return tf.debugging.Assert(same, [message])


def _range_checks(graph, inputs):
    """Asserts each input's values are in its range."""
    # A kbert encoder states its table sizes; another encoder (a TF Hub module wrapped by
    # kbert.hub) reads the exported vocabulary, and its segment table size is unknown.
    config = getattr(graph.encoder, "config", None)
    vocabulary_size = getattr(config, "vocabulary_size", None) or graph.vocabulary_size
    checks = [
        assert_in_range(
            inputs["token_ids"],
            0,
            vocabulary_size,
            _SIGNATURE,
            "token_ids",
            f"ids in [0, {vocabulary_size}) (vocabulary_size)",
        )
    ]
    num_segments = getattr(config, "num_segments", None)
    if num_segments:  # without a segment table the model ignores segment_ids
        checks.append(
            assert_in_range(
                inputs["segment_ids"],
                0,
                num_segments,
                _SIGNATURE,
                "segment_ids",
                f"ids in [0, {num_segments}) (num_segments)",
            )
        )
    checks.append(
        assert_in_range(
            inputs["padding_mask"],
            0,
            2,
            _SIGNATURE,
            "padding_mask",
            "values 0 (padding) or 1 (token)",
        )
    )
    return checks
