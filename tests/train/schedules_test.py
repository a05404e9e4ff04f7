import keras
import numpy as np
import pytest

from kbert.train import (
    LearningRateSchedule,
    slanted_triangular,
    warmup_cosine_decay,
    warmup_inverse_sqrt,
    warmup_linear_decay,
)


def _curve(function, steps, **arguments):
    return np.array([float(function(step, **arguments)) for step in steps])


def test_linear_warmup_then_linear_decay():
    rates = _curve(
        warmup_linear_decay, range(12), peak_learning_rate=1.0, total_steps=10, warmup_steps=4
    )
    np.testing.assert_allclose(rates[:4], [0.25, 0.5, 0.75, 1.0])
    np.testing.assert_allclose(
        rates[4:], [1.0, 5 / 6, 4 / 6, 3 / 6, 2 / 6, 1 / 6, 0.0, 0.0], atol=1e-6
    )


def test_cosine_reaches_half_at_mid_decay_and_the_floor_at_the_end():
    kwargs = dict(peak_learning_rate=2.0, total_steps=110, warmup_steps=10, final_learning_rate=0.2)
    assert float(warmup_cosine_decay(10, **kwargs)) == pytest.approx(2.0)
    assert float(warmup_cosine_decay(60, **kwargs)) == pytest.approx(1.1)
    assert float(warmup_cosine_decay(110, **kwargs)) == pytest.approx(0.2)
    assert float(warmup_cosine_decay(500, **kwargs)) == pytest.approx(0.2)


def test_inverse_sqrt_is_continuous_at_the_end_of_warmup():
    rates = _curve(
        warmup_inverse_sqrt, [98, 99, 100, 399], peak_learning_rate=1.0, warmup_steps=100
    )
    np.testing.assert_allclose(rates, [0.99, 1.0, np.sqrt(100 / 101), 0.5], rtol=1e-6)


def test_slanted_triangular_matches_ulmfit():
    rates = _curve(
        slanted_triangular,
        [0, 5, 10, 55, 100],
        peak_learning_rate=0.01,
        total_steps=100,
        cut_fraction=0.1,
        ratio=32,
    )
    np.testing.assert_allclose(
        rates,
        [0.01 / 32, 0.01 * (1 + 0.5 * 31) / 32, 0.01, 0.01 * (1 + 0.5 * 31) / 32, 0.01 / 32],
        rtol=1e-5,
    )


def test_keras_wrapper_serializes_and_drives_an_optimizer():
    schedule = LearningRateSchedule(
        "warmup_linear_decay", peak_learning_rate=1e-3, total_steps=10, warmup_steps=2
    )
    restored = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(schedule))
    assert float(restored(3)) == pytest.approx(float(schedule(3)))
    optimizer = keras.optimizers.Adam(learning_rate=schedule)
    variable = keras.Variable(1.0)
    optimizer.apply_gradients([(keras.ops.ones(()), variable)])
    assert float(optimizer.learning_rate) == pytest.approx(1e-3)  # step 1: end of warmup


def test_bad_arguments_are_errors():
    with pytest.raises(ValueError, match="unknown schedule 'cyclic'"):
        LearningRateSchedule("cyclic", peak_learning_rate=1.0)
    with pytest.raises(ValueError, match=r"warmup_steps must be in \[0, total_steps=10\]"):
        LearningRateSchedule(
            "warmup_linear_decay", peak_learning_rate=1.0, total_steps=10, warmup_steps=20
        )
    with pytest.raises(ValueError, match="peak_learning_rate must be > 0"):
        warmup_cosine_decay(0, peak_learning_rate=0.0, total_steps=5)
    with pytest.raises(ValueError, match="cut_fraction must be in"):
        slanted_triangular(0, 1.0, total_steps=10, cut_fraction=1.5)
