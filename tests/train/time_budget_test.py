"""plan_time_budget: steps that fit a CPU budget, timed on this machine, kept for a resumed run."""

import json

import keras
import numpy as np
import pytest
import tensorflow as tf

from kbert.train import plan_time_budget


def _probe():
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    return model


def _data():
    return tf.data.Dataset.from_tensor_slices((np.ones((8, 4)), np.ones((8, 1)))).batch(2).repeat()


def test_the_plan_fits_the_budget_and_is_kept(tmp_path):
    path = tmp_path / "plan.json"
    plan = plan_time_budget(_probe(), _data(), 0.5, 10, path=path, probe_steps=8)
    assert plan["epochs"] >= 1 and plan["steps"] == plan["epochs"] * 10
    # Whole intervals that fit (one at least): epochs × interval time ≤ budget, or epochs = 1.
    assert plan["epochs"] == 1 or plan["steps"] * plan["seconds_per_step"] <= 30.0 + 1e-9
    assert json.loads(path.read_text()) == plan
    # A resumed run reads the kept plan (no probe: a model that would fail to fit is never fit).
    assert plan_time_budget(None, None, 0.5, 10, path=path) == plan
    with pytest.raises(ValueError, match="was planned for 0.5 minutes in intervals of 10 steps"):
        plan_time_budget(_probe(), _data(), 1.0, 10, path=path)


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"budget_minutes": 0}, "budget_minutes must be a number > 0"),
        ({"steps_per_epoch": 0}, "steps_per_epoch must be an integer >= 1"),
        ({"probe_steps": 4}, "probe_steps must be at least warmup \\+ 2 = 5"),
        ({"warmup": 0}, "warmup must be an integer >= 1"),
    ],
)
def test_bad_numbers_are_refused(arguments, message):
    settings = {"budget_minutes": 1.0, "steps_per_epoch": 10, **arguments}
    with pytest.raises(ValueError, match=message):
        plan_time_budget(_probe(), _data(), **settings)
