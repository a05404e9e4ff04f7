"""A tiny hand-written vocabulary and one end-to-end check for the kbert.text layers.

The numeric layers have `tests/layer_test_case.py`; text layers hold no weights and take strings,
so their check differs: config and serialization round trips, `tf.function` and `tf.data` agree
with the eager call.
"""

import keras
import numpy as np
import tensorflow as tf

# Ids are positions: [PAD]=0, [UNK]=1, [CLS]=2, [SEP]=3, [MASK]=4, "hello"=5, ...
TINY_VOCABULARY = [
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]",
    "hello", "world", "the", "cat", "sat", "un", "##aff", "##able",
    "cafe", "naive", "ang", "##strom", "don", "t", "u", "s", "a", "##a", "3", "14",
    "!", ",", ".", "'", "?", "$", "=", "«", "»", "¿", "[", "]",
    "中", "文", "##文", "ab", "##cd", "istanbul", "ο", "##δ", "##ο", "##σ", "ς", "ﬁ", "abc",
    "ok", "x", "e", "##e", "et", "b", "c", "d",
]  # fmt: skip


def token_strings(tokenizer, text, **kwargs):
    """The tokens (as strings) of one text, for readable expectations."""
    return [tokenizer.id_to_token(i) for i in tokenizer(text, **kwargs).numpy().tolist()]


def _to_lists(outputs):
    if isinstance(outputs, dict):
        return {key: _to_lists(value) for key, value in outputs.items()}
    if isinstance(outputs, tf.RaggedTensor):
        return outputs.to_list()
    return np.asarray(outputs).tolist()


def check_preprocessing_layer(layer, inputs):
    """Checks a text layer end to end and returns its eager outputs on `inputs`.

    The layer holds no weights and is not trainable; `from_config(get_config())` and a Keras
    serialization round trip rebuild it with identical outputs; a `tf.function` and a `tf.data`
    map give the eager result.

    Args:
        layer: the layer under test.
        inputs: what to call it on (a tensor or a tuple of tensors).

    Returns:
        The eager outputs, converted to nested lists.
    """
    assert layer.weights == []
    assert not layer.trainable
    expected = _to_lists(layer(inputs))

    rebuilt = layer.__class__.from_config(layer.get_config())
    assert rebuilt.get_config() == layer.get_config()
    assert _to_lists(rebuilt(inputs)) == expected

    restored = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(layer))
    assert type(restored) is type(layer)
    assert _to_lists(restored(inputs)) == expected

    assert _to_lists(tf.function(lambda x: layer(x))(inputs)) == expected

    # tf.data hands a tuple element to map() as separate arguments.
    mapped = tf.data.Dataset.from_tensors(inputs).map(lambda *x: layer(x if len(x) > 1 else x[0]))
    assert _to_lists(next(iter(mapped))) == expected
    return expected
