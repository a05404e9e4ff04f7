"""`model_in_dtype`: the model itself in its own dtype, else a copy with its weights, untouched."""

import keras
import numpy as np
import pytest

from kbert.export.model_in_dtype import model_in_dtype
from kbert.models import Encoder, QuestionAnswerer, SequenceClassifier, peft
from kbert.models.token_classifier import TokenClassifier
from tests.text.text_test_case import TINY_VOCABULARY

IDS = np.array([[2, 5, 6, 7, 3, 0]], "int32")
INPUTS = {"token_ids": IDS, "segment_ids": np.zeros_like(IDS), "padding_mask": np.sign(IDS)}


def tiny_encoder(dtype=None):
    keras.utils.set_random_seed(0)
    return Encoder.from_preset("tiny", vocabulary_size=len(TINY_VOCABULARY), dtype=dtype)


def compute_dtypes(model):
    encoder = model if isinstance(model, Encoder) else model.encoder
    return {layer.compute_dtype for layer in encoder.blocks}


def test_the_model_in_its_own_dtype_is_returned_as_is():
    classifier = SequenceClassifier(tiny_encoder(), num_classes=3)
    assert model_in_dtype(classifier, "float32") is classifier
    mixed = SequenceClassifier(tiny_encoder("mixed_bfloat16"), num_classes=3)
    assert model_in_dtype(mixed, "bfloat16") is mixed


@pytest.mark.parametrize(
    "build",
    [
        lambda encoder: SequenceClassifier(encoder, num_classes=3, hidden_units=(8,)),
        lambda encoder: TokenClassifier(encoder, num_tags=5, crf=True),
        lambda encoder: QuestionAnswerer(encoder),
        lambda encoder: encoder,
        lambda encoder: SequenceClassifier(
            peft.add_lora(encoder, targets=("query", "value"), rank=2), num_classes=3
        ),
    ],
    ids=["classifier", "tagger", "answerer", "encoder", "lora_classifier"],
)
def test_a_bfloat16_copy_keeps_float32_weights_and_leaves_the_model_alone(build):
    model = build(tiny_encoder())
    copy = model_in_dtype(model, "bfloat16")
    assert copy is not model and type(copy) is type(model)
    assert compute_dtypes(copy) == {"bfloat16"} and compute_dtypes(model) == {"float32"}
    assert [w.path for w in copy.weights] == [w.path for w in model.weights]
    assert {w.dtype for w in copy.weights} == {"float32"}
    for ours, theirs in zip(copy.get_weights(), model.get_weights(), strict=True):
        np.testing.assert_array_equal(ours, theirs)
    # Same weights, bfloat16 arithmetic: close, not equal; float32 outputs (logits layers).
    expected, actual = model(INPUTS, training=False), copy(INPUTS, training=False)
    for want, got in zip(keras.tree.flatten(expected), keras.tree.flatten(actual), strict=True):
        got = keras.ops.convert_to_numpy(keras.ops.cast(got, "float32"))
        np.testing.assert_allclose(got, keras.ops.convert_to_numpy(want), atol=0.1)


def test_a_mixed_model_is_rebuilt_in_float32():
    mixed = SequenceClassifier(tiny_encoder("mixed_bfloat16"), num_classes=3)
    copy = model_in_dtype(mixed, "float32")
    assert compute_dtypes(copy) == {"float32"} and compute_dtypes(mixed) == {"bfloat16"}
    assert copy(INPUTS).dtype == "float32"


def test_bad_arguments_are_refused_by_name():
    classifier = SequenceClassifier(tiny_encoder(), num_classes=3)
    with pytest.raises(ValueError, match=r"compute_dtype must be one of .*received 'float16'"):
        model_in_dtype(classifier, "float16")
    inputs = keras.Input(shape=(None,), dtype="int32", name="token_ids")
    stranger = keras.Model(inputs, keras.layers.Embedding(10, 4)(inputs))
    with pytest.raises(ValueError, match="needs a kbert Encoder.*received a Functional"):
        model_in_dtype(stranger, "bfloat16")
