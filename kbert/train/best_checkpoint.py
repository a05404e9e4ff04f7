"""Keeping the best model of a run, without ever leaving a half-written file."""

import os

import keras
import numpy as np

from kbert.files import atomic_path


class BestCheckpoint(keras.callbacks.Callback):
    """Saves the whole model whenever a monitored validation metric improves.

    Unlike `keras.callbacks.ModelCheckpoint`, the file is written next to its destination and
    renamed over it only when complete (an atomic `os.replace`), so a run killed during a save
    keeps the previous best model intact.

    Args:
        path: str or Path ending in ".keras".
        monitor: str, default "val_accuracy". A key of the epoch logs.
        mode: str, default "max". "max" or "min".

    Attributes:
        best: float, the best value seen (None before the first epoch).
        best_epoch: int, 1-based epoch of `best`.
    """

    def __init__(self, path, monitor="val_accuracy", mode="max"):
        super().__init__()
        path = os.fspath(path)
        if not path.endswith(".keras"):
            raise ValueError(f"path must end in .keras; received {path!r}")
        if mode not in ("max", "min"):
            raise ValueError(f"mode must be 'max' or 'min'; received {mode!r}")
        self.path = path
        self.monitor = monitor
        self.mode = mode
        self.best = None
        self.best_epoch = None

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if self.monitor not in logs:
            raise ValueError(
                f"BestCheckpoint monitors {self.monitor!r}, which the epoch logs "
                f"lack (they hold {sorted(logs)}); pass validation data or another "
                "monitor"
            )
        value = float(logs[self.monitor])
        better = self.best is None or (
            value > self.best if self.mode == "max" else value < self.best
        )
        if not better or np.isnan(value):
            return
        self.best, self.best_epoch = value, epoch + 1
        with atomic_path(self.path) as temporary:
            self.model.save(temporary)
