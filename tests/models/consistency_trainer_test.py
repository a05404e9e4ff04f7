import math

import keras
import numpy as np
import pytest
import tensorflow as tf

from kbert.models import Encoder, SequenceClassifier
from kbert.models.consistency_trainer import ConsistencyTrainer, consistency_loss


def _inputs(batch=4, seq=6, seed=0):
    rng = np.random.default_rng(seed)
    mask = np.ones((batch, seq), "int32")
    mask[:, -1] = 0
    token_ids = rng.integers(5, 50, size=(batch, seq)).astype("int32") * mask
    return {"token_ids": token_ids, "segment_ids": np.zeros_like(mask), "padding_mask": mask}


def _classifier(seed=0):
    keras.utils.set_random_seed(seed)
    return SequenceClassifier(Encoder.from_preset("tiny"), 3)


def test_the_loss_is_the_kl_worked_out_by_hand():
    # Target uniform over two classes, the perturbed copy at 0.9 / 0.1:
    # KL = 0.5 ln(0.5/0.9) + 0.5 ln(0.5/0.1) = ln(5/3).
    target = np.array([[0.0, 0.0]])
    perturbed = np.log(np.array([[0.9, 0.1]]))
    loss, confident = consistency_loss(target, perturbed, confidence_threshold=0.45, temperature=1)
    assert float(loss) == pytest.approx(math.log(5 / 3), rel=1e-5)
    assert float(confident) == 1.0


def test_confidence_masking_zeroes_unsure_examples_but_keeps_them_in_the_mean():
    # Row 0 is sure (max 0.8 > 0.6), row 1 is not (0.5): the mean is row 0's KL over 2.
    target = np.log(np.array([[0.8, 0.2], [0.5, 0.5]]))
    perturbed = np.log(np.array([[0.5, 0.5], [0.9, 0.1]]))
    row0 = 0.8 * math.log(0.8 / 0.5) + 0.2 * math.log(0.2 / 0.5)
    loss, confident = consistency_loss(target, perturbed, confidence_threshold=0.6, temperature=1)
    assert float(loss) == pytest.approx(row0 / 2, rel=1e-5)
    assert float(confident) == 0.5
    unmasked, everyone = consistency_loss(target, perturbed, -1.0, temperature=1)
    assert float(everyone) == 1.0 and float(unmasked) > float(loss)


def test_sharpening_moves_the_target_towards_its_top_class():
    # softmax([ln 2, 0]) = (2/3, 1/3); at τ = 0.5 it is (4/5, 1/5), which a perturbed
    # prediction of (0.8, 0.2) matches exactly; unsharpened, it does not.
    target = np.array([[math.log(2.0), 0.0]])
    perturbed = np.log(np.array([[0.8, 0.2]]))
    sharp, _ = consistency_loss(target, perturbed, confidence_threshold=-1, temperature=0.5)
    plain, _ = consistency_loss(target, perturbed, confidence_threshold=-1, temperature=1.0)
    assert float(sharp) == pytest.approx(0.0, abs=1e-6)
    expected = (2 / 3) * math.log((2 / 3) / 0.8) + (1 / 3) * math.log((1 / 3) / 0.2)
    assert float(plain) == pytest.approx(expected, rel=1e-5)


def test_no_gradient_reaches_the_target():
    target = tf.Variable([[1.0, 0.0, -1.0]])
    perturbed = tf.Variable([[0.0, 0.5, 0.0]])
    with tf.GradientTape() as tape:
        loss, _ = consistency_loss(target, perturbed, confidence_threshold=-1)
    to_target, to_perturbed = tape.gradient(loss, [target, perturbed])
    assert to_target is None or float(tf.reduce_sum(tf.abs(to_target))) == 0.0
    assert float(tf.reduce_sum(tf.abs(to_perturbed))) > 0.0


def test_fit_logs_each_term_and_every_classifier_weight_moves():
    classifier = _classifier()
    trainer = ConsistencyTrainer(classifier, confidence_threshold=-1.0)
    trainer.compile(keras.optimizers.Adam(1e-2), metrics=["accuracy"])
    before = [variable.numpy().copy() for variable in classifier.weights]
    x = {"labelled": _inputs(), "unlabelled": _inputs(seed=1), "perturbed": _inputs(seed=2)}
    history = trainer.fit(x, np.array([0, 1, 2, 0]), epochs=2, batch_size=4, verbose=0)
    logs = history.history
    assert logs["consistency_loss"][0] > 0 and logs["confident_share"][0] == 1.0
    assert logs["loss"][0] == pytest.approx(
        logs["supervised_loss"][0] + logs["consistency_loss"][0], rel=1e-4
    )
    still = [
        variable.path
        for variable, value in zip(classifier.weights, before, strict=True)
        if np.allclose(variable.numpy(), value)
    ]
    # All move but the pooler (unread by mean pooling) and the key biases (softmax ignores a
    # constant added to every score: their gradient is zero).
    assert all(path.startswith("pooler/") or path.endswith("key/bias") for path in still), still
    # The classifier's own inputs go straight through: evaluate and predict measure it.
    np.testing.assert_allclose(
        trainer.predict(_inputs(), verbose=0), classifier.predict(_inputs(), verbose=0), atol=1e-5
    )
    assert "accuracy" in trainer.evaluate(
        _inputs(), np.array([0, 1, 2, 0]), verbose=0, return_dict=True
    )


def test_a_labelled_batch_alone_is_supervised_training():
    trainer = ConsistencyTrainer(_classifier())
    trainer.compile("adam")
    history = trainer.fit({"labelled": _inputs()}, np.array([0, 1, 2, 0]), verbose=0)
    assert history.history["consistency_loss"] == [0.0]
    assert history.history["loss"][0] == pytest.approx(history.history["supervised_loss"][0])


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"consistency_weight": -1}, "consistency_weight must be a number >= 0"),
        ({"confidence_threshold": 1.0}, r"confidence_threshold must be a number in \[-1, 1\)"),
        ({"temperature": 0}, "temperature must be a number > 0"),
        ({"temperature": True}, "temperature must be a number > 0"),
    ],
)
def test_bad_settings_are_refused_by_name(changes, message):
    with pytest.raises(ValueError, match=message):
        ConsistencyTrainer(_classifier(), **changes)


def test_a_training_dict_missing_its_perturbed_copies_is_refused():
    trainer = ConsistencyTrainer(_classifier())
    with pytest.raises(ValueError, match="optionally both 'unlabelled' and 'perturbed'"):
        trainer({"labelled": _inputs(), "unlabelled": _inputs()})
    with pytest.raises(ValueError, match="classifier must be a keras.Model"):
        ConsistencyTrainer("classifier")
