"""Which partial directories are abandoned: lock, pid, start time, host and older names."""

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

from kbert import partial_directories
from kbert.partial_directories import OWNER_FILE, abandoned, claim, release, remove_abandoned

ROOT = Path(__file__).resolve().parents[1]


def _dead_pid():
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(done.stdout)


def _partial(tmp_path, suffix, owner=None):
    path = tmp_path / f".run.partial-{suffix}"
    path.mkdir()
    if owner is not None:
        (path / OWNER_FILE).write_text(json.dumps(owner))
    return path


def test_a_claimed_partial_is_kept_and_released_one_is_abandoned_once_its_process_ends(tmp_path):
    path = _partial(tmp_path, f"{os.getpid()}-mine0001")
    descriptor = claim(path)
    record = json.loads((path / OWNER_FILE).read_text())
    assert record["pid"] == os.getpid() and record["host"] == socket.gethostname()
    assert abandoned(path) == (False, "its process still writes it")
    release(descriptor, path)
    assert not (path / OWNER_FILE).exists()
    # Lock free, but this process (named in the directory) still runs: it may be creating it.
    assert abandoned(path)[0] is False


def test_a_dead_owner_an_older_kbert_and_a_reused_pid_are_abandoned(tmp_path):
    dead = _dead_pid()
    host = socket.gethostname()
    by_record = _partial(tmp_path, "x-y", owner={"pid": dead, "host": host})
    by_name = _partial(tmp_path, f"{dead}-abcd1234")
    older = _partial(tmp_path, "k2mz_q7x")
    started = partial_directories.process_start_time(os.getpid())
    assert started is not None  # Linux: /proc is there
    reused = _partial(tmp_path, "reused", owner={"pid": os.getpid(), "host": host, "started": 1})
    for path in (by_record, by_name):
        assert abandoned(path) == (True, f"process {dead}, which wrote it, is no longer running")
    assert abandoned(older)[0] is True and "an earlier kbert" in abandoned(older)[1]
    assert abandoned(reused)[0] is True  # this pid now belongs to a process started later


def test_another_hosts_partial_is_kept(tmp_path):
    path = _partial(tmp_path, "1-abcd1234", owner={"pid": 1, "host": "elsewhere.invalid"})
    assert abandoned(path) == (
        False,
        "process 1 on host elsewhere.invalid wrote it (kbert cannot see that host)",
    )


def test_a_dead_resumable_partial_is_kept_for_resume(tmp_path):
    # `kbert pretrain` leaves checkpoints in its partial after a kill -9: removing it as
    # abandoned would lose the training `--resume` continues.
    dead = _dead_pid()
    path = _partial(tmp_path, f"{dead}-abcd1234", owner={"pid": dead, "host": socket.gethostname()})
    (path / partial_directories.RESUME_FILE).write_text(json.dumps({"settings": {}}))
    reason = "it holds an interrupted resumable run (`--resume` continues it)"
    assert abandoned(path) == (False, reason)
    assert remove_abandoned(tmp_path / "run", report=lambda line: None) == [(path, False, reason)]
    assert path.is_dir()


HOLDER = """
import sys, time
from kbert.partial_directories import claim
claim(sys.argv[1])
print("held", flush=True)
time.sleep(600)
"""


def test_remove_abandoned_deletes_only_the_dead_partials_of_that_destination(tmp_path):
    dead = _dead_pid()
    gone = _partial(tmp_path, f"{dead}-abcd1234")
    (gone / "model.keras").write_bytes(b"half")
    live = _partial(tmp_path, "live-1234")
    other = tmp_path / f".other.partial-{dead}-abcd1234"  # another destination's
    other.mkdir()
    (tmp_path / ".run.partial-file").write_text("a file, not a partial run")
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(live)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline() == "held\n"
        found = remove_abandoned(tmp_path / "run")
    finally:
        holder.kill()
        holder.wait(timeout=30)
    assert [(path.name, removed) for path, removed, _ in found] == [
        (gone.name, True),
        (live.name, False),
    ]
    assert not gone.exists() and live.is_dir() and other.is_dir()
    # Its holder is gone now: the next writer removes it.
    assert [removed for _, removed, _ in remove_abandoned(tmp_path / "run")] == [True]
    assert remove_abandoned(tmp_path / "missing" / "run") == []
