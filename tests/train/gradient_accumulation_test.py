"""Gradient accumulation: N micro-batches of B give the update of one batch of N × B."""

import keras
import numpy as np
import pytest

from kbert.data import Examples
from kbert.data.label_vocabulary import LabelVocabulary
from kbert.models import Encoder, SequenceClassifier
from kbert.text import BertPreprocessor, WordPieceTokenizer
from kbert.train import fine_tune_classifier
from kbert.train.discriminative_learning_rates import (
    DiscriminativeOptimizer,
    layerwise_schedules,
)
from kbert.train.fine_tuning import fine_tuning_optimizer
from kbert.train.freezing import layer_groups
from kbert.train.schedules import LearningRateSchedule

EXAMPLES, BIG, MICRO = 64, 32, 8  # two updates either way


def _data():
    rng = np.random.default_rng(0)
    length = 10
    mask = np.ones((EXAMPLES, length), "int32")
    mask[:, 7:] = rng.integers(0, 2, (EXAMPLES, 1))  # some rows padded
    inputs = {
        "token_ids": rng.integers(1, 50, (EXAMPLES, length)).astype("int32") * mask,
        "segment_ids": np.zeros((EXAMPLES, length), "int32"),
        "padding_mask": mask,
    }
    return inputs, rng.integers(0, 3, (EXAMPLES,)).astype("int32")


def _classifier():
    keras.utils.set_random_seed(0)
    encoder = Encoder.from_preset("tiny", dropout=0.0, attention_dropout=0.0)
    return SequenceClassifier(encoder, num_classes=3, pooling="mean", dropout=0.0)


def _adamw(accumulation):
    return fine_tuning_optimizer(
        EXAMPLES // BIG * accumulation,  # batches in the run
        learning_rate=1e-2,
        warmup_fraction=0.5,
        gradient_accumulation_steps=accumulation,
    )


def _discriminative(model, accumulation, inner=None):
    schedules = layerwise_schedules(
        list(layer_groups(model)),
        "warmup_linear_decay",
        1e-2,
        factor=2.6,
        total_steps=EXAMPLES // BIG,
        warmup_steps=1,
        steps_per_update=accumulation,
    )
    return DiscriminativeOptimizer(
        model,
        inner or (lambda rate: keras.optimizers.AdamW(rate, weight_decay=0.01)),
        schedules,
        global_clipnorm=0.5,  # the accumulated gradient is clipped, as the big batch's is
        gradient_accumulation_steps=accumulation,
    )


def _train(make_optimizer, batch_size, accumulation):
    model = _classifier()
    model.compile(optimizer=make_optimizer(model, accumulation), loss=model.default_loss())
    before = [w.copy() for w in model.get_weights()]
    inputs, labels = _data()
    model.fit(inputs, labels, batch_size=batch_size, epochs=1, shuffle=False, verbose=0)
    assert int(model.optimizer.iterations) == EXAMPLES // BIG  # updates, not micro-batches
    return before, model.get_weights()


def _momentum(rate):
    return keras.optimizers.SGD(rate, momentum=0.9)


# float32: the mean of 4 means of 8 differs from the mean of 32 by rounding only (measured:
# at most 1.3e-7 here; weights move by ~2e-2).
@pytest.mark.parametrize(
    "make_optimizer, atol",
    [
        (lambda model, n: _adamw(n), 1e-6),
        (_discriminative, 1e-6),
        (lambda model, n: _discriminative(model, n, _momentum), 1e-6),
    ],
    ids=["adamw", "per_group_adamw", "per_group_momentum"],
)
def test_four_micro_batches_of_8_update_as_one_batch_of_32(make_optimizer, atol):
    initial, big = _train(make_optimizer, BIG, 1)
    _, accumulated = _train(make_optimizer, MICRO, BIG // MICRO)
    moved = max(float(np.max(np.abs(a - b))) for a, b in zip(big, initial, strict=True))
    assert moved > 1e-3  # the runs trained
    for one, other in zip(big, accumulated, strict=True):
        np.testing.assert_allclose(other, one, rtol=0, atol=atol)


def test_with_loss_scaling_under_mixed_float16():
    """Keras wraps the optimizer in a LossScaleOptimizer; accumulation sits inside it."""
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy("mixed_float16")
    try:
        initial, big = _train(_discriminative, BIG, 1)
        model = _classifier()
        model.compile(optimizer=_discriminative(model, 4), loss=model.default_loss())
        assert isinstance(model.optimizer, keras.optimizers.LossScaleOptimizer)
        inputs, labels = _data()
        model.fit(inputs, labels, batch_size=MICRO, epochs=1, shuffle=False, verbose=0)
        accumulated = model.get_weights()
    finally:
        keras.config.set_dtype_policy(previous)
    moved = max(float(np.max(np.abs(a - b))) for a, b in zip(big, initial, strict=True))
    assert moved > 1e-3
    # float16 activations: rounding differs between batch shapes, so the tolerance is wider
    # (an AdamW step moves a weight by up to ~lr = 1e-2).
    for one, other in zip(big, accumulated, strict=True):
        np.testing.assert_allclose(other, one, rtol=0, atol=2e-3)


def test_the_schedule_counts_updates():
    schedule = LearningRateSchedule(
        "warmup_linear_decay",
        peak_learning_rate=1.0,
        total_steps=4,
        warmup_steps=2,
        steps_per_update=3,
    )
    rates = [round(float(schedule(step)), 4) for step in range(12)]
    assert rates == [0.5] * 3 + [1.0] * 6 + [0.5] * 3  # updates 0-3: warmup, peak, decay
    config = schedule.get_config()
    assert config["steps_per_update"] == 3
    assert float(LearningRateSchedule(**config)(7)) == float(schedule(7))
    with pytest.raises(ValueError, match="steps_per_update must be an int >= 1; received 0"):
        LearningRateSchedule("warmup_linear_decay", peak_learning_rate=1.0, total_steps=4,
                             steps_per_update=0)  # fmt: skip


def test_bad_accumulation_is_named(tmp_path):
    for bad in (0, -1, 2.0, True, "4"):
        with pytest.raises(ValueError, match="gradient_accumulation_steps must be an int >= 1"):
            fine_tuning_optimizer(10, gradient_accumulation_steps=bad)
    model = _classifier()
    rates = {name: 1e-3 for name in layer_groups(model)}
    with pytest.raises(ValueError, match="gradient_accumulation_steps must be an int >= 1"):
        DiscriminativeOptimizer(model, keras.optimizers.Adam, rates, gradient_accumulation_steps=0)
    vocabulary = tmp_path / "vocab.txt"
    vocabulary.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b"]))
    preprocessor = BertPreprocessor(WordPieceTokenizer(str(vocabulary)), sequence_length=8)
    train = Examples(
        ["a b", "b a"], None, np.array([0, 1], np.int32), LabelVocabulary(["x", "y", "z"]), "test"
    )
    with pytest.raises(ValueError, match="gradient_accumulation_steps=2 but the optimizer"):
        fine_tune_classifier(
            model,
            preprocessor,
            train,
            epochs=1,
            batch_size=1,
            optimizer=lambda steps: keras.optimizers.Adam(1e-3),
            gradient_accumulation_steps=2,
            verbose=0,
        )
