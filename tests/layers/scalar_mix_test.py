import numpy as np
import pytest
from keras import ops

from kbert.layers import ScalarMix
from tests.layer_test_case import run_layer_test

rng = np.random.default_rng(0)
LAYERS = rng.normal(size=(2, 3, 4, 5)).astype("float32")  # (batch, num_inputs, seq, hidden)


def _numpy(x):
    return np.asarray(ops.convert_to_numpy(x))


def test_layer_contract():
    run_layer_test(
        ScalarMix,
        {"num_inputs": 3, "initial_gamma": 0.5},
        LAYERS,
        expected_output_shape=(2, 4, 5),
        expected_num_trainable_weights=2,
    )


def test_zero_weights_give_gamma_times_the_mean():
    mix = ScalarMix(3, initial_gamma=2.0)
    np.testing.assert_allclose(_numpy(mix(LAYERS)), 2.0 * LAYERS.mean(axis=1), atol=1e-6)
    np.testing.assert_allclose(mix.mixing_weights(), [1 / 3] * 3, rtol=1e-6)


def test_a_large_weight_selects_its_layer():
    mix = ScalarMix(3)
    mix.build(LAYERS.shape)
    mix.scalar_weights.assign([0.0, 50.0, 0.0])
    np.testing.assert_allclose(_numpy(mix(LAYERS)), LAYERS[:, 1], atol=1e-5)
    np.testing.assert_allclose(mix.mixing_weights(), [0.0, 1.0, 0.0], atol=1e-6)


def test_a_list_of_layers_equals_the_stacked_tensor():
    mix = ScalarMix(3)
    mix.build(LAYERS.shape)
    mix.scalar_weights.assign([0.3, -1.0, 2.0])
    stacked = _numpy(mix(LAYERS))
    listed = _numpy(mix([LAYERS[:, k] for k in range(3)]))
    np.testing.assert_allclose(listed, stacked, atol=1e-6)
    weights = np.exp([0.3, -1.0, 2.0]) / np.exp([0.3, -1.0, 2.0]).sum()
    np.testing.assert_allclose(stacked, np.einsum("k,bksh->bsh", weights, LAYERS), atol=1e-5)


@pytest.mark.parametrize(
    "inputs, received",
    [
        (LAYERS[:, :2], r"a tensor of shape \(2, 2, 4, 5\)"),
        ([LAYERS[:, 0], LAYERS[:, 1]], "a list of 2 tensors"),
        (LAYERS[:, 0, 0], r"a tensor of shape \(2, 5\)"),
    ],
)
def test_a_wrong_number_of_inputs_is_named(inputs, received):
    with pytest.raises(ValueError, match=f"expected 3 inputs.* received {received}"):
        ScalarMix(3)(inputs)


def test_num_inputs_must_be_positive():
    with pytest.raises(ValueError, match="num_inputs must be a positive int; received 0"):
        ScalarMix(0)
