"""benchmarks/redate_keras_file: a re-trained archive given back the bytes a record pinned."""

import datetime
import hashlib
import json
import zipfile

import keras
import numpy as np
import pytest

from benchmarks import redate_keras_file


def _saved(path, value):
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.set_weights([np.full((2, 1), value, "float32"), np.zeros(1, "float32")])
    model.save(path)
    return path.read_bytes()


def test_the_save_time_that_gives_the_pinned_bytes_is_found_and_written(tmp_path):
    data = _saved(tmp_path / "again.keras", 0.5)
    moment = datetime.datetime(2026, 11, 30, 15, 10, 7)
    # The pinned run saved the same weights at `moment`, its weights entry dated 2 s earlier.
    pinned = list(redate_keras_file.candidates(data, moment))[1]
    assert pinned != data and len(pinned) == len(data)
    archive = zipfile.ZipFile(tmp_path / "again.keras")
    assert archive.read("model.weights.h5")  # still a readable archive after patching
    digest = hashlib.sha256(pinned).hexdigest()
    start, end = moment - datetime.timedelta(seconds=30), moment + datetime.timedelta(seconds=30)
    assert redate_keras_file.find(data, digest, start, end) == pinned
    path = tmp_path / "again.keras"
    assert (
        redate_keras_file.main(
            [str(path), "--sha256", digest, "--from", start.isoformat(), "--to", end.isoformat()]
        )
        == 0
    )
    assert path.read_bytes() == pinned
    assert keras.saving.load_model(path).get_weights()[0][0, 0] == 0.5
    # Other weights: no save time gives the pinned bytes, and the file is left as it was.
    other = tmp_path / "other.keras"
    before = _saved(other, 0.25)
    assert redate_keras_file.find(before, digest, start, end) is None
    flags = [str(other), "--sha256", digest, "--from", start.isoformat(), "--to", end.isoformat()]
    assert redate_keras_file.main(flags) == 1
    assert other.read_bytes() == before


def test_an_archive_keras_did_not_write_is_refused(tmp_path, capsys):
    path = tmp_path / "plain.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("notes.txt", "x" * 100)
    with pytest.raises(SystemExit):
        redate_keras_file.main([str(path), "--sha256", "0" * 64, "--from", "2026-11-30T00:00"])
    with pytest.raises(SystemExit):
        redate_keras_file.main(
            [str(path), "--sha256", "0" * 64, "--from", "2026-11-30T00:00", "--to", "2026-11-30"]
        )
    assert "holds no metadata.json" in capsys.readouterr().err


def test_a_record_s_saved_archives_are_redated_over_its_run(tmp_path, capsys):
    data = _saved(tmp_path / "again.keras", 0.5)
    moment = datetime.datetime(2026, 11, 30, 15, 10, 7)
    pinned = next(redate_keras_file.candidates(data, moment))
    root = tmp_path / "worktree"
    (root / "saved_models" / "m").mkdir(parents=True)
    (root / "saved_models" / "m" / "encoder.keras").write_bytes(data)
    record = tmp_path / "lab.json"
    digest = hashlib.sha256(pinned).hexdigest()
    results = {"part": {"saved_files": {"saved_models/m/encoder.keras": digest, "v.txt": "0"}}}
    # The run ended 20 s after the save and took 40 s.
    record.write_text(
        json.dumps({"date": "2026-11-30T15:10:27+00:00", "wall_seconds": 40, "results": results})
    )
    flags = ["--record", str(record), "--root", str(root)]
    assert redate_keras_file.main(flags) == 0
    assert (root / "saved_models" / "m" / "encoder.keras").read_bytes() == pinned
    assert redate_keras_file.main(flags) == 0  # a second call finds it done
    assert "already the pinned bytes" in capsys.readouterr().out
    record.write_text(json.dumps({"results": results}))
    with pytest.raises(SystemExit):
        redate_keras_file.main(flags)
    assert "needs 'date' and 'wall_seconds'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        redate_keras_file.main([*flags, str(root / "x.keras"), "--sha256", digest])
    assert "give either --record" in capsys.readouterr().err
