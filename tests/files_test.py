import os
import stat

import pytest

from kbert.files import atomic_path, atomic_write_text, new_directory


def test_the_file_appears_whole_with_ordinary_permissions(tmp_path):
    path = atomic_write_text(tmp_path / "deep" / "record.json", "{}\n")
    assert path.read_text() == "{}\n"
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask  # not mkstemp's 0600
    assert sorted(p.name for p in path.parent.iterdir()) == ["record.json"]


def test_a_failed_writer_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "best.keras"
    path.write_text("previous run")
    with pytest.raises(RuntimeError, match="disk full"):
        with atomic_path(path) as temporary:
            assert temporary.parent == tmp_path and temporary.name.startswith(".best.keras.")
            assert temporary.suffix == ".keras"  # Keras picks the format by the extension
            temporary.write_text("half")
            raise RuntimeError("disk full")
    assert path.read_text() == "previous run"
    assert [p.name for p in tmp_path.iterdir()] == ["best.keras"]


def test_two_writers_get_their_own_temporaries(tmp_path):
    path = tmp_path / "figure.png"
    with atomic_path(path) as first, atomic_path(path) as second:
        assert first != second
        first.write_text("one")
        second.write_text("two")
    assert path.read_text() == "one"  # the outer block finished last


def test_replace_directory_keeps_the_old_one_until_the_new_one_is_in(tmp_path):
    from kbert.files import replace_directory, restore_interrupted_directory

    target, staging = tmp_path / "model", tmp_path / ".model.partial"
    target.mkdir()
    (target / "weights").write_text("old")
    staging.mkdir()
    (staging / "weights").write_text("new")
    assert replace_directory(staging, target) == target
    assert (target / "weights").read_text() == "new" and not staging.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]  # the old one deleted
    # A kill between the two renames leaves the old directory aside; it is put back.
    aside = tmp_path / ".model.old-0123456789ab"
    target.rename(aside)
    restore_interrupted_directory(target)
    assert (target / "weights").read_text() == "new" and not aside.exists()
    restore_interrupted_directory(target)  # nothing to do when the target exists
    # An empty directory at the target is simply replaced; so is no directory at all.
    empty, other = tmp_path / "empty", tmp_path / ".empty.partial"
    empty.mkdir()
    other.mkdir()
    (other / "f").write_text("x")
    replace_directory(other, empty)
    assert (empty / "f").read_text() == "x"


def test_a_new_directory_is_published_whole_and_never_replaces(tmp_path):
    target = tmp_path / "models" / "1"
    with new_directory(target) as temporary:
        (open(os.path.join(temporary, "saved_model.pb"), "w")).close()
    assert sorted(os.listdir(target)) == ["saved_model.pb"]
    assert os.listdir(tmp_path / "models") == ["1"]  # no temporary left

    # A failing writer leaves nothing; a directory that appeared meanwhile is kept.
    with pytest.raises(RuntimeError), new_directory(tmp_path / "models" / "2"):
        raise RuntimeError("writer failed")
    with pytest.raises(FileExistsError), new_directory(target) as temporary:
        (open(os.path.join(temporary, "other.pb"), "w")).close()
    assert sorted(os.listdir(tmp_path / "models")) == ["1"]
    assert sorted(os.listdir(target)) == ["saved_model.pb"]

    # An empty directory is replaced only when asked.
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileExistsError), new_directory(tmp_path / "empty"):
        pass
    with new_directory(tmp_path / "empty", replace_empty=True) as temporary:
        (open(os.path.join(temporary, "module.pb"), "w")).close()
    assert os.listdir(tmp_path / "empty") == ["module.pb"]


def test_a_new_directory_is_claimed_and_removes_the_abandoned_ones_of_its_target(tmp_path, capsys):
    import json
    import subprocess
    import sys
    from pathlib import Path

    from kbert.partial_directories import OWNER_FILE, abandoned

    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    pid = int(done.stdout)
    dead = tmp_path / f".1.partial-{pid}-0123456789ab"  # a kill -9's leftover
    dead.mkdir()
    (dead / "saved_model.pb").write_bytes(b"half")
    with new_directory(tmp_path / "1") as temporary:
        assert abandoned(temporary) == (False, "its process still writes it")
        assert json.loads((Path(temporary) / OWNER_FILE).read_text())["pid"] == os.getpid()
        (Path(temporary) / "saved_model.pb").write_bytes(b"whole")
    assert capsys.readouterr().err == (
        f"kbert: removed unfinished {dead}: process {pid}, which wrote it, is no longer running\n"
    )
    assert sorted(os.listdir(tmp_path)) == ["1"]
    assert os.listdir(tmp_path / "1") == ["saved_model.pb"]  # no owner record published
