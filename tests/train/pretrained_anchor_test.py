import keras
import numpy as np
import pytest
import tensorflow as tf

from kbert.models import CausalLanguageModel, Encoder, SequenceClassifier
from kbert.train.freezing import freeze
from kbert.train.pretrained_anchor import (
    PretrainedAnchor,
    anchor_penalty,
    anchor_to_pretrained,
    estimate_diagonal_fisher,
    release_anchor,
)


def _classifier(seed=0):
    # No dropout: the same batch gives the same loss and gradients in every run.
    keras.utils.set_random_seed(seed)
    encoder = Encoder.from_preset("tiny", dropout=0.0, attention_dropout=0.0)
    return SequenceClassifier(encoder, num_classes=3, dropout=0.0)


def _data(batch=8, length=6, seed=0):
    rng = np.random.default_rng(seed)
    inputs = {
        "token_ids": rng.integers(1, 50, (batch, length)).astype("int32"),
        "segment_ids": np.zeros((batch, length), "int32"),
        "padding_mask": np.ones((batch, length), "int32"),
    }
    return inputs, rng.integers(0, 3, (batch,)).astype("int32")


def _clm(seed=0):
    keras.utils.set_random_seed(seed)
    return CausalLanguageModel(
        Encoder.from_preset("tiny", causal=True, dropout=0.0, attention_dropout=0.0)
    )


def _clm_batch(batch=3, length=5, seed=0):
    rng = np.random.default_rng(seed)
    padding_mask = np.ones((batch, length), "int32")
    padding_mask[0, -2:] = 0
    return {
        "token_ids": rng.integers(1, 50, (batch, length)).astype("int32"),
        "padding_mask": padding_mask,
    }


def _random_fisher(variables, seed=0):
    rng = np.random.default_rng(seed)
    return {v.path: rng.uniform(0.0, 2.0, tuple(v.shape)).astype("float32") for v in variables}


def _shift(variables, scale=0.01, seed=1):
    """Moves every variable by a random delta; returns {path: delta}."""
    rng = np.random.default_rng(seed)
    deltas = {}
    for v in variables:
        deltas[v.path] = (scale * rng.standard_normal(tuple(v.shape))).astype("float32")
        v.assign(np.asarray(v) + deltas[v.path])
    return deltas


def _expected_penalty(variables, deltas, strength, fisher=None):
    total = 0.0
    for v in variables:
        importance = 1.0 if fisher is None else fisher[v.path].astype("float64")
        total += np.sum(importance * deltas[v.path].astype("float64") ** 2)
    return strength / 2 * total


@pytest.mark.parametrize("ewc", [False, True])
def test_penalty_is_zero_at_the_pretrained_weights(ewc):
    classifier = _classifier()
    encoder = classifier.encoder
    fisher = _random_fisher(encoder.trainable_weights) if ewc else None
    anchored = anchor_to_pretrained(encoder, strength=3.0, fisher=fisher)
    assert len(anchored) == len(encoder.trainable_weights)
    assert all(isinstance(v.regularizer, PretrainedAnchor) for v in anchored)
    assert {v.regularizer.kind for v in anchored} == {"ewc" if ewc else "l2_sp"}
    assert anchor_penalty(classifier) == 0.0
    # What `fit` adds: the classifier's losses hold one zero term per anchored weight.
    assert len(classifier.losses) == len(anchored)
    assert float(sum(np.asarray(loss) for loss in classifier.losses)) == 0.0


@pytest.mark.parametrize("ewc", [False, True])
def test_penalty_after_a_shift_matches_numpy(ewc):
    classifier = _classifier()
    variables = classifier.encoder.trainable_weights
    fisher = _random_fisher(variables) if ewc else None
    anchor_to_pretrained(classifier.encoder, strength=0.7, fisher=fisher)
    deltas = _shift(variables)
    expected = _expected_penalty(variables, deltas, 0.7, fisher)
    assert expected > 0
    np.testing.assert_allclose(anchor_penalty(classifier), expected, rtol=1e-5)
    np.testing.assert_allclose(
        float(sum(np.asarray(loss) for loss in classifier.losses)), expected, rtol=1e-5
    )


