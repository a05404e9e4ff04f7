import os
import tempfile

import keras
import numpy as np
import pytest

from kbert.layers.prompt_tuning import PromptTuning

X = np.random.default_rng(1).normal(size=(2, 4, 16)).astype("float32")
MASK = np.array([[1, 1, 1, 0], [1, 1, 1, 1]], "int32")


def test_prepends_prompts_and_extends_the_mask():
    layer = PromptTuning(num_prompt_tokens=3)
    embeddings, mask = layer(X, padding_mask=MASK)
    assert tuple(embeddings.shape) == (2, 7, 16)
    np.testing.assert_array_equal(np.array(embeddings)[:, 3:], X)
    np.testing.assert_array_equal(np.array(embeddings)[0, :3], np.array(layer.prompts))
    np.testing.assert_array_equal(np.array(mask), [[1, 1, 1, 1, 1, 1, 0], [1] * 7])
    assert [w.name for w in layer.trainable_weights] == ["prompts"]


def test_config_round_trip_fit_and_keras_save():
    # Two outputs, so not the shared helper (it expects one tensor); the same checks by hand.
    layer = PromptTuning(num_prompt_tokens=2)
    config = layer.get_config()
    assert PromptTuning.from_config(config).get_config() == config
    inputs = keras.Input((4, 16), batch_size=2)
    mask = keras.Input((4,), dtype="int32", batch_size=2)
    embeddings, extended = layer(inputs, padding_mask=mask)
    model = keras.Model([inputs, mask], [embeddings, extended])
    before = np.array(layer.prompts)
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss=["mse", None])
    model.fit([X, MASK], np.ones((2, 6, 16), "float32"), epochs=1, verbose=0)
    assert not np.array_equal(np.array(layer.prompts), before)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.keras")
        model.save(path)
        restored = keras.models.load_model(path)
    for got, want in zip(restored([X, MASK]), model([X, MASK]), strict=True):
        np.testing.assert_allclose(np.array(got), np.array(want), atol=1e-6)


def test_no_prompts_is_an_error():
    with pytest.raises(ValueError, match="received 0"):
        PromptTuning(num_prompt_tokens=0)
