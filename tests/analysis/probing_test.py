import doctest

import numpy as np
import pytest

from kbert.analysis import probing
from kbert.analysis.anisotropy import ZScorer
from kbert.analysis.probing import (
    LinearProbe,
    layerwise_probe_accuracy,
    majority_accuracy,
    random_encoder_like,
    train_linear_probe,
)
from kbert.models import Encoder

rng = np.random.default_rng(0)
FAST = {"epochs": 20, "batch_size": 64}  # 160 steps on 500 examples: plenty for these sets


def separable(n, dim=8, num_classes=4, seed=0):
    """Classes around well separated centres, with a large offset and scale to standardize."""
    generator = np.random.default_rng(seed)
    labels = generator.integers(0, num_classes, size=n)
    centres = 6.0 * np.eye(num_classes, dim)  # (classes, dim)
    features = centres[labels] + generator.normal(size=(n, dim))
    features[:, -1] = 1000.0 + 50.0 * features[:, -1]  # a rogue-like dimension
    return features.astype("float32"), labels


def test_linearly_separable_data_is_learned():
    features, labels = separable(700)
    probe = train_linear_probe(features[:500], labels[:500], num_classes=4, **FAST)
    assert isinstance(probe, LinearProbe) and (probe.dim, probe.num_classes) == (8, 4)
    assert probe.accuracy(features[500:], labels[500:]) >= 0.98
    predictions = probe.predict(features[500:])
    assert predictions.dtype == np.int64 and predictions.shape == (200,)


def test_default_training_length_suits_small_sets():
    features, labels = separable(400, seed=1)
    probe = train_linear_probe(features[:300], labels[:300], num_classes=4)  # 1000 steps
    assert probe.accuracy(features[300:], labels[300:]) >= 0.98


def test_probe_standardizes_with_training_statistics():
    features, labels = separable(500)
    probe = train_linear_probe(features, labels, num_classes=4, **FAST)
    np.testing.assert_allclose(
        probe.scorer.mean, features.astype(np.float64).mean(axis=0), rtol=1e-6
    )
    shifted = features[:5] + 1.0
    expected = ((shifted - probe.scorer.mean) / probe.scorer.std) @ probe.kernel + probe.bias
    np.testing.assert_allclose(probe.logits(shifted), expected, rtol=1e-4, atol=1e-4)


def test_random_labels_are_near_chance_on_held_out_data():
    features = rng.normal(size=(1000, 16)).astype("float32")
    labels = rng.integers(0, 4, size=1000)
    probe = train_linear_probe(features[:600], labels[:600], num_classes=4, **FAST)
    # Chance is 0.25; the standard deviation over 400 examples is 0.022.
    assert probe.accuracy(features[600:], labels[600:]) == pytest.approx(0.25, abs=0.08)


def test_deterministic_for_a_seed():
    features, labels = separable(300)
    labels = (labels + rng.integers(0, 2, size=300)) % 4  # not separable: the order matters
    first = train_linear_probe(features, labels, 4, epochs=3, batch_size=32, seed=3)
    again = train_linear_probe(features, labels, 4, epochs=3, batch_size=32, seed=3)
    other = train_linear_probe(features, labels, 4, epochs=3, batch_size=32, seed=4)
    np.testing.assert_array_equal(first.kernel, again.kernel)
    np.testing.assert_array_equal(first.bias, again.bias)
    assert not np.array_equal(first.kernel, other.kernel)


def test_layerwise_finds_the_informative_layer():
    labels = rng.integers(0, 3, size=600)
    layers = rng.normal(size=(600, 4, 6)).astype("float32")  # (n, layers, dim)
    layers[:, 2, :3] += 5.0 * np.eye(3)[labels]  # only layer 2 carries the label
    accuracy = layerwise_probe_accuracy(
        layers[:400], labels[:400], layers[400:], labels[400:], num_classes=3, **FAST
    )
    assert len(accuracy) == 4 and int(np.argmax(accuracy)) == 2
    assert accuracy[2] >= 0.95
    assert max(accuracy[0], accuracy[1], accuracy[3]) < 0.55  # chance is 1/3


def test_majority_accuracy():
    assert majority_accuracy([2, 2, 1], [2, 1, 2, 2]) == 0.75
    assert majority_accuracy(np.array([1, 0]), np.array([0, 1, 1])) == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="train_labels must hold at least one label"):
        majority_accuracy([], [0])
    with pytest.raises(ValueError, match="test_labels must hold class ids >= 0"):
        majority_accuracy([0], [-1])


@pytest.fixture(scope="module")
def tiny_encoder():
    return Encoder.from_preset("tiny")


