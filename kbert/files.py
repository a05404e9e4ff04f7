"""Files written whole or not at all: a temporary sibling, renamed over the target when complete.

Every file kbert writes for a user to keep (a checkpoint, a results record, a figure, a
`models.config` a server polls) goes through `atomic_path`: the content is written under a hidden
name in the target's directory (same file system, so `os.replace` is atomic) and renamed over
the target only after the writer returned. A reader sees the old file or the new one, never
half of one; a failed writer leaves the old file and no temporary; a process killed mid-write
leaves the old file and a hidden `.*.partial*` file beside it.

    >>> from kbert.files import atomic_path, atomic_write_text
    >>> atomic_write_text("/tmp/kbert_files_example.txt", "done\\n")  # doctest: +SKIP
    >>> with atomic_path("/tmp/model.keras") as temporary:  # doctest: +SKIP
    ...     model.save(temporary)  # a .keras name, as Keras requires
"""

import contextlib
import os
import shutil
import uuid
from pathlib import Path

from kbert import partial_directories


@contextlib.contextmanager
def atomic_path(path):
    """Yields a temporary path beside `path`; moves it over `path` when the block succeeds.

    The temporary name is hidden, unique to this call and ends with `path`'s extension, since
    Keras, NumPy and matplotlib pick the format from it. The parent directory is created.

    Args:
        path: str or Path. The file to write.

    Yields:
        `pathlib.Path` to write the content to (nothing exists there yet).

    Raises:
        Whatever the block raises; the temporary is removed and `path` is left as it was.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(
        f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:12]}.partial{path.suffix}"
    )
    try:
        yield temporary
        os.replace(temporary, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()


@contextlib.contextmanager
def new_directory(path, replace_empty=False):
    """Yields a hidden temporary directory beside `path`; renames it to `path` when the block
    succeeds. Never replaces anything: an export's version directory, once published, is
    final.

    The temporary (`.NAME.partial-<pid>-<id>`) is claimed while the block runs
    (`kbert.partial_directories`), and the abandoned ones of `path` (left by a kill -9) are
    removed first, each named on stderr.

    Args:
        path: str or Path. The directory to publish; it must not exist when the block ends
            (with `replace_empty`, an empty directory there is removed first).
        replace_empty: bool, default False.

    Yields:
        str, the temporary directory (created, empty).

    Raises:
        FileExistsError: `path` exists when the block ends (made meanwhile by another
            process, say); the temporary is removed and `path` left as it is.
        Whatever the block raises; the temporary is removed.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial_directories.remove_abandoned(path)
    temporary = path.with_name(f"{partial_directories.partial_prefix(path)}{uuid.uuid4().hex[:12]}")
    temporary.mkdir()  # not `mkdtemp`'s 0700: a server running as another user reads it
    descriptor = None
    try:
        descriptor = partial_directories.claim(temporary)
        yield str(temporary)
        partial_directories.release(descriptor, temporary)  # its owner record is not output
        descriptor = None
        if replace_empty and path.is_dir() and not any(path.iterdir()):
            path.rmdir()
        if path.exists():
            raise FileExistsError(f"{path} appeared while it was being written")
        os.rename(temporary, path)
    finally:
        if descriptor is not None:
            partial_directories.release(descriptor)
        shutil.rmtree(temporary, ignore_errors=True)


def atomic_write_bytes(path, data):
    """Writes `data` to `path` through `atomic_path`, flushed to disk before the rename.

    The file gets the process's ordinary permissions (not `tempfile.mkstemp`'s 0600), so a
    server running as another user can read it.

    Returns:
        `path` as a `pathlib.Path`.
    """
    with atomic_path(path) as temporary:
        with open(temporary, "xb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
    return Path(path)


def atomic_write_text(path, text, encoding="utf-8"):
    """Writes `text` to `path` as `atomic_write_bytes` does (UTF-8 by default).

    Returns:
        `path` as a `pathlib.Path`.
    """
    return atomic_write_bytes(path, text.encode(encoding))


def restore_interrupted_directory(path):
    """Puts back a directory that a kill left aside between the two renames of
    `replace_directory` (`.NAME.old-<id>` beside it), if `path` itself is missing."""
    path = Path(path)
    if path.exists():
        return
    aside = sorted(
        path.absolute().parent.glob(f".{path.name}.old-*"), key=lambda entry: entry.stat().st_mtime
    )
    if aside:
        os.replace(aside[-1], path)


def replace_directory(staging, target):
    """Moves the finished directory `staging` to `target`, replacing what is there.

    Two renames on one file system (the old directory aside, the new one in), then the old one
    is deleted: at every instant `target` holds the old directory or the new one, except for the
    microseconds between the renames, after which a kill leaves the old one under
    `.NAME.old-<id>` for `restore_interrupted_directory` to put back. (Deleting the old
    directory first would leave nothing if the process died before the rename.) An empty
    directory at `target` is simply removed.

    Returns:
        `target` as a `pathlib.Path`.
    """
    target = Path(target)
    aside = None
    if target.exists():
        if target.is_dir() and not any(target.iterdir()):
            target.rmdir()
        else:
            aside = target.absolute().parent / f".{target.name}.old-{uuid.uuid4().hex[:12]}"
            os.replace(target, aside)
    os.replace(staging, target)
    if aside is not None:
        shutil.rmtree(aside, ignore_errors=True)
    return target
