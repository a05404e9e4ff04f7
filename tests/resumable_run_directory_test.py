"""`kbert.runs.ResumableRunDirectory`: a staged run that a later run continues after a kill."""

import json
import os
import socket
import subprocess
import sys

import pytest

from kbert.partial_directories import OWNER_FILE, abandoned, process_start_time
from kbert.runs import ResumableRunDirectory, interrupted_runs

SETTINGS = {"objective": "masked", "steps": 10}


def _dead_pid():
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def _partial(tmp_path, name, owner, settings=SETTINGS):
    """A resumable run's partial directory, as `claim` and `ResumableRunDirectory` write it;
    `owner`: a pid, or the record of a run that gave it up."""
    path = tmp_path / f".out.partial-{name}"
    path.mkdir()
    if isinstance(owner, int):
        owner = {"pid": owner, "host": socket.gethostname(), "started": process_start_time(owner)}
    (path / OWNER_FILE).write_text(json.dumps(owner))
    (path / "resume.json").write_text(json.dumps({"settings": settings}))
    return path


def test_only_partials_of_dead_resumable_runs_are_interrupted_ones(tmp_path):
    dead = _partial(tmp_path, "dead", _dead_pid())
    os.utime(dead, (1, 1))
    released = _partial(tmp_path, "released", {"released": True, "host": socket.gethostname()})
    _partial(tmp_path, "alive", os.getpid())  # a run still writing
    _partial(tmp_path, "elsewhere", {"pid": 1, "host": "another-host"})  # kbert cannot see it
    (tmp_path / ".out.partial-plain").mkdir()  # a staged run that is not resumable
    garbled = _partial(tmp_path, "garbled", _dead_pid())
    (garbled / "resume.json").write_text("{not json")
    (tmp_path / ".other.partial-dead").mkdir()
    assert interrupted_runs(tmp_path / "out") == [(released, SETTINGS), (dead, SETTINGS)]
    assert interrupted_runs(tmp_path / "nowhere" / "out") == []


def test_a_new_run_is_staged_marked_and_moved_into_place_without_its_marker(tmp_path):
    with ResumableRunDirectory(tmp_path / "out", SETTINGS) as staged:
        state = json.loads((staged.path / "resume.json").read_text())
        assert state == {"settings": SETTINGS} and not staged.resumed
        assert json.loads((staged.path / OWNER_FILE).read_text())["pid"] == os.getpid()
        assert interrupted_runs(tmp_path / "out") == []  # its owner writes it
        (staged.path / "model.keras").write_text("model")
        staged.commit()
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["model.keras"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_resume_adopts_the_newest_dead_run_and_keeps_it_when_the_block_fails(tmp_path):
    old = _partial(tmp_path, "old", _dead_pid())
    newest = _partial(tmp_path, "new", _dead_pid())
    os.utime(old, (1, 1))
    (newest / "checkpoint").write_text("state")
    staged = ResumableRunDirectory(tmp_path / "out", SETTINGS, resume=True)
    assert staged.resumable_path() == newest
    with pytest.raises(RuntimeError), staged:
        assert staged.resumed and staged.path == newest
        raise RuntimeError("killed by a bug")
    assert (newest / "checkpoint").read_text() == "state"  # kept for another try
    assert json.loads((newest / OWNER_FILE).read_text())["released"] is True
    assert not abandoned(newest)[0]  # a cleanup by another run keeps it
    with ResumableRunDirectory(tmp_path / "out", SETTINGS, resume=True) as staged:
        assert staged.path == newest
        staged.commit()
    assert (tmp_path / "out" / "checkpoint").is_file() and old.is_dir()


def test_resume_refuses_a_run_started_with_other_settings_and_starts_anew_without_one(tmp_path):
    _partial(tmp_path, "dead", _dead_pid(), {**SETTINGS, "steps": 20})
    staged = ResumableRunDirectory(tmp_path / "out", SETTINGS, resume=True)
    with pytest.raises(ValueError, match=r"other settings \(steps: 20 then, 10 now\)"):
        staged.resumable_path()
    other = tmp_path / "other"
    other.mkdir()
    with ResumableRunDirectory(other / "out", SETTINGS, resume=True) as staged:
        assert not staged.resumed and staged.path.parent == other
    assert sorted(p.name for p in other.iterdir()) == []  # a new run's partial is removed


def test_a_partial_whose_lock_is_held_is_not_interrupted_even_with_a_dead_pid(tmp_path):
    import fcntl

    held = _partial(tmp_path, "held", _dead_pid())  # a reused pid's run, say
    descriptor = os.open(held, os.O_RDONLY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert interrupted_runs(tmp_path / "out") == []
    finally:
        os.close(descriptor)
    assert interrupted_runs(tmp_path / "out") == [(held, SETTINGS)]
    with ResumableRunDirectory(tmp_path / "out", SETTINGS, resume=True) as staged:
        assert staged.resumed and interrupted_runs(tmp_path / "out") == []  # held while writing
