"""AdamW on warmup + cosine decay, counting updates, for pretraining."""

import keras
import numpy as np
import pytest

from kbert.train.pretraining_optimizer import compile_for_pretraining


def _model():
    return keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])


def _rate(optimizer, batch):
    optimizer.iterations.assign(batch)
    return float(optimizer.learning_rate)


def test_the_rate_warms_up_to_the_peak_then_decays_to_zero():
    model = _model()
    compile_for_pretraining(model, 1e-3, total_steps=100, warmup_steps=10)
    optimizer = model.optimizer
    assert isinstance(optimizer, keras.optimizers.AdamW) and optimizer.global_clipnorm == 1.0
    values = [_rate(optimizer, step) for step in (0, 10, 55, 100)]
    assert (
        values[0] < values[1] / 2
        and np.isclose(values[1], 1e-3)
        and values[1] > values[2] > values[3]
    )
    assert values[3] < 1e-6


def test_gradient_accumulation_counts_updates():
    model = _model()
    compile_for_pretraining(model, 1e-3, total_steps=40, warmup_steps=5, gradient_accumulation=4)
    assert model.optimizer.gradient_accumulation_steps == 4
    schedule = model.optimizer.get_config()["learning_rate"]["config"]
    assert schedule["steps_per_update"] == 4  # the schedule counts updates, not batches
    assert (schedule["total_steps"], schedule["warmup_steps"]) == (10, 5)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"peak_learning_rate": 0}, "peak_learning_rate must be a number > 0"),
        ({"total_steps": 0}, "total_steps"),
        ({"gradient_accumulation": 0}, "gradient_accumulation"),
    ],
)
def test_bad_values_are_refused(kwargs, message):
    arguments = {"peak_learning_rate": 1e-3, "total_steps": 10, "warmup_steps": 0, **kwargs}
    with pytest.raises(ValueError, match=message):
        compile_for_pretraining(_model(), **arguments)


def test_linear_decay_halves_the_rate_halfway_and_unknown_schedules_are_refused():
    model = _model()
    compile_for_pretraining(model, 1e-3, total_steps=110, warmup_steps=10, schedule="linear")
    assert np.isclose(_rate(model.optimizer, 60), 5e-4)
    cosine = _model()
    compile_for_pretraining(cosine, 1e-3, total_steps=110, warmup_steps=10)
    assert np.isclose(_rate(cosine.optimizer, 35), 1e-3 * 0.5 * (1 + np.cos(np.pi / 4)))
    with pytest.raises(ValueError, match=r"schedule must be one of \['cosine', 'linear'\]"):
        compile_for_pretraining(_model(), 1e-3, 10, 0, schedule="one_cycle")
