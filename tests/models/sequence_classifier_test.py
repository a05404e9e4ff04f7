import keras
import numpy as np
import pytest

from kbert.models import CLASSIFIER_POOLING, Encoder, SequenceClassifier
from kbert.text import WordPieceTokenizer
from tests.model_test_case import run_model_test


def _inputs(batch=4, seq=6, seed=0):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(2, seq + 1, size=batch)
    mask = (np.arange(seq)[None, :] < lengths[:, None]).astype("int32")
    token_ids = rng.integers(5, 50, size=(batch, seq)).astype("int32") * mask
    segment_ids = (np.arange(seq)[None, :] >= 2).astype("int32") * mask
    return {"token_ids": token_ids, "segment_ids": segment_ids, "padding_mask": mask}


@pytest.mark.parametrize("pooling", CLASSIFIER_POOLING)
def test_every_pooling_trains_and_round_trips(pooling, tmp_path):
    keras.utils.set_random_seed(0)
    classifier = SequenceClassifier(
        Encoder.from_preset("tiny"), 3, pooling=pooling, hidden_units=(8,), batch_norm=True
    )
    x, y = _inputs(), np.array([0, 1, 2, 1])
    classifier.compile("adam", loss=classifier.default_loss())
    history = classifier.fit(x, y, epochs=3, verbose=0)
    assert np.isfinite(history.history["loss"]).all()
    path = tmp_path / "classifier.keras"
    classifier.save(path)
    restored = keras.saving.load_model(path)
    assert isinstance(restored, SequenceClassifier) and restored.pooling == pooling
    np.testing.assert_allclose(
        restored.predict(x, verbose=0), classifier.predict(x, verbose=0), atol=1e-5
    )


def test_padding_does_not_change_the_prediction():
    classifier = SequenceClassifier(Encoder.from_preset("tiny"), 2, pooling="mean")
    x = _inputs(batch=1, seq=4)
    x = {key: np.ones_like(value) * (1 if key == "padding_mask" else 7) for key, value in x.items()}
    x["segment_ids"][:] = 0
    padded = {key: np.pad(value, ((0, 0), (0, 5))) for key, value in x.items()}
    np.testing.assert_allclose(classifier(x), classifier(padded), atol=1e-5)


def _sigmoid(logits):
    return 1 / (1 + np.exp(-np.asarray(logits, "float64")))


def test_multi_label_uses_independent_sigmoids():
    keras.utils.set_random_seed(0)
    classifier = SequenceClassifier(Encoder.from_preset("tiny"), 4, multi_label=True)
    x, y = _inputs(), np.array([[1, 0, 1, 0]] * 4, "float32")
    # The loss is each label's own sigmoid cross-entropy, averaged: no softmax couples them.
    logits = keras.ops.convert_to_numpy(classifier(x, training=False))
    p = _sigmoid(logits)
    by_hand = -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))
    assert float(classifier.default_loss()(y, logits)) == pytest.approx(by_hand, rel=1e-5)
    classifier.compile(keras.optimizers.Adam(1e-2), loss=classifier.default_loss())
    classifier.fit(x, y, epochs=20, verbose=0)
    p = _sigmoid(classifier.predict(x, verbose=0))
    # Two labels on at once: each sigmoid learned its own label, so a row sums to about 2.
    assert (p[:, [0, 2]] > 0.5).all() and (p[:, [1, 3]] < 0.5).all(), p
    assert (p.sum(axis=1) > 1.5).all(), p


def test_ulmfit_head_has_two_batchnorm_dropout_dense_blocks():
    classifier = SequenceClassifier(
        Encoder.from_preset("tiny"), 2, pooling="concat", hidden_units=(50,), batch_norm=True
    )
    kinds = [type(layer).__name__ for layer in classifier.head_layers()]
    assert kinds == [
        "SequencePooling",
        "BatchNormalization",
        "Dropout",
        "Dense",
        "BatchNormalization",
        "Dropout",
        "Dense",
    ]
    assert classifier.get_layer("head_norm_0").input.shape[-1] == 3 * 16  # last + max + mean


def test_mixed_precision_encoder_gives_float32_logits():
    classifier = SequenceClassifier(Encoder.from_preset("tiny", dtype="mixed_bfloat16"), 2)
    assert classifier(_inputs()).dtype == "float32"


def test_frozen_encoder_keeps_its_weights():
    encoder = Encoder.from_preset("tiny")
    classifier = SequenceClassifier(encoder, 2)
    before = [w.numpy().copy() for w in encoder.weights]
    encoder.trainable = False
    classifier.compile("adam", loss=classifier.default_loss())
    classifier.fit(_inputs(), np.array([0, 1, 0, 1]), epochs=2, verbose=0)
    for old, new in zip(before, encoder.weights, strict=True):
        np.testing.assert_array_equal(old, new.numpy())


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"num_classes": 1}, "num_classes must be an int >= 2"),
        ({"num_classes": 3, "pooling": "avg"}, "pooling must be one of"),
        ({"num_classes": 3, "dropout": 1.0}, "dropout"),
        ({"num_classes": 3, "hidden_units": (0,)}, "hidden_units"),
    ],
)
def test_bad_arguments_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        SequenceClassifier(Encoder.from_preset("tiny"), **kwargs)


@pytest.mark.parametrize("pair", [False, True])
def test_model_contract_and_export(pair):
    vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "good", "bad", "film"]
    keras.utils.set_random_seed(0)
    encoder = Encoder.from_preset("tiny", vocabulary_size=len(vocabulary))
    classifier = SequenceClassifier(encoder, 3, pooling="mean", hidden_units=(8,))
    x = _inputs()
    x["token_ids"] = x["token_ids"] % len(vocabulary)
    call = {"text": ["a good film", "bad"]}
    if pair:
        call["text_pair"] = ["film", "a bad film"]
    run_model_test(
        classifier,
        x,
        np.array([0, 1, 2, 1]),
        zero_gradient_weights=("pooler/kernel", "pooler/bias"),
        export={
            "tokenizer": WordPieceTokenizer(vocabulary),
            "label_names": ["x", "y", "z"],
            "sequence_length": 8,
            "pair": pair,
            "signatures": {"serving_default", "classify", "embed", "token_ids"},
            "call": call,
        },
    )