def test_the_regularizer_alone_computes_strength_over_two_times_weighted_squares():
    anchor = PretrainedAnchor(np.array([1.0, 2.0]), strength=4.0, importance=[0.5, 3.0])
    # 4/2 · (0.5·(3-1)² + 3·(2-2)²) = 4
    assert float(anchor(np.array([3.0, 2.0]))) == pytest.approx(4.0)
    assert anchor.get_config() == {"strength": 4.0, "shape": [2], "kind": "ewc"}
    with pytest.raises(ValueError, match="cannot be rebuilt from its config"):
        PretrainedAnchor.from_config(anchor.get_config())
    with pytest.raises(
        ValueError,
        match=r"importance must have the anchor's shape \(2,\); "
        r"received shape \(3,\)",
    ):
        PretrainedAnchor(np.zeros(2), importance=np.ones(3))
    with pytest.raises(ValueError, match="non-negative"):
        PretrainedAnchor(np.zeros(2), importance=[1.0, -1.0])


def _one_sgd_step(classifier, x, y, learning_rate):
    classifier.compile(
        optimizer=keras.optimizers.SGD(learning_rate), loss=classifier.default_loss()
    )
    history = classifier.fit(x, y, batch_size=len(y), epochs=1, shuffle=False, verbose=0)
    return history.history["loss"][0]


@pytest.mark.parametrize("ewc", [False, True])
def test_one_fit_step_minimises_data_loss_plus_penalty(ewc):
    x, y = _data()
    strength, learning_rate = 0.5, 0.1
    plain, anchored = _classifier(), _classifier()
    variables = anchored.encoder.trainable_weights
    fisher = _random_fisher(variables) if ewc else None
    anchor_to_pretrained(anchored.encoder, strength=strength, fisher=fisher)
    anchors = {v.path: np.asarray(v) for v in variables}
    # Move both models to the same point away from the anchor, so the penalty is not zero.
    deltas = _shift(variables)
    _shift(plain.encoder.trainable_weights)
    penalty = anchor_penalty(anchored)
    np.testing.assert_allclose(
        penalty, _expected_penalty(variables, deltas, strength, fisher), rtol=1e-5
    )

    before = {v.path: np.asarray(v) for v in variables}
    plain_loss = _one_sgd_step(plain, x, y, learning_rate)
    anchored_loss = _one_sgd_step(anchored, x, y, learning_rate)
    # The loss `fit` reports (inside its tf.function) is the data loss plus the penalty.
    np.testing.assert_allclose(anchored_loss, plain_loss + penalty, rtol=1e-5)
    # The gradient gains strength · F · (w - w0): the anchored step differs by -lr times that.
    plain_after = {v.path: np.asarray(v) for v in plain.encoder.trainable_weights}
    for v in variables:
        importance = 1.0 if fisher is None else fisher[v.path]
        expected = -learning_rate * strength * importance * (before[v.path] - anchors[v.path])
        np.testing.assert_allclose(
            np.asarray(v) - plain_after[v.path], expected, rtol=1e-3, atol=1e-6, err_msg=v.path
        )
    # The head was not anchored and has no penalty term.
    assert all(w.regularizer is None for w in anchored.head_layers()[-1].weights)


def test_a_strong_anchor_keeps_the_weights_near_the_pretrained_point():
    x, y = _data(batch=16)
    distances = {}
    for strength in (1e-6, 10.0):
        classifier = _classifier()
        anchor_to_pretrained(classifier.encoder, strength=strength)
        start = [np.asarray(v) for v in classifier.encoder.trainable_weights]
        classifier.compile(optimizer=keras.optimizers.SGD(0.05), loss=classifier.default_loss())
        classifier.fit(x, y, batch_size=4, epochs=5, verbose=0)
        distances[strength] = np.sqrt(
            sum(
                np.sum((np.asarray(v) - w0) ** 2)
                for v, w0 in zip(classifier.encoder.trainable_weights, start, strict=True)
            )
        )
    assert distances[1e-6] > 0
    assert distances[10.0] < 0.3 * distances[1e-6]


def test_frozen_variables_are_not_penalised():
    classifier = _classifier()
    variables = anchor_to_pretrained(classifier.encoder, strength=2.0)
    deltas = _shift(variables)
    freeze(classifier, ["embeddings"])
    trained = [v for v in variables if not v.path.startswith("embeddings/")]
    assert len(trained) < len(variables)
    expected = _expected_penalty(trained, deltas, 2.0)
    np.testing.assert_allclose(anchor_penalty(classifier), expected, rtol=1e-5)
    np.testing.assert_allclose(
        float(sum(np.asarray(loss) for loss in classifier.losses)), expected, rtol=1e-5
    )
    # The anchor stays attached: unfreezing brings the term back.
    assert all(isinstance(v.regularizer, PretrainedAnchor) for v in variables)


