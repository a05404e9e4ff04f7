"""The run directory: its config read back (this format and format 1), and staging that loses
nothing the user had (pure Python, fast tier)."""

import json
import os
import stat

import pytest

from kbert.runs import (
    RUN_MARKER,
    DataSettings,
    RunConfig,
    StagedRunDirectory,
    check_output_dir,
    read_config,
)


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


def test_a_committed_run_has_the_modes_of_the_users_umask(tmp_path):
    # `tempfile.mkdtemp` makes 0700 directories: a run read by another user (a server, a
    # course's shared folder) would be refused.
    umask = os.umask(0o022)
    try:
        with StagedRunDirectory(tmp_path / "run") as staged:
            staged.commit()
    finally:
        os.umask(umask)
    assert stat.S_IMODE((tmp_path / "run").stat().st_mode) == 0o755


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


def test_run_config_round_trips_through_its_flat_json():
    config = RunConfig(
        task_family="token",
        task="conll2003",
        settings={"epochs": 2, "learning_rate": 3e-4, "data_dir": "/data", "seed": 1},
        label_names=["O", "B-PER"],
        train_examples=10,
        sources={"all": "conll2003"},
        versions={"keras": "3"},
    )
    data = json.loads(json.dumps(config.to_json()))
    assert data[RUN_MARKER] is True and data["epochs"] == 2 and data["task"] == "conll2003"
    assert RunConfig.from_json(data) == config
    assert config.setting("epochs") == 2 and config.setting("stride", 128) == 128
    assert config.data_settings(data_dir="/other") == DataSettings(
        task="conll2003", data_dir="/other", seed=1
    )


def test_read_config_reads_format_1_classification_and_token_runs(tmp_path):
    classification = tmp_path / "classification"
    classification.mkdir()
    (classification / "config.json").write_text(
        json.dumps({"task": "rte", "epochs": 3, "num_classes": 2, "versions": {}})
    )
    (classification / "labels.json").write_text('["entailment", "not_entailment"]')
    config = read_config(classification)
    assert (config.run_format, config.task_family, config.task) == (1, "classification", "rte")
    assert config.label_names == ("entailment", "not_entailment")
    assert config.is_pair is None and config.settings == {"epochs": 3}
    token = tmp_path / "token"
    token.mkdir()
    (token / "config.json").write_text(
        json.dumps(
            {
                "task": "squad",
                "task_family": "token",
                "tag_names": [],
                "source": "dev",
                "stride": 64,
            }
        )
    )
    config = read_config(token)
    assert (config.task_family, config.sources, config.setting("stride")) == (
        "token",
        {"all": "dev"},
        64,
    )


def test_a_directory_that_is_no_run_is_named_with_what_it_lacks(tmp_path):
    with pytest.raises(ValueError, match=r"not a finished kbert run directory: it lacks config"):
        read_config(tmp_path)
    (tmp_path / "config.json").write_text("{")
    with pytest.raises(ValueError, match=r"config.json: not a valid JSON run config"):
        read_config(tmp_path)
    (tmp_path / "config.json").write_text('{"learning_rate": 1}')
    with pytest.raises(ValueError, match="names no task; is it a kbert run"):
        read_config(tmp_path)
    with pytest.raises(ValueError, match="task_family must be one of"):
        RunConfig(task_family="vision", task="x")
    with pytest.raises(ValueError, match=r"settings \['task'\] repeat RunConfig fields"):
        RunConfig(task_family="token", task="squad", settings={"task": "squad"})
