import os

import keras
import numpy as np
import pytest

from kbert.models import (
    Encoder,
    FeatureClassifier,
    extract_layer_features,
    frozen_encoder_classifier,
)
from kbert.text import BertPreprocessor, WordPieceTokenizer
from tests.model_test_case import run_model_test
from tests.toy_vocabularies import QUESTION_VOCABULARY

VOCABULARY = QUESTION_VOCABULARY + ["?"]
TEXTS = ["what is the river bank ?", "who ?", "what is it", "the bank", "who wrote it ?"]
rng = np.random.default_rng(0)
FEATURES = rng.normal(size=(6, 5, 4)).astype("float32")  # (batch, layers, hidden)


def _linear_logits(classifier, x):
    kernel, bias = classifier.get_layer("logits").get_weights()
    return x @ kernel + bias


@pytest.mark.parametrize(
    "layers, selected, num_trainable",
    [
        ("top", FEATURES[:, -1], 2),
        ("last4", FEATURES[:, -4:].mean(axis=1), 2),
        ("scalar_mix", FEATURES.mean(axis=1), 4),  # zero mix weights and gamma 1: the plain mean
    ],
)
def test_each_layer_selection(layers, selected, num_trainable):
    classifier = FeatureClassifier(5, 4, num_classes=3, layers=layers)
    logits = np.asarray(classifier(FEATURES, training=False))
    assert logits.shape == (6, 3) and logits.dtype == np.float32
    np.testing.assert_allclose(logits, _linear_logits(classifier, selected), atol=1e-5)
    assert len(classifier.trainable_weights) == num_trainable
    weights = classifier.mixing_weights()
    assert weights.shape == (5,) and weights.sum() == pytest.approx(1.0)
    assert weights[0] == (0.2 if layers == "scalar_mix" else 0.0)


def test_mlp_head_and_keras_file_round_trip(tmp_path):
    classifier = FeatureClassifier(
        5, 4, num_classes=3, layers="scalar_mix", hidden_units=(8, 6), dropout=0.2, name="probe"
    )
    assert [w.path for w in classifier.trainable_weights][-6:] == [
        "hidden_0/kernel",
        "hidden_0/bias",
        "hidden_1/kernel",
        "hidden_1/bias",
        "logits/kernel",
        "logits/bias",
    ]
    config = classifier.get_config()
    assert FeatureClassifier.from_config(config).get_config() == config
    path = os.path.join(tmp_path, "classifier.keras")
    classifier.save(path)
    restored = keras.models.load_model(path)
    assert isinstance(restored, FeatureClassifier) and restored.feature_layers == "scalar_mix"
    np.testing.assert_allclose(
        restored.predict(FEATURES, verbose=0), classifier.predict(FEATURES, verbose=0), atol=1e-6
    )


