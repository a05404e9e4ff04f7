"""A run directory that is replaced only once the new run has finished.

`kbert finetune --output-dir DIR` trains into a hidden sibling of DIR (`.DIR.partial-<id>`) and
moves it into place at the end, so a typo, a data error or a kill -9 during training leaves the
previous run (or the user's files) exactly as they were. `--overwrite` replaces only a directory
that kbert wrote: one whose `config.json` says it is a kbert run, holding only files kbert
writes; anything else in it is never deleted.

Replacing is two renames (the old run aside, the new one in) and then deleting the old run; a
kill in the microseconds between the renames leaves the old run under `.DIR.old-<id>`, which
the next `kbert finetune` on DIR puts back before anything else.
"""

import json
import os
import shutil
import tempfile
from pathlib import Path

from kbert.files import replace_directory, restore_interrupted_directory

# What `kbert finetune` writes into a run directory (classification and token tasks).
RUN_FILES = frozenset(
    {
        "config.json",
        "labels.json",
        "preprocessor.json",
        "tokenizer.json",
        "best.keras",
        "model.keras",
        "history.csv",
        "metrics.json",
        "learning_curve.png",
        "confusion_matrix.png",
        "tensorboard",
    }
)
RUN_MARKER = "kbert_run"  # key of config.json that marks a directory written by kbert


def _is_kbert_run(path):
    """Whether `path/config.json` is a kbert run's (marked, or an older run's task + versions)."""
    try:
        config = json.loads((path / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(config, dict) and bool(
        config.get(RUN_MARKER) or ("task" in config and "versions" in config)
    )


def check_output_dir(path, overwrite):
    """Checks that `path` may receive a new run; touches nothing.

    Args:
        path: str or Path. The `--output-dir`.
        overwrite: bool. Whether an existing kbert run there may be replaced.

    Returns:
        The `Path`.

    Raises:
        ValueError: `path` is a file; its parent is not a writable directory; it is a non-empty
            directory and `overwrite` is False; or, with `overwrite`, it holds files kbert did
            not write (named) or is not a kbert run directory.
    """
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ValueError(
            f"--output-dir {str(path)!r} is a file; expected a directory to create "
            "(or a kbert run directory to replace with --overwrite)"
        )
    parent = path.absolute().parent
    if not parent.is_dir():
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise ValueError(
                f"cannot create the parent of --output-dir {str(path)!r}: {error.strerror}"
            ) from None
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ValueError(f"--output-dir {str(path)!r}: its folder {str(parent)!r} is not writable")
    if path.is_dir() and any(path.iterdir()):
        if not overwrite:
            raise ValueError(
                f"run directory {str(path)!r} exists and is not empty; choose "
                "another --output-dir or pass --overwrite to replace it"
            )
        foreign = sorted(entry.name for entry in path.iterdir() if entry.name not in RUN_FILES)
        if foreign:
            raise ValueError(
                f"--overwrite refuses to replace {str(path)!r}: it holds files kbert "
                f"did not write ({', '.join(foreign[:5])}); move them or choose "
                "another --output-dir"
            )
        if not _is_kbert_run(path):
            raise ValueError(
                f"--overwrite refuses to replace {str(path)!r}: it is not a kbert "
                f"run directory (no config.json with {RUN_MARKER!r})"
            )
    return path


class StagedRunDirectory:
    """Writes a run beside its destination and moves it into place only when it is complete.

    Use it as a context manager: inside, write into `.path` (a hidden sibling); `commit()` moves
    it to the destination (replacing an earlier kbert run there); leaving the block without
    `commit()` (an error, Ctrl-C) deletes the partial run and keeps the destination untouched.

    Args:
        destination: str or Path. The `--output-dir`, already checked by `check_output_dir`.

    Example:
    >>> with StagedRunDirectory("runs/trec") as run:  # doctest: +SKIP
    ...     (run.path / "metrics.json").write_text("{}")
    ...     run.commit()
    """

    def __init__(self, destination):
        self.destination = Path(destination)
        self.path = None
        self._committed = False

    def __enter__(self):
        restore_interrupted_directory(self.destination)
        parent = self.destination.absolute().parent
        parent.mkdir(parents=True, exist_ok=True)
        self.path = Path(tempfile.mkdtemp(prefix=f".{self.destination.name}.partial-", dir=parent))
        return self

    def commit(self):
        """Moves the finished run to the destination; an earlier kbert run there is removed."""
        destination = replace_directory(self.path, self.destination)
        self._committed = True
        return destination

    def __exit__(self, *exc_info):
        if not self._committed and self.path is not None:
            shutil.rmtree(self.path, ignore_errors=True)
        return False
