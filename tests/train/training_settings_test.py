import dataclasses
import inspect

import keras
import numpy as np
import pytest
import tensorflow as tf

from kbert.train import TrainingSettings
from kbert.train.classifier_fine_tuning import fine_tune_classifier
from kbert.train.feature_fine_tuning import fine_tune_on_features
from kbert.train.fine_tuning import compile_and_fit, fine_tuning_optimizer
from kbert.train.token_task_fine_tuning import (
    NER_TRAINING,
    QUESTION_ANSWERING_TRAINING,
    fine_tune_ner,
    fine_tune_question_answerer,
)
from kbert.train.training_settings import DEFAULT_TRAINING


def test_defaults_are_the_entry_points_former_defaults():
    assert dataclasses.asdict(TrainingSettings()) == {
        "epochs": 3,
        "batch_size": 32,
        "learning_rate": 5e-5,
        "warmup_fraction": 0.1,
        "warmup_steps": None,
        "weight_decay": 0.01,
        "seed": 0,
        "gradient_accumulation_steps": 1,
        "jit_compile": False,
        "callbacks": (),
        "verbose": 1,
    }
    assert NER_TRAINING == TrainingSettings(learning_rate=3e-4)
    assert QUESTION_ANSWERING_TRAINING == TrainingSettings(epochs=2, learning_rate=1e-4)
    defaults = {
        fine_tune_classifier: DEFAULT_TRAINING,
        fine_tune_on_features: DEFAULT_TRAINING,
        fine_tune_ner: NER_TRAINING,
        fine_tune_question_answerer: QUESTION_ANSWERING_TRAINING,
    }
    for entry_point, settings in defaults.items():
        assert inspect.signature(entry_point).parameters["settings"].default is settings


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"epochs": 0}, "epochs must be a positive int; received 0"),
        ({"epochs": 2.0}, "epochs must be a positive int; received 2.0"),
        ({"batch_size": 0}, "batch_size must be a positive int; received 0"),
        ({"batch_size": True}, "batch_size must be a positive int; received True"),
        ({"learning_rate": 0}, "learning_rate must be a number > 0; received 0"),
        ({"learning_rate": "1e-4"}, "learning_rate must be a number > 0; received '1e-4'"),
        ({"warmup_fraction": 1.5}, r"warmup_fraction must be a number in \[0, 1\]; received 1.5"),
        ({"warmup_fraction": -0.1}, r"warmup_fraction must be a number in \[0, 1\]; received"),
        ({"warmup_steps": -1}, "warmup_steps must be an int >= 0 or None; received -1"),
        ({"warmup_steps": 2.5}, "warmup_steps must be an int >= 0 or None; received 2.5"),
        ({"weight_decay": -0.01}, "weight_decay must be a number >= 0; received -0.01"),
        ({"seed": -1}, "seed must be an int >= 0; received -1"),
        ({"seed": None}, "seed must be an int >= 0; received None"),
        (
            {"gradient_accumulation_steps": 0},
            r"gradient_accumulation_steps must be an int >= 1 \(1 = no accumulation\); received 0",
        ),
        ({"jit_compile": "yes"}, "jit_compile must be True, False or \"auto\"; received 'yes'"),
        ({"callbacks": "logs"}, "callbacks must be a list or tuple of keras callbacks; received"),
        ({"callbacks": [print]}, "callbacks must hold keras.callbacks.Callback instances"),
        ({"verbose": 3}, 'verbose must be "auto", 0, 1 or 2; received 3'),
        ({"verbose": True}, 'verbose must be "auto", 0, 1 or 2; received True'),
    ],
)
def test_each_bad_field_is_named(changes, message):
    with pytest.raises(ValueError, match=message):
        TrainingSettings(**changes)
    with pytest.raises(ValueError, match=message):  # a derived copy is checked too
        TrainingSettings().replace(**changes)


def test_frozen_with_plain_types_and_a_callback_tuple():
    settings = TrainingSettings(epochs=np.int64(2), verbose="auto", jit_compile="auto")
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.epochs = 4
    assert type(settings.epochs) is int and settings.epochs == 2
    callback = keras.callbacks.Callback()
    with_callback = settings.replace(callbacks=[callback])
    assert with_callback.callbacks == (callback,)
    assert settings.callbacks == () and with_callback.epochs == 2


def _tiny_run(settings, optimizer=None):
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    x = np.arange(16, dtype="float32").reshape(8, 2) / 16
    batches = tf.data.Dataset.from_tensor_slices((x, x[:, :1])).batch(settings.batch_size)
    history, seconds = compile_and_fit(
        model, settings, batches, None, len(batches), "mse", optimizer=optimizer
    )
    return model, history, seconds


def test_compile_and_fit_uses_the_standard_optimizer_over_the_run():
    settings = TrainingSettings(
        epochs=2, batch_size=2, learning_rate=1e-2, warmup_steps=3, weight_decay=0.0, verbose=0
    )
    model, history, seconds = _tiny_run(settings)
    assert len(history.history["loss"]) == 2 and seconds > 0
    # 4 batches × 2 epochs = 8 steps; 3 warmup steps are a fraction 3/8 of them.
    expected = fine_tuning_optimizer(8, 1e-2, 3 / 8, 0.0)
    compiled = model.optimizer.get_config()
    reference = expected.get_config()
    for config in (compiled, reference):
        config.pop("name")
    assert compiled == reference
    assert int(model.optimizer.iterations) == 8


def test_compile_and_fit_checks_a_custom_optimizer():
    settings = TrainingSettings(epochs=1, batch_size=2, gradient_accumulation_steps=2, verbose=0)
    with pytest.raises(ValueError, match="it returned str"):
        _tiny_run(settings, optimizer=lambda steps: "adam")
    with pytest.raises(ValueError, match="gradient_accumulation_steps=2 but the optimizer"):
        _tiny_run(settings, optimizer=lambda steps: keras.optimizers.Adam(1e-3))
    steps = []
    _tiny_run(
        settings,
        optimizer=lambda total: (
            steps.append(total) or keras.optimizers.SGD(1e-3, gradient_accumulation_steps=2)
        ),
    )
    assert steps == [4]
