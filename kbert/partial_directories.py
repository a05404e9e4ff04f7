"""Hidden partial directories that say who writes them, so the dead ones can be removed safely.

A run or an export is written into a hidden sibling of its destination
(`.NAME.partial-<pid>-<id>`: `kbert.runs.StagedRunDirectory`, `kbert.files.new_directory`) and
renamed into place when finished. A process killed with
kill -9 (or by the machine going down) cannot delete it, so the next writer of the same
destination does, but only once it knows the owner is gone: a second run writing the same
`--output-dir` at the same time must keep its directory.

The owner proves it is alive by holding an exclusive `flock` on the directory for as long as it
writes; the kernel drops the lock when the process ends, however it ends. The owner also records
its pid (in the name, and with its host and start time in `OWNER_FILE`), for file systems
without locks and to say whose directory it was. A partial is abandoned when its lock is free
and its owner is not running on this host (a pid reused by another process does not count: the
start times differ). A partial written from another host is kept: kbert cannot see that host's
processes. A partial named by kbert before these records (no pid) is abandoned when its lock is
free.
"""

import contextlib
import json
import os
import re
import shutil
import socket
import sys
from pathlib import Path

try:
    import fcntl
except ImportError:  # not a POSIX system: the owner record alone decides
    fcntl = None

OWNER_FILE = ".kbert-owner.json"
# In a resumable run's partial (`kbert.runs.ResumableRunDirectory`): the settings it was started
# with. Such a partial is never removed as abandoned: `--resume` continues it.
RESUME_FILE = "resume.json"
_OWNER_PID = re.compile(r"\.partial-(\d+)-[a-z0-9_]+$")  # `tempfile.mkdtemp` suffixes have no "-"


def partial_prefix(destination):
    """The name prefix of `destination`'s partial directories, this process's pid included."""
    return f"{_partial_stem(destination)}{os.getpid()}-"


def _partial_stem(destination):
    return f".{Path(destination).name}.partial-"


def process_start_time(pid):
    """When process `pid` started, in clock ticks since boot (Linux `/proc`), or None."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[19])  # field 22, counted after the command name


def claim(path):
    """Marks the directory `path` as this process's: locks it and writes `OWNER_FILE` in it.

    Args:
        path: str or Path. A directory this process just created.

    Returns:
        int, the descriptor holding the lock; give it to `release`.
    """
    return _lock_and_record(path, adopting=False)


def adopt(path):
    """Like `claim`, for a partial directory another process wrote and left (`owner_gone`):
    None when a process took it since (its lock is held), else the descriptor holding the lock.
    """
    return _lock_and_record(path, adopting=True)


def _lock_and_record(path, adopting):
    path = Path(path)
    descriptor = os.open(path, os.O_RDONLY)
    if fcntl is not None:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if adopting:
                os.close(descriptor)
                return None
        except OSError:  # a file system without locks: the record decides
            pass
    owner = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "started": process_start_time(os.getpid()),
    }
    (path / OWNER_FILE).write_text(json.dumps(owner))
    return descriptor


def release(descriptor, path=None):
    """Drops `claim`'s lock; with `path`, first removes `OWNER_FILE` from it (before it is
    renamed into place as a finished directory)."""
    if path is not None:
        with contextlib.suppress(FileNotFoundError):
            (Path(path) / OWNER_FILE).unlink()
    os.close(descriptor)


def give_up(descriptor, path):
    """Drops `claim`'s lock on `path` and records that nobody writes it any more, so another
    process (or this one, later) may `adopt` it: a resumed run that failed keeps its partial."""
    (Path(path) / OWNER_FILE).write_text(
        json.dumps({"released": True, "host": socket.gethostname()})
    )
    os.close(descriptor)


def _running(pid, started):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it exists, as another user's process
    now = process_start_time(pid)
    return started is None or now is None or now == started


def _owner_record(path):
    try:
        record = json.loads((path / OWNER_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def abandoned(path):
    """Whether nobody writes the partial directory `path` any more and nobody will continue it.

    Returns:
        `(bool, str)`: True when it may be deleted; the reason, as a phrase about its owner.
    """
    gone, reason = owner_gone(path)
    if gone and (Path(path) / RESUME_FILE).is_file():
        return False, "it holds an interrupted resumable run (`--resume` continues it)"
    return gone, reason


def owner_gone(path):
    """Whether the process that wrote the partial directory `path` is gone, and why: its lock
    is free and its owner is not running on this host, or gave it up (`give_up`).

    Returns:
        `(bool, str)`: the answer; the reason, as a phrase about its owner.
    """
    path = Path(path)
    try:
        descriptor = os.open(path, os.O_RDONLY)
    except OSError:
        return False, "it could not be opened"
    try:
        lock_free = None  # unknown: no locks on this system or file system
        if fcntl is not None:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                lock_free = True
            except BlockingIOError:
                return False, "its process still writes it"
            except OSError:
                pass
        return _owner_gone_by_record(path, lock_free)
    finally:
        os.close(descriptor)


def _owner_gone_by_record(path, lock_free):
    record = _owner_record(path) or {}
    host = record.get("host")
    if host is not None and host != socket.gethostname():
        return (
            False,
            f"process {record.get('pid')} on host {host} wrote it (kbert cannot see that host)",
        )
    if record.get("released") is True:
        return True, "a run that failed gave it up for another try"
    match = _OWNER_PID.search(path.name)
    pid = record.get("pid") or (int(match.group(1)) if match else None)
    if not isinstance(pid, int) or pid < 1:
        if lock_free:
            return True, "an earlier kbert left it (no owner recorded, nobody holds it)"
        return False, "no owner is recorded and this file system has no locks"
    if _running(pid, record.get("started")):
        return False, f"process {pid}, which still runs, is writing it"
    return True, f"process {pid}, which wrote it, is no longer running"


def remove_abandoned(destination, report=None):
    """Deletes the abandoned partial directories of `destination`; keeps the others.

    Args:
        destination: str or Path. The directory the partials were meant to become.
        report: callable or None, default None. Receives one line per partial directory found,
            removed or kept, with the reason; None writes them to stderr.

    Returns:
        list of `(Path, removed: bool, reason: str)`, one per partial directory found.
    """
    report = report or _to_stderr
    destination = Path(destination).absolute()
    stem = _partial_stem(destination)
    if not destination.parent.is_dir():
        return []
    found = []
    for entry in sorted(destination.parent.iterdir()):
        if not entry.name.startswith(stem) or not entry.is_dir() or entry.is_symlink():
            continue
        removable, reason = abandoned(entry)
        if removable:
            shutil.rmtree(entry, ignore_errors=True)
        report(f"{'removed' if removable else 'kept'} unfinished {entry}: {reason}")
        found.append((entry, removable, reason))
    return found


def _to_stderr(line):
    print(f"kbert: {line}", file=sys.stderr, flush=True)