def test_random_encoder_like_has_the_config_and_new_weights(tiny_encoder):
    before = [w.copy() for w in tiny_encoder.get_weights()]
    control = random_encoder_like(tiny_encoder, seed=1)
    assert isinstance(control, Encoder) and control is not tiny_encoder
    assert control.get_config() == tiny_encoder.get_config()
    drawn = 0
    for original, fresh in zip(tiny_encoder.get_weights(), control.get_weights(), strict=True):
        assert original.shape == fresh.shape
        if np.ptp(fresh) > 0:  # randomly initialized (embeddings, kernels)
            drawn += 1
            assert not np.array_equal(original, fresh)
    assert drawn >= 10
    for old, new in zip(before, tiny_encoder.get_weights(), strict=True):
        np.testing.assert_array_equal(old, new)  # the original is not touched


def test_random_encoder_like_is_seeded(tiny_encoder):
    a = random_encoder_like(tiny_encoder, seed=5).get_weights()
    b = random_encoder_like(tiny_encoder, seed=5).get_weights()
    c = random_encoder_like(tiny_encoder, seed=6).get_weights()
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert not np.array_equal(a[0], c[0])
    with pytest.raises(ValueError, match="seed=5 drew the original encoder's own random weights"):
        random_encoder_like(random_encoder_like(tiny_encoder, seed=5), seed=5)


def test_random_encoder_like_leaves_python_random_alone(tiny_encoder):
    import random

    random.seed(11)
    expected = random.random()
    random.seed(11)
    random_encoder_like(tiny_encoder, seed=0)
    assert random.random() == expected


FEATURES, LABELS = separable(40)


@pytest.mark.parametrize(
    "call, match",
    [
        (
            lambda: train_linear_probe(FEATURES, LABELS, num_classes=3),
            r"labels must hold class ids in \[0, 2\] \(num_classes=3\); received 3",
        ),
        (
            lambda: train_linear_probe(FEATURES, -LABELS - 1, num_classes=4),
            "labels must hold class ids >= 0",
        ),
        (
            lambda: train_linear_probe(FEATURES, LABELS[:-1], num_classes=4),
            r"labels must be a 1-D array with one label per example \(40\)",
        ),
        (
            lambda: train_linear_probe(FEATURES, LABELS.astype(float), num_classes=4),
            "labels must hold integer class ids",
        ),
        (
            lambda: train_linear_probe(FEATURES, LABELS, num_classes=1),
            "num_classes must be an int >= 2",
        ),
        (
            lambda: train_linear_probe(FEATURES[0], LABELS, num_classes=4),
            "features must be a 2-D array",
        ),
        (
            lambda: train_linear_probe(FEATURES[:1], LABELS[:1], num_classes=4),
            "features must hold at least 2 examples",
        ),
        (
            lambda: train_linear_probe(FEATURES * np.nan, LABELS, num_classes=4),
            "features must be finite",
        ),
        (lambda: train_linear_probe(FEATURES, LABELS, 4, epochs=0), "epochs must be an int >= 1"),
        (
            lambda: train_linear_probe(FEATURES, LABELS, 4, batch_size=0),
            "batch_size must be an int >= 1",
        ),
        (
            lambda: train_linear_probe(FEATURES, LABELS, 4, learning_rate=0.0),
            "learning_rate must be a positive number",
        ),
        (lambda: train_linear_probe(FEATURES, LABELS, 4, l2=-1.0), "l2 must be a number >= 0"),
        (
            lambda: layerwise_probe_accuracy(FEATURES, LABELS, FEATURES, LABELS, 4),
            "train_features must be a 3-D array",
        ),
        (
            lambda: layerwise_probe_accuracy(
                np.zeros((4, 2, 3)), [0, 1, 0, 1], np.zeros((2, 3, 3)), [0, 1], 2
            ),
            r"test_features must have the layers and dim of train_features \(2, 3\)",
        ),
        (
            lambda: layerwise_probe_accuracy(
                np.zeros((4, 2, 3)), [0, 1, 0, 1], np.zeros((2, 2, 3)), [0, 1, 1], 2
            ),
            r"test_labels must be a 1-D array with one label per example \(2\)",
        ),
        (
            lambda: layerwise_probe_accuracy(
                np.zeros((4, 2, 3)), [0, 1, 0, 1], np.zeros((2, 2, 3)), [0, 2], 2
            ),
            r"test_labels must hold class ids in \[0, 1\]",
        ),
        (lambda: LinearProbe(np.zeros((3, 2)), np.zeros(3), ZScorer()), "kernel must be"),
        (lambda: LinearProbe(np.zeros((3, 2)), np.zeros(2), ZScorer()), "scorer must be a ZScorer"),
        (lambda: random_encoder_like("bert"), "encoder must be a kbert.models.Encoder"),
    ],
)
def test_bad_input_raises_value_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_probe_rejects_features_of_another_width():
    probe = LinearProbe(np.zeros((3, 2)), np.zeros(2), ZScorer().fit(np.eye(3)))
    with pytest.raises(ValueError, match=r"features must have 3 dimensions"):
        probe.predict(np.zeros((2, 4)))
    with pytest.raises(ValueError, match=r"labels must hold class ids in \[0, 1\]"):
        probe.accuracy(np.zeros((2, 3)), [0, 2])


def test_docstring_examples_run():
    results = doctest.testmod(probing)
    assert results.attempted > 0 and results.failed == 0
