"""The staged run directory: nothing the user had is lost (pure Python, fast tier)."""

import json
import os

import pytest

from kbert.cli.run_directory import RUN_MARKER, StagedRunDirectory, check_output_dir


def _kbert_run(path, metrics="old"):
    path.mkdir(parents=True, exist_ok=True)
    (path / "config.json").write_text(json.dumps({RUN_MARKER: True, "task": "files"}))
    (path / "metrics.json").write_text(metrics)
    return path


def test_check_output_dir_accepts_new_and_empty_directories(tmp_path):
    assert check_output_dir(tmp_path / "new", overwrite=False) == tmp_path / "new"
    assert not (tmp_path / "new").exists()  # nothing is created by the check
    (tmp_path / "empty").mkdir()
    assert check_output_dir(tmp_path / "empty", overwrite=False) == tmp_path / "empty"
    run = _kbert_run(tmp_path / "run")
    assert check_output_dir(run, overwrite=True) == run


def test_check_output_dir_refuses_what_it_must_not_replace(tmp_path):
    (tmp_path / "file").write_text("mine")
    with pytest.raises(ValueError, match=r"--output-dir '.*file' is a file"):
        check_output_dir(tmp_path / "file", overwrite=True)
    run = _kbert_run(tmp_path / "run")
    with pytest.raises(ValueError, match="exists and is not empty; .* pass --overwrite"):
        check_output_dir(run, overwrite=False)
    (run / "notes.txt").write_text("my notes")
    with pytest.raises(ValueError, match=r"holds files kbert did not write \(notes.txt\)"):
        check_output_dir(run, overwrite=True)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "config.json").write_text(json.dumps({"learning_rate": 1}))
    with pytest.raises(ValueError, match="is not a kbert run directory"):
        check_output_dir(mine, overwrite=True)
    # A run written before the marker existed (task + versions) may still be replaced.
    (mine / "config.json").write_text(json.dumps({"task": "trec", "versions": {}}))
    assert check_output_dir(mine, overwrite=True) == mine


def test_check_output_dir_refuses_an_unwritable_folder(tmp_path, monkeypatch):
    # Root may write anywhere, so the permission answer is what the test controls.
    monkeypatch.setattr(os, "access", lambda path, mode: str(path) != str(tmp_path))
    with pytest.raises(ValueError, match=r"its folder '.*' is not writable"):
        check_output_dir(tmp_path / "run", overwrite=False)


def test_a_committed_run_replaces_the_old_one_and_leaves_nothing_beside_it(tmp_path):
    run = _kbert_run(tmp_path / "run")
    with StagedRunDirectory(run) as staged:
        assert staged.path.parent == tmp_path and staged.path.name.startswith(".run.partial-")
        (staged.path / "metrics.json").write_text("new")
        assert (run / "metrics.json").read_text() == "old"  # untouched until commit
        staged.commit()
    assert (run / "metrics.json").read_text() == "new" and not (run / "config.json").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


def test_a_failed_run_keeps_the_old_one_and_removes_its_partial_files(tmp_path):
    run = _kbert_run(tmp_path / "run")
    with pytest.raises(RuntimeError, match="training failed"):
        with StagedRunDirectory(run) as staged:
            (staged.path / "metrics.json").write_text("new")
            raise RuntimeError("training failed")
    assert (run / "metrics.json").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


def test_a_new_destination_and_an_empty_one_are_filled(tmp_path):
    for name in ("fresh", "empty"):
        if name == "empty":
            (tmp_path / name).mkdir()
        with StagedRunDirectory(tmp_path / name) as staged:
            (staged.path / "metrics.json").write_text(name)
            staged.commit()
        assert (tmp_path / name / "metrics.json").read_text() == name


def test_a_run_left_aside_by_a_kill_between_the_renames_is_put_back(tmp_path):
    old = _kbert_run(tmp_path / ".run.old-0123456789ab")
    with StagedRunDirectory(tmp_path / "run") as staged:
        assert (tmp_path / "run" / "metrics.json").read_text() == "old"
        assert not old.exists()
        (staged.path / "metrics.json").write_text("new")
        staged.commit()
    assert (tmp_path / "run" / "metrics.json").read_text() == "new"
