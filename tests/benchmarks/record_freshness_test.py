"""benchmarks/record_freshness on a throw-away repository: a lab, the package module it imports,
a module it does not, and a data file it reads."""

import hashlib
import json
import subprocess

import pytest

from benchmarks.record_freshness import (
    InputPlaces,
    code_files,
    expected_command,
    nested_dicts,
    saves_missing,
    stale_reasons,
)

LAB = "from pkg import helper\nfrom pkg.lazy import Thing\nimport pkg\nprint(pkg.Lazy)\n"
INIT = '_HOMES = {"Lazy": "pkg.far", "Other": "pkg.unused_lazy"}\n'
ENTRY = ("lab50_small", "lab50_demo", ("--size", "3"))


def _git(*arguments, cwd):
    return subprocess.run(
        ["git", *arguments], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


def _commit(root, message):
    _git("add", ".", cwd=root)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message, cwd=root)
    return _git("rev-parse", "HEAD", cwd=root)


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    for folder in ("labs", "pkg", "docs/results", "data"):
        (root / folder).mkdir(parents=True)
    (root / "labs" / "lab50_demo.py").write_text(LAB)
    (root / "pkg" / "__init__.py").write_text(INIT)
    (root / "pkg" / "helper.py").write_text("from .deep import VALUE\n")
    (root / "pkg" / "deep.py").write_text("VALUE = 1\n")
    (root / "pkg" / "lazy.py").write_text("Thing = 1\n")
    (root / "pkg" / "far.py").write_text("Lazy = 1\n")
    (root / "pkg" / "unused_lazy.py").write_text("Other = 1\n")
    (root / "pkg" / "unused.py").write_text("X = 1\n")
    _git("init", "-q", cwd=root)
    return root


def _record(root, commit, data, **changes):
    digest = hashlib.sha256((data / "train.txt").read_bytes()).hexdigest()
    record = {
        "command": expected_command(*ENTRY),
        "commit": commit,
        "dirty": False,
        "results": {},
        "inputs": {"$KBERT_DATA_DIR/train.txt": digest},
        **changes,
    }
    path = root / "docs" / "results" / f"{ENTRY[0]}.json"
    path.write_text(json.dumps(record))
    return path


def test_the_code_of_a_program_is_what_it_imports_followed_through(repo):
    assert code_files("lab50_demo", repo) == [
        "labs/lab50_demo.py",
        "pkg/__init__.py",
        "pkg/deep.py",  # through a relative import in pkg/helper.py
        "pkg/far.py",  # `pkg.Lazy`, a name the package imports on first use
        "pkg/helper.py",
        "pkg/lazy.py",
    ]
    with pytest.raises(ValueError, match="no program 'lab51_none'"):
        code_files("lab51_none", repo)
    assert expected_command(*ENTRY) == (
        "python labs/lab50_demo.py --size 3 --record docs/results/lab50_small.json"
    )
    assert expected_command("serving", "benchmarks.serving", ()) == (
        "python -m benchmarks.serving --record docs/results/serving.json"
    )


@pytest.fixture
def data(tmp_path):
    """A data directory with the one file the record pins."""
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "train.txt").write_text("a\nb\n")
    return folder


def test_a_record_stands_until_its_code_or_its_inputs_change(repo, data):
    made_at = _commit(repo, "labs")
    record = _record(repo, made_at, data)

    def reasons():
        return stale_reasons(ENTRY, record, repo, InputPlaces(repo, data))

    assert reasons() == []
    # Code the lab does not import changes: the record still stands.
    (repo / "pkg" / "unused.py").write_text("X = 2\n")
    (repo / "pkg" / "unused_lazy.py").write_text("Other = 2\n")
    _commit(repo, "unrelated")
    assert reasons() == []
    # A module two imports away changes: stale, and the reason names it.
    (repo / "pkg" / "deep.py").write_text("VALUE = 2\n")
    _commit(repo, "deep")
    assert reasons() == [f"code changed since {made_at[:10]}: pkg/deep.py"]
    record = _record(repo, _git("rev-parse", "HEAD", cwd=repo), data)
    assert reasons() == []
    # A pinned input with other content, or gone.
    (data / "train.txt").write_text("a\nc\n")
    assert reasons() == ["input changed: $KBERT_DATA_DIR/train.txt"]
    (data / "train.txt").unlink()
    assert reasons() == ["input missing: $KBERT_DATA_DIR/train.txt"]
    assert stale_reasons(ENTRY, record, repo, InputPlaces(repo, None)) == [
        "input missing: $KBERT_DATA_DIR/train.txt"
    ]


