import keras
import numpy as np
import pytest
from keras import ops

from kbert.layers import ClassificationHead, TaggingHead
from tests.layer_test_case import run_layer_test


def _encoder_outputs(batch=2, length=5, hidden=16):
    rng = np.random.default_rng(0)
    return {
        "sequence_output": rng.normal(size=(batch, length, hidden)).astype("float32"),
        "pooled_output": rng.normal(size=(batch, hidden)).astype("float32"),
    }


def _dense(layer, inputs):
    kernel, bias = (ops.convert_to_numpy(w) for w in layer.logits_layer.weights)
    return inputs @ kernel + bias


PADDING_MASK = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], "int32")


@pytest.mark.parametrize("pooling", ["pooler", "cls", "mean", "max", "last", "concat"])
def test_classification_head_pools_then_applies_one_dense(pooling):
    outputs = _encoder_outputs()
    head = ClassificationHead(3, pooling=pooling, dropout=0.0)
    logits = ops.convert_to_numpy(head(outputs, padding_mask=PADDING_MASK))
    sequence, mask = outputs["sequence_output"], PADDING_MASK[:, :, None].astype(bool)
    pooled = {
        "pooler": outputs["pooled_output"],
        "cls": sequence[:, 0],
        "mean": (sequence * mask).sum(1) / mask.sum(1),
        "max": np.where(mask, sequence, -1e9).max(1),
        "last": sequence[[0, 1], [2, 4]],
    }
    pooled["concat"] = np.concatenate([pooled["last"], pooled["max"], pooled["mean"]], -1)
    assert logits.shape == (2, 3) and logits.dtype == np.float32
    np.testing.assert_allclose(logits, _dense(head, pooled[pooling]), rtol=1e-5, atol=1e-5)


def test_tagging_head_scores_every_token():
    outputs = _encoder_outputs()
    head = TaggingHead(4, dropout=0.0)
    logits = ops.convert_to_numpy(head(outputs))
    assert logits.shape == (2, 5, 4)
    np.testing.assert_allclose(
        logits, _dense(head, outputs["sequence_output"]), rtol=1e-5, atol=1e-5
    )


def test_dropout_only_in_training():
    outputs = _encoder_outputs()
    head = ClassificationHead(2, pooling="mean", dropout=0.5)
    inference = ops.convert_to_numpy(head(outputs, training=False))
    np.testing.assert_allclose(inference, ops.convert_to_numpy(head(outputs)), atol=1e-6)
    assert not np.allclose(inference, ops.convert_to_numpy(head(outputs, training=True)))


@pytest.mark.parametrize(
    "layer_cls, init_kwargs, output_shape",
    [
        (ClassificationHead, {"num_classes": 5, "pooling": "concat", "dropout": 0.2}, (2, 5)),
        (ClassificationHead, {"num_classes": 3, "pooling": "pooler", "dropout": 0.0}, (2, 3)),
        (TaggingHead, {"num_tags": 7, "dropout": 0.3}, (2, 5, 7)),
    ],
)
def test_layer_end_to_end(layer_cls, init_kwargs, output_shape):
    # Dict inputs (the encoder's outputs); the logits stay float32 under the mixed policies.
    run_layer_test(
        layer_cls,
        init_kwargs,
        _encoder_outputs(),
        {"padding_mask": PADDING_MASK} if layer_cls is ClassificationHead else None,
        expected_output_shape=output_shape,
        expected_num_trainable_weights=2,
        precision_output_dtype="float32",
    )
    serialized = keras.saving.serialize_keras_object(layer_cls(**init_kwargs))
    assert type(keras.saving.deserialize_keras_object(serialized)) is layer_cls


def test_bad_arguments_are_errors():
    with pytest.raises(ValueError, match=r"num_classes must be an int >= 2; received 1"):
        ClassificationHead(1)
    with pytest.raises(ValueError, match=r"pooling must be one of .*received 'sum'"):
        ClassificationHead(2, pooling="sum")
    with pytest.raises(ValueError, match=r"dropout must be a float in \[0, 1\); received 1.0"):
        ClassificationHead(2, dropout=1.0)
    with pytest.raises(ValueError, match=r"num_tags must be an int >= 2; received True"):
        TaggingHead(True)
    with pytest.raises(ValueError, match=r"dropout must be a float in \[0, 1\); received -0.1"):
        TaggingHead(3, dropout=-0.1)
