import keras
import numpy as np
import pytest

from kbert.models import Distiller, Encoder, SequenceClassifier, student_encoder


def _inputs(batch=8, seq=6, seed=0):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(2, seq + 1, size=batch)
    mask = (np.arange(seq)[None, :] < lengths[:, None]).astype("int32")
    token_ids = rng.integers(5, 50, size=(batch, seq)).astype("int32") * mask
    segment_ids = (np.arange(seq)[None, :] >= 2).astype("int32") * mask
    return {"token_ids": token_ids, "segment_ids": segment_ids, "padding_mask": mask}


def _classifier(num_classes=3, seed=0, **encoder_changes):
    keras.utils.set_random_seed(seed)
    classifier = SequenceClassifier(Encoder.from_preset("tiny", **encoder_changes), num_classes)
    # Logits of order 1, not 0.02: distributions far from uniform make the checks meaningful.
    logits = classifier.get_layer("logits")
    kernel, bias = logits.get_weights()
    logits.set_weights([kernel * 50.0, bias])
    return classifier


def _log_softmax(logits):
    logits = logits - logits.max(axis=-1, keepdims=True)
    return logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))


def _numpy_kl(teacher_logits, student_logits, temperature):
    log_p = _log_softmax(teacher_logits / temperature)
    log_q = _log_softmax(student_logits / temperature)
    return (np.exp(log_p) * (log_p - log_q)).sum(axis=-1).mean()


def _numpy_cross_entropy(labels, logits):
    return -_log_softmax(logits)[np.arange(len(labels)), labels].mean()


def _loss(distiller, x, y):
    y_pred = distiller(x, training=False)
    return float(distiller.compute_loss(x, y, y_pred, training=False))


@pytest.mark.parametrize("temperature", [1.0, 2.0, 4.0])
def test_soft_loss_is_temperature_squared_kl(temperature):
    teacher, student = _classifier(seed=0), _classifier(seed=1)
    distiller = Distiller(teacher, student, temperature=temperature, soft_weight=1.0)
    x, y = _inputs(), np.arange(8) % 3
    expected = temperature**2 * _numpy_kl(
        np.asarray(teacher(x, training=False)), np.asarray(student(x, training=False)), temperature
    )
    assert _loss(distiller, x, y) == pytest.approx(expected, rel=1e-4)
    assert float(distiller.soft_loss_tracker.result()) == pytest.approx(expected, rel=1e-5)


def test_soft_weight_zero_is_the_hard_cross_entropy():
    teacher, student = _classifier(seed=0), _classifier(seed=1)
    distiller = Distiller(teacher, student, temperature=3.0, soft_weight=0.0)
    x, y = _inputs(), np.arange(8) % 3
    expected = _numpy_cross_entropy(y, np.asarray(student(x, training=False)))
    assert _loss(distiller, x, y) == pytest.approx(expected, rel=1e-5)
    assert float(distiller.hard_loss_tracker.result()) == pytest.approx(expected, rel=1e-5)


def test_mixed_loss_weights_the_terms():
    teacher, student = _classifier(seed=0), _classifier(seed=1)
    distiller = Distiller(teacher, student, temperature=2.0, soft_weight=0.3)
    x, y = _inputs(), np.arange(8) % 3
    t, s = np.asarray(teacher(x, training=False)), np.asarray(student(x, training=False))
    expected = 0.3 * 4.0 * _numpy_kl(t, s, 2.0) + 0.7 * _numpy_cross_entropy(y, s)
    assert _loss(distiller, x, y) == pytest.approx(expected, rel=1e-5)


def test_hidden_loss_is_zero_for_a_copy_of_the_teacher():
    teacher = _classifier(seed=0)
    student = SequenceClassifier(student_encoder(teacher.encoder, 2, layers=[0, 1]), 3)
    student.get_layer("logits").set_weights(teacher.get_layer("logits").get_weights())
    distiller = Distiller(teacher, student, soft_weight=1.0, hidden_weight=1.0)
    assert distiller.hidden_projection is None
    x, y = _inputs(), np.arange(8) % 3
    assert _loss(distiller, x, y) == pytest.approx(0.0, abs=1e-5)
    assert float(distiller.hidden_loss_tracker.result()) == pytest.approx(0.0, abs=1e-5)


