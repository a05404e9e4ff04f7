import keras
import numpy as np
import pytest

from kbert.models import ENSEMBLE_METHODS, ClassifierEnsemble, Encoder, SequenceClassifier
from tests.model_test_case import run_model_test


def _inputs(batch=8, seq=6, seed=0):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(2, seq + 1, size=batch)
    mask = (np.arange(seq)[None, :] < lengths[:, None]).astype("int32")
    token_ids = rng.integers(5, 50, size=(batch, seq)).astype("int32") * mask
    segment_ids = (np.arange(seq)[None, :] >= 2).astype("int32") * mask
    return {"token_ids": token_ids, "segment_ids": segment_ids, "padding_mask": mask}


def _classifier(num_classes=3, seed=0):
    keras.utils.set_random_seed(seed)
    classifier = SequenceClassifier(Encoder.from_preset("tiny"), num_classes)
    # Logits of order 1, so that members disagree and probabilities are far from uniform.
    logits = classifier.get_layer("logits")
    kernel, bias = logits.get_weights()
    logits.set_weights([kernel * 50.0, bias])
    return classifier


def _softmax(logits):
    exp = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return exp / exp.sum(axis=-1, keepdims=True)


def _member_logits(members, x):
    return [np.asarray(member(x, training=False)) for member in members]


@pytest.mark.parametrize("weights", [None, [1.0, 2.0, 0.5]])
def test_mean_probabilities_match_numpy(weights):
    members = [_classifier(seed=seed) for seed in range(3)]
    ensemble = ClassifierEnsemble(members, weights=weights)
    x = _inputs()
    w = np.ones(3) if weights is None else np.array(weights)
    w = w / w.sum()
    expected = sum(
        wk * _softmax(logits) for wk, logits in zip(w, _member_logits(members, x), strict=True)
    )
    np.testing.assert_allclose(ensemble(x), expected, atol=1e-6)
    np.testing.assert_allclose(np.asarray(ensemble(x)).sum(-1), 1.0, atol=1e-6)


def test_mean_logits_match_numpy():
    members = [_classifier(seed=seed) for seed in range(3)]
    ensemble = ClassifierEnsemble(members, method="mean_logits", weights=[3, 1, 0])
    x = _inputs()
    logits = _member_logits(members, x)
    np.testing.assert_allclose(ensemble(x), 0.75 * logits[0] + 0.25 * logits[1], atol=1e-5)


def test_one_member_gives_its_softmax():
    member = _classifier()
    x = _inputs()
    np.testing.assert_allclose(
        ClassifierEnsemble([member])(x), _softmax(_member_logits([member], x)[0]), atol=1e-6
    )


def _numpy_vote(logits, weights):
    weights = np.asarray(weights, "float64") / np.sum(weights)
    probabilities = sum(w * _softmax(value) for w, value in zip(weights, logits, strict=True))
    votes = sum(
        w * np.eye(value.shape[-1])[value.argmax(-1)]
        for w, value in zip(weights, logits, strict=True)
    )
    is_top = votes >= votes.max(-1, keepdims=True) - 1e-6
    return np.eye(votes.shape[-1])[np.where(is_top, probabilities, -1.0).argmax(-1)]


def test_majority_vote_matches_numpy():
    members = [_classifier(seed=seed) for seed in range(3)]
    ensemble = ClassifierEnsemble(members, method="majority_vote")
    x = _inputs(batch=16)
    np.testing.assert_array_equal(ensemble(x), _numpy_vote(_member_logits(members, x), [1] * 3))


def _fixed_member(logits):
    """A member whose logits are row `token_ids[:, 0]` of a fixed table."""
    logits = np.asarray(logits, "float32")
    inputs = {
        name: keras.Input(shape=(None,), dtype="int32", name=name)
        for name in ("token_ids", "segment_ids", "padding_mask")
    }
    table = keras.layers.Embedding(*logits.shape)
    outputs = table(inputs["token_ids"])[:, 0, :]
    table.set_weights([logits])
    return keras.Model(inputs, outputs)


