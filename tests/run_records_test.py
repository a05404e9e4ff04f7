import json

import pytest

from kbert.run_records import (
    CPU_FEATURES,
    PACKAGES,
    cpu_description,
    machine_description,
    package_versions,
    write_run_record,
)


def test_a_record_holds_the_results_and_how_they_were_made(tmp_path):
    path = tmp_path / "results" / "lab.json"
    record = write_run_record(
        path,
        {"f1": 70.5, "sets": {"ALL": 7253}},
        12.345,
        argv=["labs/lab.py", "--seed", "1", "a b"],
    )
    assert json.loads(path.read_text()) == record
    assert record["results"] == {"f1": 70.5, "sets": {"ALL": 7253}}
    assert record["command"] == "python labs/lab.py --seed 1 'a b'"
    assert record["wall_seconds"] == 12.3
    assert len(record["commit"]) == 40 and isinstance(record["dirty"], bool)
    assert record["date"].endswith("+00:00")
    assert record["machine"]["cores"] >= 1 and record["machine"]["cpu"]
    assert [p.name for p in path.parent.iterdir()] == ["lab.json"]  # no temporary left


def test_bad_results_leave_the_previous_record(tmp_path):
    path = tmp_path / "lab.json"
    write_run_record(path, {"f1": 1.0}, 1.0, argv=["lab.py"])
    before = path.read_text()
    with pytest.raises(ValueError, match="results must be a dict"):
        write_run_record(path, [1.0], 1.0)
    with pytest.raises(ValueError, match="results must be JSON-serializable"):
        write_run_record(path, {"f1": object()}, 1.0)
    assert path.read_text() == before
    assert [p.name for p in tmp_path.iterdir()] == ["lab.json"]


def test_machine_description_names_the_cpu_and_memory():
    machine = machine_description()
    assert set(machine) == {"cpu", "cpu_features", "cores", "memory_gib", "platform", "python"}
    assert machine["memory_gib"] is None or machine["memory_gib"] > 0
    assert set(machine["cpu_features"]) <= set(CPU_FEATURES)


def test_the_cpu_features_come_from_its_flags_and_the_packages_from_their_metadata(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(
        "model name\t: Some Xeon\nflags\t\t: fpu avx2 avx512f avx512_bf16 amx_bf16\n"
    )
    assert cpu_description(cpuinfo) == (
        "Some Xeon",
        {"fpu", "avx2", "avx512f", "avx512_bf16", "amx_bf16"},
    )
    assert cpu_description(tmp_path / "missing")[1] == set()
    versions = package_versions()
    assert {"keras", "numpy"} <= set(versions) and set(versions) <= set(PACKAGES)
    record = write_run_record(tmp_path / "record.json", {"accuracy": 0.5}, 1.0, argv=["x"])
    assert record["software"] == versions


def test_the_command_is_recorded_as_typed(tmp_path):
    """`python -m benchmarks.x` stays a module run; a script path is relative to the repository."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    script = (
        "import sys; from kbert.run_records import write_run_record; "
        "print(write_run_record(sys.argv[1], {'a': 1}, 1.0)['command'])"
    )
    module = tmp_path / "recorder_probe.py"
    module.write_text(script)
    runs = {
        "module": [sys.executable, "-m", "recorder_probe", str(tmp_path / "m.json")],
        "script": [sys.executable, str(root / "tests" / "recorder_probe.py"), "x.json"],
    }
    (root / "tests" / "recorder_probe.py").write_text(script)
    try:
        env = {"PYTHONPATH": f"{tmp_path}:{root}", "PATH": "/usr/bin:/bin"}
        out = {
            name: subprocess.run(
                command, capture_output=True, text=True, env=env, cwd=tmp_path, check=True
            ).stdout.strip()
            for name, command in runs.items()
        }
    finally:
        (root / "tests" / "recorder_probe.py").unlink()
    assert out["module"] == f"python -m recorder_probe {tmp_path / 'm.json'}"
    assert out["script"] == "python tests/recorder_probe.py x.json"


def test_the_record_argument_checks_its_path_and_writes_on_request(tmp_path, capsys):
    import argparse

    from kbert.run_records import add_record_argument, record_if_requested

    parser = argparse.ArgumentParser(prog="lab")
    add_record_argument(parser)
    for bad in (str(tmp_path), str(tmp_path / "record.txt")):
        with pytest.raises(SystemExit):
            parser.parse_args(["--record", bad])
        assert "must name a .json file to write" in capsys.readouterr().err
    assert record_if_requested(parser.parse_args([]), {"acc": 1.0}) is None
    path = tmp_path / "lab.json"
    args = parser.parse_args(["--record", str(path)])
    record = record_if_requested(args, {"acc": 0.5})
    assert json.loads(path.read_text()) == record and record["results"] == {"acc": 0.5}
    assert record["wall_seconds"] >= 0


def test_a_record_among_the_evidence_is_refused_from_a_dirty_tree(tmp_path, monkeypatch, capsys):
    import argparse

    from kbert import run_records

    monkeypatch.setattr(run_records, "_CODE_VERSION", {"commit": "0123456789abc", "dirty": True})
    parser = argparse.ArgumentParser()
    run_records.add_record_argument(parser)
    with pytest.raises(SystemExit):
        parser.parse_args(["--record", str(run_records.EVIDENCE_DIR / "lab.json")])
    error = capsys.readouterr().err
    assert "the course's evidence" in error and "0123456789" in error and "commit them" in error
    elsewhere = str(tmp_path / "lab.json")  # a record outside docs/results/ is allowed
    assert parser.parse_args(["--record", elsewhere]).record == elsewhere
    monkeypatch.setattr(run_records, "_CODE_VERSION", {"commit": "0123456789abc", "dirty": False})
    path = str(run_records.EVIDENCE_DIR / "lab.json")
    assert parser.parse_args(["--record", path]).record == path