def test_each_way_a_record_falls_short_is_named(repo, data):
    commit = _commit(repo, "labs")
    entry_path = repo / "docs" / "results" / f"{ENTRY[0]}.json"
    assert stale_reasons(ENTRY, entry_path, repo, InputPlaces(repo, data)) == ["no record"]
    entry_path.write_text("{not json")
    assert "is not JSON" in stale_reasons(ENTRY, entry_path, repo, InputPlaces(repo, data))[0]
    _record(repo, commit, data, dirty=True, command="python labs/lab50_demo.py")
    assert stale_reasons(ENTRY, entry_path, repo, InputPlaces(repo, data)) == [
        "made with uncommitted changes (or does not say)",
        "made by another command: 'python labs/lab50_demo.py', now "
        "'python labs/lab50_demo.py --size 3 --record docs/results/lab50_small.json'",
    ]
    _record(repo, "f" * 40, data)
    assert stale_reasons(ENTRY, entry_path, repo, InputPlaces(repo, data)) == [
        "commit ffffffffff is not in this checkout's history"
    ]
    record = json.loads(entry_path.read_text())
    del record["inputs"]
    record["commit"] = commit
    entry_path.write_text(json.dumps(record))
    # A program that does not watch its inputs: its record stands on its code and command.
    assert stale_reasons(ENTRY, entry_path, repo, InputPlaces(repo, data)) == []


def test_a_grid_s_choice_is_judged_where_the_next_run_reads_it(repo, data, tmp_path):
    """A choice record pinned in one checkout (relative or absolute) is checked in `choices`;
    a reader stands no longer once a grid it did not read is recorded after it."""
    (repo / "labs" / "lab50_demo.py").write_text(LAB + "import kbert.train.chosen_on_validation\n")
    (repo / "kbert" / "train").mkdir(parents=True)
    (repo / "kbert" / "__init__.py").write_text("")
    (repo / "kbert" / "train" / "__init__.py").write_text("")
    (repo / "kbert" / "train" / "chosen_on_validation.py").write_text("")
    record = _record(repo, _commit(repo, "labs"), data, date="2026-11-28T10:00:00")
    choices = tmp_path / "choices"
    choices.mkdir()
    places = InputPlaces(repo, data, choices=choices, choice_records=("grid_a", "grid_b"))
    grid_a = {"date": "2026-11-28T09:00:00", "results": {}}
    (choices / "grid_a.json").write_text(json.dumps(grid_a))
    digest = hashlib.sha256((choices / "grid_a.json").read_bytes()).hexdigest()
    for label in ("docs/results/grid_a.json", "/elsewhere/docs/results/grid_a.json"):
        pinned = json.loads(record.read_text())
        pinned["inputs"] = {**pinned["inputs"], label: digest}
        record.write_text(json.dumps(pinned))
        assert stale_reasons(ENTRY, record, repo, places) == []
        (choices / "grid_a.json").write_text(json.dumps({**grid_a, "results": {"x": 1}}))
        assert stale_reasons(ENTRY, record, repo, places) == [f"input changed: {label}"]
        (choices / "grid_a.json").write_text(json.dumps(grid_a))
        del pinned["inputs"][label]
        record.write_text(json.dumps(pinned))
    # A grid that read its own earlier record pinned the version it overwrote: not an input.
    pinned = json.loads(record.read_text())
    pinned["inputs"] = {**pinned["inputs"], f"/elsewhere/docs/results/{ENTRY[0]}.json": "0" * 64}
    record.write_text(json.dumps(pinned))
    assert stale_reasons(ENTRY, record, repo, places) == []
    # grid_b did not exist when the record was made (the reader fell back); now it does.
    (choices / "grid_b.json").write_text(json.dumps({"date": "2026-11-28T11:00:00"}))
    assert stale_reasons(ENTRY, record, repo, places)[-1] == (
        "grid_b.json was recorded after it (its choice not read then)"
    )
    # A grid's own record (a choice record itself, in the course's order) reads only the grids
    # before it: grid_b, after it in that order, recorded later, does not make it stale.
    in_order = InputPlaces(repo, data, choices=choices, choice_records=(ENTRY[0], "grid_b"))
    assert stale_reasons(ENTRY, record, repo, in_order) == []
    before = InputPlaces(repo, data, choices=choices, choice_records=("grid_b", ENTRY[0]))
    assert stale_reasons(ENTRY, record, repo, before)[-1].startswith("grid_b.json was recorded")


