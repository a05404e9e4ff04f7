"""A `BackupAndRestore` whose checkpoints survive being killed in the middle of a save."""

import json
import os
import re
import shutil
import tempfile

import keras

from kbert.checks import check_int
from kbert.files import replace_directory
from kbert.keras_internals import skip_to_epoch

_STATE = re.compile(r"^epoch-(\d{6})$")


class ResumableBackup(keras.callbacks.Callback):
    """Backs up the training state each epoch so a killed `fit` resumes where it stopped.

    Keras's `BackupAndRestore` writes `latest.weights.h5` in place and the epoch counter in a
    second file: a `kill -9` during the write leaves a truncated HDF5 file that the next run
    cannot open (and a weights/epoch pair that disagree). Here every save goes to a fresh
    hidden directory that is renamed into place only once complete (`rename` is atomic on one
    file system), and the older state is removed only after that. A restart loads the newest
    complete state and tells `fit` to start at the epoch after it.

    Args:
        backup_dir: str or path. Where states are kept (`epoch-000007/` holds the model and
            optimizer weights plus `training_metadata.json`).
        keep: int, default 1. How many of the newest states to keep.
        delete_on_finish: bool, default True. Remove `backup_dir` once `fit` completes, like
            Keras's callback, so the next `fit` starts from scratch.

    Example:
        >>> import tempfile
        >>> import numpy as np
        >>> model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
        >>> model.compile("sgd", "mse")
        >>> backup = ResumableBackup(tempfile.mkdtemp())
        >>> _ = model.fit(np.zeros((4, 2)), np.zeros((4, 1)), epochs=2, verbose=0,
        ...               callbacks=[backup])
    """

    def __init__(self, backup_dir, keep=1, delete_on_finish=True):
        super().__init__()
        if not backup_dir:
            raise ValueError(f"`backup_dir` must name a directory, received {backup_dir!r}.")
        check_int("keep", keep, minimum=1, expected="an integer >= 1")
        self.backup_dir = os.fspath(backup_dir)
        self.keep = keep
        self.delete_on_finish = delete_on_finish

    def states(self):
        """Returns the complete saved states as a sorted list of (epoch, directory)."""
        if not os.path.isdir(self.backup_dir):
            return []
        found = []
        for name in os.listdir(self.backup_dir):
            match = _STATE.match(name)
            if match:
                found.append((int(match.group(1)), os.path.join(self.backup_dir, name)))
        return sorted(found)

    def on_train_begin(self, logs=None):
        if not self.model.built:
            raise ValueError(
                "ResumableBackup needs a built model: call it on a batch before `fit`."
            )
        states = self.states()
        if not states:
            return
        epoch, directory = states[-1]
        optimizer = self.model.optimizer
        if optimizer is not None and not optimizer.built:
            optimizer.build(self.model.trainable_variables)
        self.model.load_weights(os.path.join(directory, "model.weights.h5"))
        skip_to_epoch(self.model, epoch)  # `fit` starts after the epochs already done

    def on_epoch_end(self, epoch, logs=None):
        os.makedirs(self.backup_dir, exist_ok=True)
        partial = tempfile.mkdtemp(prefix=".partial-", dir=self.backup_dir)
        self.model.save_weights(os.path.join(partial, "model.weights.h5"))
        with open(os.path.join(partial, "training_metadata.json"), "w") as handle:
            json.dump({"epoch": epoch + 1}, handle)
            handle.flush()
            os.fsync(handle.fileno())
        # One left by an earlier run of this same epoch is replaced.
        replace_directory(partial, os.path.join(self.backup_dir, f"epoch-{epoch + 1:06d}"))
        for _, stale in self.states()[: -self.keep]:
            shutil.rmtree(stale, ignore_errors=True)
        for name in os.listdir(self.backup_dir):
            if name.startswith(".partial-") and os.path.join(self.backup_dir, name) != partial:
                shutil.rmtree(os.path.join(self.backup_dir, name), ignore_errors=True)

    def on_train_end(self, logs=None):
        if self.delete_on_finish and os.path.isdir(self.backup_dir):
            shutil.rmtree(self.backup_dir)
