import keras
import numpy as np
import pytest

from kbert.train.stop_after_steps import StopAfterSteps


def test_stop_after_steps_ends_fit_part_way_through_an_epoch():
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    x, y = np.ones((40, 2), "float32"), np.zeros((40, 1), "float32")
    stop = StopAfterSteps(13)
    model.fit(x, y, batch_size=4, epochs=3, verbose=0, callbacks=[stop])  # 10 batches a pass
    assert int(model.optimizer.iterations) == 13  # not 20 (end of the pass) nor 30 (all)


@pytest.mark.parametrize("steps", [0, 2.5, True])
def test_a_step_count_that_is_no_positive_int_is_refused(steps):
    with pytest.raises(ValueError, match=f"steps must be an int >= 1; received {steps!r}"):
        StopAfterSteps(steps)
