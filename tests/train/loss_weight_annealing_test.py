import functools

import keras
import numpy as np
import pytest
import tensorflow as tf

from kbert.layers import ClassificationHead
from kbert.models import CausalLanguageModel, MultitaskModel
from kbert.train import LossWeightAnnealing, linear_annealing
from tests.models.pretraining_batches import encoder_batch, tiny_encoder


def _model():
    keras.utils.set_random_seed(0)
    encoder = tiny_encoder(causal=True)
    return MultitaskModel(
        encoder,
        {"sentiment": ClassificationHead(2, pooling="last")},
        language_model=CausalLanguageModel(encoder),
        language_model_weight=0.5,
    )


def _batches(count):
    labels = {"sentiment": np.array([1, 0], "int32")}
    return tf.data.Dataset.from_tensors((encoder_batch(), labels)).repeat(count)


def test_linear_annealing_is_clamped_at_both_ends():
    values = [float(linear_annealing(step, 0.5, 0.0, total_steps=4)) for step in range(-1, 7)]
    np.testing.assert_allclose(values, [0.5, 0.5, 0.375, 0.25, 0.125, 0.0, 0.0, 0.0])
    assert float(linear_annealing(tf.constant(2), 0.0, 1.0, total_steps=8)) == 0.25
    with pytest.raises(ValueError, match=r"total_steps must be an int >= 1; received 0"):
        linear_annealing(0, 1.0, 0.0, total_steps=0)


def test_step_annealing_sets_the_weight_each_batch_of_a_compiled_fit():
    model = _model()
    model.compile(optimizer=keras.optimizers.Adam(1e-3))
    schedule = functools.partial(linear_annealing, start_value=0.5, end_value=0.0, total_steps=10)
    annealing = LossWeightAnnealing("language_model", schedule)
    model.fit(_batches(3), epochs=2, verbose=0, callbacks=[annealing])
    # Six steps, 0 to 5: the last batch started at step 5, weight 0.5 * (1 - 5/10).
    assert [step for step, _ in annealing.history] == [0, 1, 2, 3, 4, 5]
    np.testing.assert_allclose(
        [value for _, value in annealing.history], [0.5, 0.45, 0.4, 0.35, 0.3, 0.25], rtol=1e-6
    )
    assert model.loss_weight("language_model") == pytest.approx(0.25)
    # A second fit keeps counting from the optimizer's step.
    model.fit(_batches(1), epochs=1, verbose=0, callbacks=[annealing])
    assert annealing.history[-1][0] == 6
    assert model.loss_weight("language_model") == pytest.approx(0.2)


def test_epoch_annealing_and_the_loss_it_changes():
    model = _model()
    model.compile(optimizer=keras.optimizers.SGD(0.0), run_eagerly=True)
    annealing = LossWeightAnnealing(
        "language_model", lambda epoch: [1.0, 0.0, 2.0][epoch], every="epoch"
    )
    history = model.fit(_batches(2), epochs=3, verbose=0, callbacks=[annealing]).history
    assert annealing.history == [(0, 1.0), (1, 0.0), (2, 2.0)]
    assert model.loss_weight("language_model") == 2.0
    # With a zero learning rate each epoch's loss is sentiment + weight * LM loss.
    lm, sentiment = history["language_model_loss"], history["sentiment_loss"]
    np.testing.assert_allclose(
        history["loss"], [sentiment[0] + lm[0], sentiment[1], sentiment[2] + 2 * lm[2]], rtol=1e-5
    )


def test_unknown_weight_and_bad_arguments_are_errors():
    model = _model()
    model.compile(optimizer=keras.optimizers.Adam(1e-3), run_eagerly=True)
    annealing = LossWeightAnnealing("ner", lambda step: 1.0)
    with pytest.raises(
        ValueError,
        match=r"no loss weight named 'ner'; expected one of "
        r"\['sentiment', 'language_model'\]",
    ):
        model.fit(_batches(1), verbose=0, callbacks=[annealing])
    plain = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    plain.compile(optimizer="sgd", loss="mse")
    with pytest.raises(ValueError, match=r"needs a model with set_loss_weight"):
        plain.fit(
            np.zeros((2, 2)),
            np.zeros((2, 1)),
            verbose=0,
            callbacks=[LossWeightAnnealing("language_model", lambda step: 1.0)],
        )
    with pytest.raises(ValueError, match=r'every must be "step" or "epoch"; received 3'):
        LossWeightAnnealing("language_model", lambda step: 1.0, every=3)
    with pytest.raises(ValueError, match=r"schedule must be a callable"):
        LossWeightAnnealing("language_model", 0.5)
    failing = LossWeightAnnealing("language_model", lambda step: -1.0)
    with pytest.raises(ValueError, match=r"must be a finite number >= 0; received -1.0"):
        model.fit(_batches(1), verbose=0, callbacks=[failing])
