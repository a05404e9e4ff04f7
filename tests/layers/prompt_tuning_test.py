import numpy as np
import pytest

from kbert.layers.prompt_tuning import PromptTuning
from tests.layer_test_case import run_layer_test

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


def test_layer_end_to_end():
    # Two outputs, the embeddings and the extended (int) mask: only the embeddings train.
    run_layer_test(
        PromptTuning,
        {"num_prompt_tokens": 2},
        X,
        {"padding_mask": MASK},
        expected_output_shape=[(2, 6, 16), (2, 6)],
        expected_num_trainable_weights=1,
    )


def test_no_prompts_is_an_error():
    with pytest.raises(ValueError, match="received 0"):
        PromptTuning(num_prompt_tokens=0)