def test_release_removes_only_anchors_and_re_anchoring_takes_a_new_snapshot():
    classifier = _classifier()
    variables = anchor_to_pretrained(classifier.encoder, strength=1.0)
    _shift(variables)
    assert anchor_penalty(classifier) > 0
    anchor_to_pretrained(classifier.encoder, strength=1.0)  # the shifted point is the anchor
    assert anchor_penalty(classifier) == 0.0
    l2 = keras.regularizers.L2(0.01)
    head_kernel = classifier.head_layers()[-1].kernel
    head_kernel.regularizer = l2
    released = release_anchor(classifier)
    assert len(released) == len(variables)
    assert all(v.regularizer is None for v in variables)
    assert head_kernel.regularizer is l2
    assert anchor_penalty(classifier) == 0.0


def test_anchoring_after_a_fit_takes_effect_at_the_next_fit():
    x, y = _data()
    classifier = _classifier()
    classifier.compile(optimizer=keras.optimizers.SGD(0.0), loss=classifier.default_loss())
    classifier.fit(x, y, batch_size=8, verbose=0)
    plain = classifier.evaluate(x, y, batch_size=8, verbose=0)
    anchor_to_pretrained(classifier, strength=1.0)
    assert classifier.train_function is None
    _shift(classifier.trainable_weights)
    penalty = anchor_penalty(classifier)
    shifted_data_loss = float(classifier.default_loss()(y, classifier(x)))
    loss = classifier.fit(x, y, batch_size=8, verbose=0).history["loss"][0]
    np.testing.assert_allclose(loss, shifted_data_loss + penalty, rtol=1e-5)
    assert loss != pytest.approx(plain)


def test_bad_arguments_raise_and_anchor_nothing():
    encoder = _classifier().encoder
    variables = encoder.trainable_weights
    for bad in (0, -1.0, float("nan"), True, "1"):
        with pytest.raises(
            ValueError,
            match=r"strength must be a positive finite float; "
            r"received",
        ):
            anchor_to_pretrained(encoder, strength=bad)
    fisher = _random_fisher(variables)
    missing = variables[3].path
    del fisher[missing]
    with pytest.raises(ValueError, match=f"fisher has no entry for variable '{missing}'"):
        anchor_to_pretrained(encoder, 1.0, fisher=fisher)
    fisher = _random_fisher(variables)
    fisher["pooler/kernel"] = np.ones((3, 3), "float32")
    with pytest.raises(
        ValueError,
        match=r"fisher\['pooler/kernel'\] must have the variable's "
        r"shape \(16, 16\); received shape \(3, 3\)",
    ):
        anchor_to_pretrained(encoder, 1.0, fisher=fisher)
    with pytest.raises(ValueError, match="fisher must be a dict"):
        anchor_to_pretrained(encoder, 1.0, fisher=[1.0])
    variables[-1].regularizer = keras.regularizers.L2(0.1)
    with pytest.raises(
        ValueError,
        match=r"variable 'pooler/bias' already has a regularizer "
        r"\(L2\); expected none or a PretrainedAnchor",
    ):
        anchor_to_pretrained(encoder, 1.0)
    # Every failure above happened before any variable was touched.
    assert all(v.regularizer is None for v in variables[:-1])


def test_fisher_shapes_signs_and_a_variable_the_loss_ignores():
    model = _clm()
    fisher = estimate_diagonal_fisher(model, [_clm_batch(seed=0), (_clm_batch(seed=1), None)])
    variables = model.encoder.trainable_weights
    assert list(fisher) == [v.path for v in variables]
    for v in variables:
        assert fisher[v.path].shape == tuple(v.shape)
        assert fisher[v.path].dtype == np.float32
        assert np.all(fisher[v.path] >= 0)
    # A CLM's loss does not read the pooled output.
    assert not fisher["pooler/kernel"].any() and not fisher["pooler/bias"].any()
    assert fisher["embeddings/token_embedding/embeddings"].max() > 0
    # Estimating leaves the objective's metrics as they were.
    assert float(model.loss_metric.count) == 0.0


def _manual_fisher(model, x):
    x = {key: tf.constant(value) for key, value in x.items()}
    variables = model.encoder.trainable_weights
    with tf.GradientTape() as tape:
        loss = model.objective_loss(x, model(x, training=False))
    gradients = tape.gradient(loss, variables)
    return {
        v.path: np.zeros(tuple(v.shape))
        if g is None
        else np.square(np.asarray(tf.convert_to_tensor(g), "float64"))
        for v, g in zip(variables, gradients, strict=True)
    }


