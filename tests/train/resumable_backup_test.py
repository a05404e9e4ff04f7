import json
import os

import keras
import numpy as np
import pytest

from kbert.train import ResumableBackup


class _StopAfter(keras.callbacks.Callback):
    """Raises after `epochs` epochs, standing in for a killed process."""

    def __init__(self, epochs):
        super().__init__()
        self.epochs = epochs

    def on_epoch_end(self, epoch, logs=None):
        if epoch + 1 == self.epochs:
            raise KeyboardInterrupt


def _model():
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(keras.optimizers.Adam(0.1), "mse")
    return model


def _data():
    x = np.random.default_rng(0).normal(size=(16, 3)).astype("float32")
    return x, x.sum(axis=1, keepdims=True)


def test_resumes_after_the_last_complete_epoch_with_the_same_weights(tmp_path):
    x, y = _data()
    backup = ResumableBackup(tmp_path / "backup")
    model = _model()
    with pytest.raises(KeyboardInterrupt):
        model.fit(x, y, epochs=5, verbose=0, callbacks=[backup, _StopAfter(3)])
    assert [epoch for epoch, _ in backup.states()] == [3]
    saved = [w.copy() for w in model.get_weights()]

    resumed = _model()
    seen = []
    epochs = keras.callbacks.LambdaCallback(on_epoch_begin=lambda epoch, logs: seen.append(epoch))
    # The weights restored before the first resumed step equal those of the killed run.
    check = keras.callbacks.LambdaCallback(
        on_train_begin=lambda logs: [
            np.testing.assert_array_equal(a, b)
            for a, b in zip(resumed.get_weights(), saved, strict=True)
        ]
    )
    resumed.fit(x, y, epochs=5, verbose=0, callbacks=[backup, check, epochs])
    assert seen == [3, 4]
    assert not (tmp_path / "backup").exists()  # Finished: the backup is removed.


def test_a_save_killed_midway_leaves_the_previous_state_usable(tmp_path):
    x, y = _data()
    backup = ResumableBackup(tmp_path / "backup", delete_on_finish=False)
    model = _model()
    model.fit(x, y, epochs=2, verbose=0, callbacks=[backup])
    # What a kill during the next save leaves behind: a truncated file in a partial directory.
    partial = tmp_path / "backup" / ".partial-killed"
    partial.mkdir()
    (partial / "model.weights.h5").write_bytes(b"\x89HDF\r\n truncated")
    seen = []
    resumed = _model()
    resumed.fit(
        x,
        y,
        epochs=4,
        verbose=0,
        callbacks=[
            backup,
            keras.callbacks.LambdaCallback(on_epoch_begin=lambda e, logs: seen.append(e)),
        ],
    )
    assert seen == [2, 3]
    assert [epoch for epoch, _ in backup.states()] == [4]
    assert not partial.exists()  # Cleaned up by the next complete save.
    metadata = json.loads(
        (tmp_path / "backup" / "epoch-000004" / "training_metadata.json").read_text()
    )
    assert metadata == {"epoch": 4}


def test_keeps_the_requested_number_of_states(tmp_path):
    x, y = _data()
    backup = ResumableBackup(tmp_path / "b", keep=2, delete_on_finish=False)
    _model().fit(x, y, epochs=4, verbose=0, callbacks=[backup])
    assert sorted(os.listdir(tmp_path / "b")) == ["epoch-000003", "epoch-000004"]


@pytest.mark.parametrize(
    "kwargs, message",
    [({"backup_dir": ""}, "backup_dir"), ({"backup_dir": "x", "keep": 0}, "keep")],
)
def test_bad_arguments_name_themselves(kwargs, message):
    with pytest.raises(ValueError, match=message):
        ResumableBackup(**kwargs)