def test_majority_vote_breaks_ties_by_mean_probability():
    members = [
        _fixed_member([[2.0, 1.9, 0.0], [0.0, 0.0, 1.0]]),
        _fixed_member([[0.0, 5.0, 0.0], [0.0, 0.0, 1.0]]),
        _fixed_member([[0.0, 0.0, 1.0], [0.0, 0.0, 1.0]]),
        _fixed_member([[0.0, 0.0, 9.0], [9.0, 0.0, 0.0]]),
    ]
    x = {
        "token_ids": np.array([[0, 1], [1, 1]], "int32"),
        "segment_ids": np.zeros((2, 2), "int32"),
        "padding_mask": np.ones((2, 2), "int32"),
    }
    # Row 0: one vote each for classes 0, 1 and 2 plus a weightless vote for 2: a three-way
    # tie that member 1's confidence in class 1 decides. Row 1: three votes for class 2.
    weights = [1.0, 1.0, 1.0, 0.0]
    ensemble = ClassifierEnsemble(members, method="majority_vote", weights=weights)
    expected = _numpy_vote(_member_logits(members, x), weights)
    np.testing.assert_array_equal(expected, [[0, 1, 0], [0, 0, 1]])
    np.testing.assert_array_equal(ensemble(x), expected)
    # Row 0 with member 3 voting too: class 2 wins outright despite member 1's confidence.
    equal = ClassifierEnsemble(members, method="majority_vote")
    np.testing.assert_array_equal(np.asarray(equal(x))[0], [0, 0, 1])


@pytest.mark.parametrize("method", ENSEMBLE_METHODS)
def test_accuracy_works_with_every_method(method):
    members = [_classifier(seed=seed) for seed in range(3)]
    ensemble = ClassifierEnsemble(members, method=method)
    ensemble.compile(metrics=["accuracy"])
    x, y = _inputs(batch=16), np.arange(16) % 3
    predictions = np.asarray(ensemble.predict(x, verbose=0)).argmax(-1)
    results = ensemble.evaluate(x, y, verbose=0, return_dict=True)
    assert results["accuracy"] == pytest.approx(np.mean(predictions == y))


def test_members_are_not_trained():
    ensemble = ClassifierEnsemble([_classifier(seed=0), _classifier(seed=1)])
    assert not ensemble.trainable and ensemble.trainable_weights == []
    assert len(ensemble.weights) == 2 * len(ensemble.models[0].weights)


@pytest.mark.parametrize("method", ENSEMBLE_METHODS)
def test_save_and_load_round_trip(method, tmp_path):
    members = [_classifier(seed=seed) for seed in range(3)]
    ensemble = ClassifierEnsemble(members, method=method, weights=[1.0, 2.0, 1.0])
    x = _inputs()
    path = tmp_path / "ensemble.keras"
    ensemble.save(path)
    restored = keras.saving.load_model(path)
    assert isinstance(restored, ClassifierEnsemble)
    assert restored.method == method and restored.weights_argument == [1.0, 2.0, 1.0]
    assert not restored.trainable
    np.testing.assert_allclose(restored(x), ensemble(x), atol=1e-6)


def test_model_contract():
    # Built with trainable=True, the ensemble trains its members through the combined output
    # (the frozen default has no trainable weights). "majority_vote" cannot train: its one-hot
    # arg-max output has no gradient.
    members = [_classifier(seed=seed) for seed in range(2)]
    ensemble = ClassifierEnsemble(members, weights=[1.0, 2.0], trainable=True)
    run_model_test(
        ensemble,
        _inputs(),
        np.arange(8) % 3,
        loss=keras.losses.SparseCategoricalCrossentropy(),  # the ensemble outputs probabilities
        # The members classify the [CLS] token's hidden state, not the encoders' pooler output.
        zero_gradient_weights=("pooler/kernel", "pooler/bias"),
    )


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"models": []}, "at least one classifier; received an empty list"),
        ({"method": "median"}, "method must be one of"),
        ({"weights": [1.0]}, "one entry per model \\(2\\); received 1"),
        ({"weights": [1.0, -1.0]}, "non-negative and not all zero"),
        ({"weights": [0.0, 0.0]}, "non-negative and not all zero"),
    ],
)
def test_bad_arguments_raise(kwargs, message):
    arguments = {"models": [_classifier(seed=0), _classifier(seed=1)], **kwargs}
    with pytest.raises(ValueError, match=message):
        ClassifierEnsemble(**arguments)