def test_hidden_loss_is_the_mean_cosine_distance_over_real_tokens():
    teacher, student = _classifier(seed=0), _classifier(seed=1)
    distiller = Distiller(teacher, student, soft_weight=1.0, hidden_weight=2.0)
    x, y = _inputs(), np.arange(8) % 3
    loss = _loss(distiller, x, y)
    h_t = np.asarray(teacher.encoder(x, training=False)["sequence_output"])
    h_s = np.asarray(student.encoder(x, training=False)["sequence_output"])
    cosine = (h_t * h_s).sum(-1) / np.linalg.norm(h_t, axis=-1) / np.linalg.norm(h_s, axis=-1)
    mask = x["padding_mask"].astype(bool)
    expected_hidden = (1.0 - cosine)[mask].mean()
    assert float(distiller.hidden_loss_tracker.result()) == pytest.approx(expected_hidden, rel=1e-5)
    soft = float(distiller.soft_loss_tracker.result())
    assert loss == pytest.approx(soft + 2.0 * expected_hidden, rel=1e-5)


def test_fit_trains_the_student_and_leaves_the_teacher_unchanged():
    teacher = _classifier(seed=0, num_layers=4)
    student = SequenceClassifier(student_encoder(teacher.encoder, 2), 3)
    distiller = Distiller(teacher, student, temperature=2.0, soft_weight=0.5, hidden_weight=0.5)
    assert len(distiller.trainable_weights) == len(student.trainable_weights)
    teacher_before = [w.numpy().copy() for w in teacher.weights]
    student_before = [w.numpy().copy() for w in student.weights]
    x, y = _inputs(batch=16), np.arange(16) % 3
    distiller.compile(keras.optimizers.Adam(1e-2), metrics=["accuracy"])
    history = distiller.fit(x, y, epochs=8, batch_size=16, verbose=0).history
    assert sorted(history) == [
        "accuracy",
        "distill_hard_loss",
        "distill_hidden_loss",
        "distill_soft_loss",
        "loss",
    ]
    assert history["loss"][-1] < history["loss"][0]
    for old, new in zip(teacher_before, teacher.weights, strict=True):
        np.testing.assert_array_equal(old, new.numpy())
    assert any(
        not np.array_equal(old, new.numpy())
        for old, new in zip(student_before, student.weights, strict=True)
    )


def test_narrower_student_trains_a_projection():
    teacher = _classifier(seed=0)
    student = _classifier(seed=1, hidden_dim=8, intermediate_dim=16)
    distiller = Distiller(teacher, student, hidden_weight=1.0)
    assert distiller.hidden_projection.kernel.shape == (8, 16)
    assert len(distiller.trainable_weights) == len(student.trainable_weights) + 2
    before = distiller.hidden_projection.kernel.numpy().copy()
    distiller.compile("adam")
    distiller.fit(_inputs(), np.arange(8) % 3, epochs=2, verbose=0)
    assert not np.array_equal(before, distiller.hidden_projection.kernel.numpy())


def test_evaluate_and_predict_measure_the_student():
    teacher, student = _classifier(seed=0), _classifier(seed=1)
    distiller = Distiller(teacher, student)
    distiller.compile("adam", metrics=["accuracy"])
    x, y = _inputs(batch=16), np.arange(16) % 3
    student_logits = student.predict(x, verbose=0)
    np.testing.assert_allclose(distiller.predict(x, verbose=0), student_logits, atol=1e-6)
    results = distiller.evaluate(x, y, verbose=0, return_dict=True)
    expected = np.mean(student_logits.argmax(-1) == y)
    assert results["accuracy"] == pytest.approx(expected)