def test_fisher_matches_a_manual_tape_and_is_per_example():
    model = _clm()
    batch = _clm_batch(batch=2)
    examples = [{key: value[index : index + 1] for key, value in batch.items()} for index in (0, 1)]
    manual = [_manual_fisher(model, example) for example in examples]
    one = estimate_diagonal_fisher(model, [examples[0]])
    one_batched = estimate_diagonal_fisher(model, [examples[0]], per_example=False)
    both = estimate_diagonal_fisher(model, [batch])
    mean_gradient = estimate_diagonal_fisher(model, [batch], per_example=False)
    for path in one:
        np.testing.assert_allclose(one[path], manual[0][path], rtol=1e-4, atol=1e-9, err_msg=path)
        np.testing.assert_allclose(one_batched[path], manual[0][path], rtol=1e-4, atol=1e-9)
        # Per example: the mean of the examples' squared gradients, not the squared mean.
        np.testing.assert_allclose(
            both[path], (manual[0][path] + manual[1][path]) / 2, rtol=1e-4, atol=1e-9, err_msg=path
        )
    token = "embeddings/token_embedding/embeddings"
    assert mean_gradient[token].sum() < both[token].sum()


def test_fisher_options_normalize_and_max_batches():
    model = _clm()
    batches = [_clm_batch(seed=seed) for seed in range(3)]
    first = estimate_diagonal_fisher(model, batches[:1])
    limited = estimate_diagonal_fisher(model, batches, max_batches=1)
    for path in first:
        np.testing.assert_array_equal(limited[path], first[path])
    normalized = estimate_diagonal_fisher(model, batches[:1], normalize=True)
    everything = np.concatenate([value.ravel() for value in normalized.values()])
    assert everything.mean() == pytest.approx(1.0, rel=1e-4)
    ratio = normalized["embeddings/norm/gamma"] / np.maximum(first["embeddings/norm/gamma"], 1e-30)
    np.testing.assert_allclose(ratio[first["embeddings/norm/gamma"] > 0], ratio.max(), rtol=1e-4)


def test_ewc_anchoring_with_an_estimated_fisher():
    model = _clm()
    fisher = estimate_diagonal_fisher(model, [_clm_batch()], normalize=True)
    variables = anchor_to_pretrained(model.encoder, strength=0.5, fisher=fisher)
    assert anchor_penalty(model) == 0.0
    deltas = _shift(variables)
    np.testing.assert_allclose(
        anchor_penalty(model), _expected_penalty(variables, deltas, 0.5, fisher), rtol=1e-5
    )
    # The pooler's zero Fisher leaves it free.
    pooler = [v for v in variables if v.path.startswith("pooler/")]
    assert all(float(v.regularizer(v)) == 0.0 for v in pooler)


def test_fisher_bad_inputs_raise():
    with pytest.raises(
        ValueError,
        match=r"objective must hold the encoder being anchored as "
        r"`\.encoder`.*received Sequential without one",
    ):
        estimate_diagonal_fisher(keras.Sequential([keras.layers.Dense(2)]), [])
    model = _clm()
    for bad in (0, -1, 1.5, True):
        with pytest.raises(
            ValueError,
            match=r"max_batches must be a positive int or None; "
            r"received",
        ):
            estimate_diagonal_fisher(model, [_clm_batch()], max_batches=bad)
    with pytest.raises(ValueError, match="batches yielded no examples"):
        estimate_diagonal_fisher(model, [])
    with pytest.raises(ValueError, match="batch 0 is a ndarray"):
        estimate_diagonal_fisher(model, [np.zeros((2, 3))])
    classifier = _classifier()
    with pytest.raises(
        ValueError, match="PretrainingObjective or PretrainingModel; received SequenceClassifier"
    ):
        estimate_diagonal_fisher(classifier, [_data()[0]])


def test_an_anchored_fine_tuned_classifier_saves_and_reloads(tmp_path):
    x, y = _data()
    classifier = _classifier()
    anchor_to_pretrained(classifier.encoder, strength=1.0)
    classifier.compile(optimizer=keras.optimizers.Adam(1e-2), loss=classifier.default_loss())
    classifier.fit(x, y, batch_size=4, epochs=1, verbose=0)
    assert anchor_penalty(classifier) > 0
    path = tmp_path / "anchored.keras"
    classifier.save(path)
    loaded = keras.saving.load_model(path)
    np.testing.assert_allclose(
        np.asarray(loaded(x)), np.asarray(classifier(x)), rtol=1e-5, atol=1e-6
    )
    # Anchors are not saved; the reloaded model can be anchored again.
    assert all(v.regularizer is None for v in loaded.weights)
    assert len(anchor_to_pretrained(loaded.encoder, strength=1.0)) > 0
    loaded.save(tmp_path / "again.keras")