def test_fit_on_cached_features_reduces_the_loss():
    keras.utils.set_random_seed(0)
    features = np.random.default_rng(1).normal(size=(128, 5, 4)).astype("float32")
    labels = (features[:, 2, 0] > 0).astype("int32")  # only layer 2 knows the label
    classifier = FeatureClassifier(5, 4, num_classes=2, layers="scalar_mix", dropout=0.0)
    classifier.compile(
        keras.optimizers.Adam(0.05), loss=classifier.default_loss(), jit_compile=False
    )
    history = classifier.fit(features, labels, batch_size=32, epochs=15, verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < 0.6 * losses[0], losses
    assert classifier.mixing_weights().argmax() == 2  # the mix found the informative layer


# The helper takes its inputs as a dict: Keras warns that this model's one input is not a dict,
# then reads the dict's one value, the features.
@pytest.mark.filterwarnings("ignore:.*The structure of `inputs` doesn't match")
def test_model_contract():
    keras.utils.set_random_seed(0)
    # The scalar mix and a hidden layer: every kind of weight the head can have.
    classifier = FeatureClassifier(5, 4, num_classes=3, layers="scalar_mix", hidden_units=(8,))
    run_model_test(classifier, {"features": FEATURES}, np.array([0, 1, 2, 0, 1, 2]))


@pytest.fixture(scope="module")
def encoder_and_preprocessor():
    keras.utils.set_random_seed(0)
    encoder = Encoder.from_preset("tiny", num_layers=3)  # 4 hidden states: "last4" works
    return encoder, BertPreprocessor(WordPieceTokenizer(VOCABULARY), sequence_length=10)


@pytest.mark.parametrize(
    "layers, pooling", [("top", "cls"), ("last4", "mean"), ("scalar_mix", "mean")]
)
def test_cached_and_uncached_paths_agree(encoder_and_preprocessor, layers, pooling):
    encoder, preprocessor = encoder_and_preprocessor
    cached = FeatureClassifier(4, 16, num_classes=3, layers=layers, hidden_units=(8,))
    if layers == "scalar_mix":  # non-uniform mix weights, so the comparison means something
        cached.get_layer("scalar_mix").scalar_weights.assign([0.5, -1.0, 2.0, 0.0])
    uncached = frozen_encoder_classifier(
        encoder, num_classes=3, layers=layers, pooling=pooling, hidden_units=(8,)
    )
    uncached.get_layer("feature_classifier").set_weights(cached.get_weights())
    features = extract_layer_features(encoder, preprocessor, TEXTS, pooling=pooling)
    np.testing.assert_allclose(
        np.asarray(uncached(preprocessor(TEXTS), training=False)),
        np.asarray(cached(features, training=False)),
        atol=1e-5,
    )


def test_fit_on_the_uncached_model_leaves_the_encoder_unchanged(encoder_and_preprocessor):
    encoder, preprocessor = encoder_and_preprocessor
    model = frozen_encoder_classifier(encoder, num_classes=2, layers="scalar_mix", pooling="mean")
    assert not encoder.trainable and len(model.trainable_weights) == 4  # mix w, gamma, W, b
    encoder_before = [np.array(w) for w in encoder.weights]
    head_before = [np.array(w) for w in model.trainable_weights]
    model.compile(
        keras.optimizers.Adam(0.01),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        run_eagerly=True,
    )  # two steps: tracing would cost more
    model.fit(preprocessor(TEXTS), np.array([0, 1, 0, 1, 1]), epochs=2, verbose=0)
    for weight, old in zip(encoder.weights, encoder_before, strict=True):
        np.testing.assert_array_equal(np.array(weight), old, err_msg=weight.path)
    for weight, old in zip(model.trainable_weights, head_before, strict=True):
        assert not np.array_equal(np.array(weight), old), f"{weight.path} did not train"


def test_multi_label_loss():
    # One label is enough when it is a yes/no per text; the loss is its sigmoid cross-entropy.
    classifier = FeatureClassifier(5, 4, num_classes=1, multi_label=True)
    logits = np.asarray(classifier(FEATURES, training=False), "float64")
    y = np.array([[1], [0], [1], [1], [0], [0]], "float32")
    p = 1 / (1 + np.exp(-logits))
    by_hand = -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))
    assert float(classifier.default_loss()(y, logits)) == pytest.approx(by_hand, rel=1e-5)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (
            {"layers": "all_concat"},
            r"layers must be one of \('top', 'last4', 'scalar_mix'\); received 'all_concat'",
        ),
        (
            {"layers": "last4", "num_features_layers": 3},
            "layers='last4' needs num_features_layers >= 4; received 3",
        ),
        ({"num_classes": 1}, "num_classes must be an int >= 2; received 1"),
        ({"hidden_units": (8, 0)}, r"hidden_units must be positive ints; received \(8, 0\)"),
        ({"dropout": 1.0}, r"dropout must be in \[0, 1\); received 1.0"),
        ({"hidden_dim": 0}, "hidden_dim must be a positive int; received 0"),
    ],
)
def test_argument_errors(kwargs, message):
    kwargs = {"num_features_layers": 5, "hidden_dim": 4, "num_classes": 3, **kwargs}
    with pytest.raises(ValueError, match=message):
        FeatureClassifier(**kwargs)