def test_soft_weight_one_distils_without_labels():
    teacher, student = _classifier(seed=0), _classifier(seed=1)
    distiller = Distiller(teacher, student, soft_weight=1.0)
    distiller.compile("adam")
    history = distiller.fit(_inputs(), epochs=1, verbose=0).history
    assert history["distill_hard_loss"] == [0.0]
    partly_hard = Distiller(_classifier(seed=2), _classifier(seed=3), soft_weight=0.5)
    with pytest.raises(ValueError, match="needs labels y"):
        partly_hard.compute_loss(_inputs(), None, partly_hard(_inputs()))


def test_the_distiller_is_not_serialized():
    distiller = Distiller(_classifier(seed=0), _classifier(seed=1))
    with pytest.raises(NotImplementedError, match="distiller.student"):
        distiller.get_config()


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"temperature": 0.0}, "temperature must be a number > 0; received 0.0"),
        ({"temperature": -1.0}, "temperature must be a number > 0"),
        ({"soft_weight": 1.5}, "soft_weight must be a number in \\[0, 1\\]; received 1.5"),
        ({"soft_weight": -0.1}, "soft_weight must be a number in \\[0, 1\\]"),
        ({"hidden_weight": -1.0}, "hidden_weight must be a number >= 0; received -1.0"),
    ],
)
def test_bad_weights_raise(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Distiller(_classifier(seed=0), _classifier(seed=1), **kwargs)


def test_different_class_counts_raise():
    with pytest.raises(ValueError, match="teacher with 3 and student with 2"):
        Distiller(_classifier(3), _classifier(2))


def test_hidden_loss_needs_encoders():
    inputs = {
        name: keras.Input(shape=(None,), dtype="int32", name=name)
        for name in ("token_ids", "segment_ids", "padding_mask")
    }
    embedded = keras.layers.Embedding(50, 4)(inputs["token_ids"])
    plain = keras.Model(inputs, keras.layers.Dense(3)(keras.ops.mean(embedded, axis=1)))
    Distiller(_classifier(seed=0), plain)  # no hidden loss: no encoder needed
    with pytest.raises(ValueError, match="student must have an `.encoder`"):
        Distiller(_classifier(seed=0), plain, hidden_weight=0.5)
    with pytest.raises(ValueError, match="teacher must have an `.encoder`"):
        Distiller(plain, _classifier(seed=0), hidden_weight=0.5)


def test_an_ensemble_teacher_teaches_its_members_mean_soft_targets():
    from kbert.models import ClassifierEnsemble

    members = [_classifier(seed=seed) for seed in range(3)]
    ensemble = ClassifierEnsemble(members)
    student = SequenceClassifier(student_encoder(members[0].encoder, 1), 3)
    distiller = Distiller(ensemble, student, temperature=2.0, soft_weight=1.0)
    x, y = _inputs(), np.arange(8) % 3
    soft_targets = np.mean(
        [np.exp(_log_softmax(np.asarray(m(x, training=False)) / 2.0)) for m in members], axis=0
    )
    log_q = _log_softmax(np.asarray(student(x, training=False)) / 2.0)
    expected = 4.0 * (soft_targets * (np.log(soft_targets) - log_q)).sum(-1).mean()
    assert _loss(distiller, x, y) == pytest.approx(expected, rel=1e-4)
    # Only the student trains; the members stay as they were.
    assert len(distiller.trainable_weights) == len(student.trainable_weights)
    before = [w.numpy().copy() for member in members for w in member.weights]
    distiller.compile("adam")
    distiller.fit(x, y, epochs=1, verbose=0)
    after = [w.numpy() for member in members for w in member.weights]
    assert all(np.array_equal(a, b) for a, b in zip(before, after, strict=True))


def test_a_majority_vote_teacher_raises():
    from kbert.models import ClassifierEnsemble

    voters = ClassifierEnsemble([_classifier(seed=0), _classifier(seed=1)], method="majority_vote")
    with pytest.raises(ValueError, match="majority_vote ClassifierEnsemble, which has no soft"):
        Distiller(voters, _classifier(seed=2))
