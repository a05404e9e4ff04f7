import keras
import numpy as np
import pytest
import tensorflow as tf

from kbert.models import Encoder, SliceAwareClassifier, SliceAwareLoss
from tests.model_test_case import run_model_test


def _inputs(batch=4, seq=6, seed=0):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(2, seq + 1, size=batch)
    mask = (np.arange(seq)[None, :] < lengths[:, None]).astype("int32")
    token_ids = rng.integers(5, 50, size=(batch, seq)).astype("int32") * mask
    return {"token_ids": token_ids, "segment_ids": np.zeros_like(mask), "padding_mask": mask}


def _targets():
    return SliceAwareClassifier.targets([0, 1, 2, 1], [[1, 0], [0, 0], [1, 1], [0, 1]])


def test_it_trains_with_fit_and_round_trips():
    keras.utils.set_random_seed(0)
    model = SliceAwareClassifier(Encoder.from_preset("tiny"), 3, 2, pooling="mean")
    run_model_test(
        model, _inputs(), _targets(), zero_gradient_weights=("pooler/kernel", "pooler/bias")
    )


def test_the_packed_output_combines_experts_by_predicted_membership():
    keras.utils.set_random_seed(1)
    model = SliceAwareClassifier(Encoder.from_preset("tiny"), 3, 2, pooling="mean")
    x = _inputs()
    packed = keras.ops.convert_to_numpy(model(x))
    assert packed.shape == (4, 3 + 2 + 2 * 3)
    combined = keras.ops.convert_to_numpy(model.output_view("logits")(x))
    indicators = keras.ops.convert_to_numpy(model.output_view("slice_indicators")(x))
    experts = keras.ops.convert_to_numpy(model.output_view("slice_experts")(x))
    np.testing.assert_allclose(packed[:, :3], combined, atol=1e-6)
    np.testing.assert_allclose(packed[:, 3:5], indicators, atol=1e-6)
    np.testing.assert_allclose(packed[:, 5:].reshape(4, 2, 3), experts, atol=1e-6)
    # Each expert is base + its residual, so combined = base + Σ σ(i_k) (expert_k − base).
    base = keras.ops.convert_to_numpy(
        model.get_layer("logits_base")(
            keras.ops.convert_to_numpy(
                keras.Model(model.inputs, model.get_layer("head_dropout").output)(x)
            )
        )
    )
    weights = 1 / (1 + np.exp(-indicators))
    by_hand = base + np.sum(weights[..., None] * (experts - base[:, None]), axis=1)
    np.testing.assert_allclose(combined, by_hand, atol=1e-5)


def test_the_loss_is_the_sum_of_its_parts_by_hand():
    classes, slices = 2, 2
    loss = SliceAwareLoss(classes, slices, indicator_weight=0.5, expert_weight=2.0)
    rng = np.random.default_rng(0)
    y_pred = rng.normal(size=(3, classes + slices + slices * classes)).astype("float32")
    y_true = SliceAwareClassifier.targets([0, 1, 1], [[1, 0], [0, 0], [1, 1]])

    def ce(logits, label):
        return -logits[label] + np.log(np.exp(logits).sum())

    def bce(logit, bit):
        p = 1 / (1 + np.exp(-logit))
        return -(bit * np.log(p) + (1 - bit) * np.log(1 - p))

    total = 0.0
    for row, target in zip(y_pred, y_true, strict=True):
        label, members = target[0], target[1:]
        experts = row[classes + slices :].reshape(slices, classes)
        total += ce(row[:classes], label)
        total += 0.5 * sum(bce(row[classes + k], members[k]) for k in range(slices))
        total += 2.0 * sum(members[k] * ce(experts[k], label) for k in range(slices))
    assert float(loss(y_true, y_pred)) == pytest.approx(total / 3, rel=1e-5)


def test_experts_learn_only_from_their_members():
    # With no member of slice 1 in the batch, slice 1's residual gets no gradient from its
    # expert loss; with the indicator and task losses at zero weight only the experts train.
    keras.utils.set_random_seed(0)
    model = SliceAwareClassifier(Encoder.from_preset("tiny"), 3, 2, pooling="mean", dropout=0.0)
    x, y = _inputs(), SliceAwareClassifier.targets([0, 1, 2, 1], [[1, 0]] * 4)
    with tf.GradientTape() as tape:
        loss = SliceAwareLoss(3, 2)(y, model(x, training=True))
    kernel = model.get_layer("slice_residuals").kernel
    gradient = tape.gradient(loss, kernel).numpy().reshape(-1, 2, 3)
    assert np.abs(gradient[:, 0]).max() > 0
    # slice 1's residual still moves through the combined logits (its weight σ(i_1) > 0) ...
    combined_only = SliceAwareLoss(3, 2, indicator_weight=0.0, expert_weight=0.0)
    with tf.GradientTape() as tape:
        task = combined_only(y, model(x, training=True))
    assert np.abs(tape.gradient(task, kernel).numpy()).max() > 0


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"num_classes": 1, "num_slices": 2}, "num_classes must be an int >= 2"),
        ({"num_classes": 3, "num_slices": 0}, "num_slices must be an int >= 1"),
        ({"num_classes": 3, "num_slices": 1, "pooling": "pooler"}, "pooling must be one of"),
    ],
)
def test_bad_settings_are_refused(arguments, message):
    with pytest.raises(ValueError, match=message):
        SliceAwareClassifier(Encoder.from_preset("tiny"), **arguments)


def test_the_loss_refuses_a_negative_weight():
    model = SliceAwareClassifier(Encoder.from_preset("tiny"), 3, 1)
    with pytest.raises(ValueError, match="expert_weight must be a float >= 0"):
        model.default_loss(expert_weight=-1.0)


def test_targets_refuse_mismatched_shapes():
    with pytest.raises(ValueError, match="labels must be"):
        SliceAwareClassifier.targets([0, 1], [[1, 0]])
    assert SliceAwareClassifier.targets([2], {"a": [True], "b": [False]}).tolist() == [[2, 1, 0]]
