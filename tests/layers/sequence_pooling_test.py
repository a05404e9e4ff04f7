import numpy as np
import pytest
from keras import ops

from kbert.layers import POOLING_MODES, SequencePooling
from tests.layer_test_case import run_layer_test

SEQUENCE = np.array(
    [[[1.0, -5.0], [3.0, 2.0], [100.0, 100.0]], [[0.0, 1.0], [-2.0, -3.0], [4.0, 0.5]]], "float32"
)
MASK = np.array([[1, 1, 0], [1, 1, 1]], "int32")


@pytest.mark.parametrize(
    "mode, expected",
    [
        ("cls", [[1.0, -5.0], [0.0, 1.0]]),
        ("mean", [[2.0, -1.5], [2.0 / 3, -0.5]]),
        ("max", [[3.0, 2.0], [4.0, 1.0]]),
        ("last", [[3.0, 2.0], [4.0, 0.5]]),
        ("concat", [[3.0, 2.0, 3.0, 2.0, 2.0, -1.5], [4.0, 0.5, 4.0, 1.0, 2.0 / 3, -0.5]]),
    ],
)
def test_pools_real_tokens_only(mode, expected):
    pooled = SequencePooling(mode)(SEQUENCE, padding_mask=MASK)
    np.testing.assert_allclose(ops.convert_to_numpy(pooled), expected, rtol=1e-6)


def test_no_mask_means_every_position_is_real():
    pooled = SequencePooling("last")(SEQUENCE)
    np.testing.assert_allclose(ops.convert_to_numpy(pooled), SEQUENCE[:, -1])


@pytest.mark.parametrize("mode", POOLING_MODES)
def test_layer_contract(mode):
    width = 6 if mode == "concat" else 2
    run_layer_test(
        SequencePooling,
        {"mode": mode},
        SEQUENCE,
        {"padding_mask": MASK},
        expected_output_shape=(2, width),
        expected_num_trainable_weights=0,
        run_fit=False,
    )


def test_unknown_mode_is_named():
    with pytest.raises(ValueError, match="pooling mode must be one of .* received 'avg'"):
        SequencePooling("avg")
