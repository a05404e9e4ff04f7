"""kbert's encoder input names and TF Hub's BERT ones (`input_word_ids`, ...), each way."""

import keras

HUB_INPUT_KEYS = ("input_word_ids", "input_mask", "input_type_ids")
_KBERT_TO_HUB = {
    "token_ids": "input_word_ids",
    "padding_mask": "input_mask",
    "segment_ids": "input_type_ids",
}


def hub_text_inputs_from_kbert(inputs):
    """Renames kbert encoder inputs to TF Hub's BERT names.

    Args:
        inputs: dict with `token_ids`, `padding_mask` and (optional) `segment_ids`.

    Returns:
        dict with `input_word_ids`, `input_mask`, `input_type_ids` (zeros when `segment_ids`
        is missing), int32.

    Raises:
        ValueError: `inputs` is not a dict or lacks `token_ids` / `padding_mask`.

    Example:
    >>> ids = tf.constant([[2, 5, 3]])
    >>> sorted(hub_text_inputs_from_kbert({"token_ids": ids, "padding_mask": ids > 0}))
    ['input_mask', 'input_type_ids', 'input_word_ids']
    """
    if not isinstance(inputs, dict):
        raise ValueError(f"inputs must be a dict of kbert inputs; received {type(inputs).__name__}")
    missing = [key for key in ("token_ids", "padding_mask") if key not in inputs]
    if missing:
        raise ValueError(f"inputs must have token_ids and padding_mask; missing {missing}")
    result = {
        hub: keras.ops.cast(inputs[kbert], "int32")
        for kbert, hub in _KBERT_TO_HUB.items()
        if kbert in inputs
    }
    if "input_type_ids" not in result:
        result["input_type_ids"] = keras.ops.zeros_like(result["input_word_ids"])
    return result


def kbert_inputs_from_hub(inputs):
    """Renames TF Hub BERT inputs (`input_word_ids`, ...) to kbert's (`token_ids`, ...).

    Args:
        inputs: dict with `input_word_ids`, `input_mask`, `input_type_ids`.

    Returns:
        dict with `token_ids`, `padding_mask`, `segment_ids`.

    Raises:
        ValueError: a key is missing.

    Example:
    >>> ids = tf.constant([[2, 5, 3]])
    >>> sorted(kbert_inputs_from_hub({"input_word_ids": ids, "input_mask": ids,
    ...                               "input_type_ids": ids}))
    ['padding_mask', 'segment_ids', 'token_ids']
    """
    missing = [key for key in HUB_INPUT_KEYS if key not in inputs]
    if missing:
        raise ValueError(f"inputs must have the keys {list(HUB_INPUT_KEYS)}; missing {missing}")
    return {kbert: inputs[hub] for kbert, hub in _KBERT_TO_HUB.items()}
