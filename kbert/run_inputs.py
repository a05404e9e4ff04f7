"""What a recorded run read, pinned by content hash: the data files and saved models behind it.

A record names the commit of the code that ran (`kbert.run_records`); the commit does not name
the data or a checkpoint another run wrote (`saved_models/lab01_causal` is rebuilt whenever
lab01 is re-run). So a recording process watches the files it opens for reading and its record
holds the SHA-256 of each one that is an input rather than code:

- files under the data directory (`KBERT_DATA_DIR`, `kbert.data.data_dir`), written
  `$KBERT_DATA_DIR/<relative path>`;
- files under this checkout other than its code (`saved_models/`, `runs/`, ...), written
  checkout-relative;
- files a reader names with `note_input` (checkpoints in an installed package, or files that
  TensorFlow's own file system opens, which Python's audit events do not see).

Python's `open` is watched through an audit hook (`sys.addaudithook`, PEP 578), installed by
`watch_inputs` when a program adds its `--record` argument: one set insertion per open.
"""

import hashlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Code and version control: pinned by the record's commit, not by hash.
_CODE_SUFFIXES = (".py", ".pyc", ".pyi", ".so", ".md", ".toml", ".cfg")
_SKIPPED_PARTS = (".git", ".venv", "__pycache__", "docs")

_OPENED = set()
_NOTED = set()
_WATCHING = []
_DIGESTS = {}


def _on_audit_event(event, arguments):
    if event != "open" or not arguments:
        return
    path, mode = arguments[0], arguments[1] if len(arguments) > 1 else "r"
    if isinstance(path, str) and (mode is None or not any(flag in mode for flag in "wax+")):
        _OPENED.add(path)


def watch_inputs():
    """Starts noting every file this process opens for reading (once per process)."""
    if not _WATCHING:
        sys.addaudithook(_on_audit_event)
        _WATCHING.append(True)


def note_input(path):
    """Names `path` as an input of this run, however it is read (TensorFlow's file system, a
    Rust reader); it is pinned even outside the data directory and the checkout."""
    _NOTED.add(str(path))


def _digest(path):
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    if key not in _DIGESTS:
        sha = hashlib.sha256()
        with open(path, "rb") as file:
            for block in iter(lambda: file.read(1 << 20), b""):
                sha.update(block)
        _DIGESTS[key] = sha.hexdigest()
    return _DIGESTS[key]


def _label(path, data, noted):
    """How a record names `path`, or None when it is not an input worth pinning."""
    if data is not None and path.is_relative_to(data):
        return f"$KBERT_DATA_DIR/{path.relative_to(data).as_posix()}"
    if path.is_relative_to(ROOT):
        relative = path.relative_to(ROOT)
        code = path.name.endswith(_CODE_SUFFIXES) or any(
            part in _SKIPPED_PARTS for part in relative.parts
        )
        if not code or noted:
            return relative.as_posix()
        return None
    return path.as_posix() if noted else None


def pinned_inputs(data_directory=None):
    """The inputs this process read so far: `{label: sha256}`, sorted by label.

    Args:
        data_directory: str, Path or None. The data directory; None asks `kbert.data.data_dir`
            (without requiring one).
    """
    if data_directory is None:
        from kbert.data.data_dir import data_dir

        data_directory = data_dir()
    data = Path(data_directory).resolve() if data_directory is not None else None
    pinned = {}
    for text in sorted(_OPENED | _NOTED):
        path = Path(text)
        try:
            path = path.resolve()
            if not path.is_file():
                continue
            label = _label(path, data, text in _NOTED)
            if label is not None:
                pinned[label] = _digest(path)
        except OSError:
            continue
    return dict(sorted(pinned.items()))


def pin_outputs(directory):
    """`{label: sha256}` of every file under `directory`, labelled as `pinned_inputs` labels
    them: a run that writes a model records this, so a later record that read the model can be
    matched to the run that wrote it (`benchmarks/reports/_evidence.py` flags a mismatch).

    Raises:
        ValueError: `directory` is not a directory.
    """
    directory = Path(directory).resolve()
    if not directory.is_dir():
        raise ValueError(f"directory must be a folder a run wrote; {directory} is not one")
    pinned = {}
    for path in sorted(directory.rglob("*")):
        if path.is_file():
            label = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)
            pinned[label] = _digest(path)
    return pinned


def forget_inputs():
    """Clears what was noted (a long-lived process that writes several records; tests)."""
    _OPENED.clear()
    _NOTED.clear()


def is_watching():
    """Whether `watch_inputs` runs in this process."""
    return bool(_WATCHING)


__all__ = [
    "forget_inputs",
    "is_watching",
    "note_input",
    "pin_outputs",
    "pinned_inputs",
    "watch_inputs",
]