def test_saved_models_a_record_names_must_still_be_there(tmp_path):
    record = tmp_path / "lab01.json"
    results = {"causal": {"saved_to": "saved/lab01_causal"}, "masked": {"saved_to": "saved/m"}}
    record.write_text(json.dumps({"results": results}))
    assert saves_missing(record, tmp_path) == ["saved/lab01_causal", "saved/m"]
    (tmp_path / "saved" / "lab01_causal").mkdir(parents=True)
    assert saves_missing(record, tmp_path) == ["saved/m"]  # one of two is not enough
    (tmp_path / "saved" / "m").mkdir()
    assert saves_missing(record, tmp_path) == []
    assert saves_missing(tmp_path / "absent.json", tmp_path) == []


def test_nested_dicts_reach_every_dict_through_dicts_and_lists():
    inner, listed = {"saved_to": "a"}, {"saved_files": {"b.keras": "00"}}
    results = {"causal": inner, "runs": [[listed], 3, "x"], "n": None}
    found = nested_dicts(results)
    # The saved_files mapping is a dict too: four in all.
    assert len(found) == 4 and all(any(d is f for f in found) for d in (results, inner, listed))
    assert nested_dicts([1, "a"]) == [] and nested_dicts(None) == []


def test_a_grid_s_own_rows_gone_with_its_machine_leave_its_record_standing(repo, data):
    entry = ("lab50_grid", "lab50_demo", ("--run-dir", "runs/lab50_grid"))
    rows = repo / "runs" / "lab50_grid" / "results.jsonl"
    rows.parent.mkdir(parents=True)
    rows.write_text('{"run": 0}\n')
    path = repo / "docs" / "results" / "lab50_grid.json"
    train = data / "train.txt"
    path.write_text(
        json.dumps(
            {
                "command": expected_command(*entry),
                "commit": _commit(repo, "grid"),
                "dirty": False,
                "inputs": {
                    "runs/lab50_grid/results.jsonl": hashlib.sha256(rows.read_bytes()).hexdigest(),
                    "$KBERT_DATA_DIR/train.txt": hashlib.sha256(train.read_bytes()).hexdigest(),
                },
            }
        )
    )

    def reasons():
        return stale_reasons(entry, path, repo, InputPlaces(repo, data))

    assert reasons() == []
    rows.write_text('{"run": 0}\n{"run": "another"}\n')  # rows other than the record's
    assert reasons() == ["input changed: runs/lab50_grid/results.jsonl"]
    rows.unlink()  # a fresh machine: the record holds the rows
    assert reasons() == []
    train.unlink()  # any other input gone still makes it stale
    assert reasons() == ["input missing: $KBERT_DATA_DIR/train.txt"]