def test_different_class_counts_raise():
    with pytest.raises(ValueError, match="class counts \\[3, 2\\]"):
        ClassifierEnsemble([_classifier(3), _classifier(2)])


def test_multi_label_members_raise():
    member = SequenceClassifier(Encoder.from_preset("tiny"), 3, multi_label=True)
    with pytest.raises(ValueError, match="multi-label"):
        ClassifierEnsemble([member])


def _constant_member(logits):
    """A classifier whose logits are `logits` whatever the input (for hand computations)."""
    inputs = {
        name: keras.Input(shape=(None,), dtype="int32", name=name)
        for name in ("token_ids", "segment_ids", "padding_mask")
    }
    first = keras.ops.cast(inputs["token_ids"][:, 0], "float32")  # (batch,)
    zero = keras.ops.expand_dims(keras.ops.zeros_like(first), -1)  # (batch, 1)
    dense = keras.layers.Dense(
        len(logits),
        kernel_initializer="zeros",
        bias_initializer=keras.initializers.Constant(logits),
    )
    return keras.Model(inputs, dense(zero))


def test_tempered_logits_soften_to_the_mean_of_the_members_soft_targets():
    # By hand: member 1 has logits (2 ln 3, 0), member 2 (0, 0). At T = 2 their softened
    # distributions are (3/4, 1/4) and (1/2, 1/2), whose mean is (5/8, 3/8). At T = 1 they
    # are (9/10, 1/10) and (1/2, 1/2): the ensemble predicts p̄ = (7/10, 3/10).
    members = [_constant_member([2 * np.log(3.0), 0.0]), _constant_member([0.0, 0.0])]
    ensemble = ClassifierEnsemble(members)
    x = _inputs(batch=2)
    soft = _softmax(np.asarray(ensemble.tempered_logits(x, 2.0)) / 2.0)
    np.testing.assert_allclose(soft, [[5 / 8, 3 / 8]] * 2, atol=1e-6)
    # Softening log p̄ instead would give (√7, √3) / (√7 + √3) ≈ (0.604, 0.396): not the same.
    naive = np.array([np.sqrt(7.0), np.sqrt(3.0)]) / (np.sqrt(7.0) + np.sqrt(3.0))
    assert abs(naive[0] - 5 / 8) > 0.02
    # At T = 1 the logits are log p̄: the ensemble's own prediction.
    np.testing.assert_allclose(
        np.asarray(ensemble.tempered_logits(x, 1.0)), np.log([[0.7, 0.3]] * 2), atol=1e-6
    )
    np.testing.assert_allclose(ensemble(x), [[0.7, 0.3]] * 2, atol=1e-6)


def test_tempered_logits_of_mean_logits_and_with_weights():
    members = [_classifier(seed=seed) for seed in range(3)]
    x = _inputs()
    logits = _member_logits(members, x)
    mean_logits = ClassifierEnsemble(members, method="mean_logits", weights=[3, 1, 0])
    np.testing.assert_allclose(
        mean_logits.tempered_logits(x, 4.0), 0.75 * logits[0] + 0.25 * logits[1], atol=1e-5
    )
    weighted = ClassifierEnsemble(members, weights=[3, 1, 0])  # a zero weight drops a member
    expected = 0.75 * _softmax(logits[0] / 3.0) + 0.25 * _softmax(logits[1] / 3.0)
    np.testing.assert_allclose(
        _softmax(np.asarray(weighted.tempered_logits(x, 3.0)) / 3.0), expected, atol=1e-5
    )


@pytest.mark.parametrize(
    "method, temperature, message",
    [
        ("majority_vote", 2.0, "majority_vote ensemble has no soft targets"),
        ("mean_probabilities", 0.0, "temperature must be a number > 0; received 0.0"),
        ("mean_probabilities", True, "temperature must be a number > 0; received True"),
    ],
)
def test_tempered_logits_refuse_votes_and_bad_temperatures(method, temperature, message):
    ensemble = ClassifierEnsemble([_classifier(seed=0)], method=method)
    with pytest.raises(ValueError, match=message):
        ensemble.tempered_logits(_inputs(), temperature)
