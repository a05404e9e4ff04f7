"""benchmarks/record_labs on a throw-away repository with two fake labs."""

import json
import os
import subprocess

import pytest

from benchmarks import record_labs

GOOD = """import argparse, json, os
parser = argparse.ArgumentParser()
parser.add_argument("--record")
args = parser.parse_args()
open(args.record.replace(".json", "_curve.png"), "wb").write(b"png")
with open(args.record, "w") as f:
    json.dump({"date": "2026-11-26T00:00:00", "results": {"pythonpath": os.environ["PYTHONPATH"], "choices": os.environ["KBERT_CHOICES_DIR"]}}, f)
"""
BAD = "import sys\nsys.exit(3)\n"


def _git(*arguments, cwd):
    subprocess.run(["git", *arguments], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    (root / "labs").mkdir(parents=True)
    (root / "docs" / "results").mkdir(parents=True)
    (root / "benchmarks").mkdir()
    (root / "labs" / "lab98_good.py").write_text(GOOD)
    (root / "labs" / "lab99_bad.py").write_text(BAD)
    (root / "docs" / "results" / "README").write_text("records\n")
    _git("init", "-q", cwd=root)
    _git("add", ".", cwd=root)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "labs", cwd=root)
    return root


def test_each_program_runs_in_the_worktree_and_its_record_is_copied(repo, tmp_path, monkeypatch):
    monkeypatch.delenv("PYTHONPATH", raising=False)
    worktree = tmp_path / "records"
    commit = record_labs.prepare_worktree(repo, worktree)
    assert len(commit) == 40 and (worktree / "labs" / "lab98_good.py").is_file()
    rows = record_labs.run_all(["lab99_bad", "lab98_good"], worktree, repo, log=lambda _: None)
    assert [(r["program"], r["status"], r["recorded"]) for r in rows] == [
        ("lab99_bad", 3, False),
        ("lab98_good", 0, True),
    ]
    record = json.loads((repo / "docs" / "results" / "lab98_good.json").read_text())
    assert record["results"]["pythonpath"] == str(worktree.resolve())  # the worktree's code
    # The grids' choices are read where the fresh records are copied, not the worktree's copy.
    assert record["results"]["choices"] == str((repo / "docs" / "results").resolve())
    assert not (repo / "docs" / "results" / "lab99_bad.json").exists()
    assert not (worktree / "docs" / "results" / "lab98_good.json").exists()  # moved, not left
    # The figure the program wrote beside its record travels with it.
    assert (repo / "docs" / "results" / "lab98_good_curve.png").read_bytes() == b"png"
    assert not (worktree / "docs" / "results" / "lab98_good_curve.png").exists()
    progress = (worktree / "runs" / "record_labs" / "progress.txt").read_text().splitlines()
    assert [json.loads(line)["program"] for line in progress] == ["lab99_bad", "lab98_good"]
    assert record_labs.record_dates(repo) == {"lab98_good": "2026-11-26", "lab99_bad": None}


def test_a_worktree_with_changes_or_a_foreign_folder_is_refused(repo, tmp_path):
    worktree = tmp_path / "records"
    record_labs.prepare_worktree(repo, worktree)
    (worktree / "labs" / "lab98_good.py").write_text("# edited\n")
    with pytest.raises(ValueError, match="uncommitted changes"):
        record_labs.prepare_worktree(repo, worktree)
    assert (worktree / "labs" / "lab98_good.py").read_text() == "# edited\n"
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(ValueError, match="not a git worktree"):
        record_labs.prepare_worktree(repo, plain)


def test_the_caller_s_pythonpath_comes_after_the_worktree(repo, tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", "/opt/peers")
    worktree = tmp_path / "records"
    record_labs.prepare_worktree(repo, worktree)
    record_labs.run_all(["lab98_good"], worktree, repo, log=lambda _: None)
    record = json.loads((repo / "docs" / "results" / "lab98_good.json").read_text())
    assert record["results"]["pythonpath"].split(os.pathsep) == [
        str(worktree.resolve()),
        "/opt/peers",
    ]


def test_unknown_programs_are_named():
    with pytest.raises(ValueError, match="no lab 'lab77_nothing'"):
        record_labs.command("lab77_nothing", record_labs.ROOT)
    with pytest.raises(ValueError, match="no benchmark 'benchmarks.nothing'"):
        record_labs.command("benchmarks.nothing", record_labs.ROOT)
    assert record_labs.command("benchmarks.transfer", record_labs.ROOT)[-2:] == [
        "-m",
        "benchmarks.transfer",
    ]


def test_a_committed_record_stays_until_the_new_one_is_written(repo, tmp_path):
    """Re-recording must not delete the committed record first: that made the worktree's
    tracked files differ from the commit, and every re-recorded run said "dirty"."""
    stale = {"date": "2026-01-01T00:00:00", "results": {}}
    (repo / "docs" / "results" / "lab98_good.json").write_text(json.dumps(stale))
    (repo / "docs" / "results" / "lab99_bad.json").write_text(json.dumps(stale))
    _git("add", ".", cwd=repo)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "records", cwd=repo)
    worktree = tmp_path / "records"
    record_labs.prepare_worktree(repo, worktree)
    # As a lab asks `code_version` when it starts: the tracked files' state before any work.
    probe = (
        "import subprocess\n"
        "STATUS = subprocess.run(['git', 'status', '--porcelain', '--untracked-files=no'], "
        "capture_output=True, text=True).stdout\n"
        + GOOD.replace('"results": {', '"results": {"status": STATUS, ')
    )
    (worktree / "labs" / "lab98_good.py").write_text(probe)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "probe", cwd=worktree)
    rows = record_labs.run_all(["lab99_bad", "lab98_good"], worktree, repo, log=lambda _: None)
    assert [r["recorded"] for r in rows] == [False, True]
    record = json.loads((repo / "docs" / "results" / "lab98_good.json").read_text())
    assert record["results"]["status"] == ""  # nothing tracked was missing while it ran
    # The failed program's stale record was not copied; the worktree is clean again.
    assert json.loads((repo / "docs" / "results" / "lab99_bad.json").read_text()) == stale
    assert (
        subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=worktree,
            capture_output=True,
            text=True,
        ).stdout
        == ""
    )


def test_an_untracked_file_the_new_commit_tracks_is_named_not_overwritten(repo, tmp_path):
    worktree = tmp_path / "records"
    record_labs.prepare_worktree(repo, worktree)
    (worktree / "docs" / "results" / "lab98_good.json").write_text("by hand\n")
    (repo / "docs" / "results" / "lab98_good.json").write_text("committed\n")
    _git("add", ".", cwd=repo)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "record", cwd=repo)
    with pytest.raises(ValueError, match="(?s)cannot move to .*lab98_good.json"):
        record_labs.prepare_worktree(repo, worktree)
    assert (worktree / "docs" / "results" / "lab98_good.json").read_text() == "by hand\n"


FLAGGED = """import argparse, json, sys
parser = argparse.ArgumentParser()
parser.add_argument("--record")
parser.add_argument("--size")
args = parser.parse_args()
with open(args.record, "w") as f:
    json.dump({"date": "2026-11-28T00:00:00", "results": {"size": args.size}}, f)
"""


def test_a_plan_entry_runs_with_its_flags_and_keep_skips_what_still_stands(repo, tmp_path):
    (repo / "labs" / "lab97_flagged.py").write_text(FLAGGED)
    _git("add", ".", cwd=repo)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "flags", cwd=repo)
    worktree = tmp_path / "records"
    commit = record_labs.prepare_worktree(repo, worktree)
    plan = [("lab97_small", "lab97_flagged", ("--size", "3")), ("lab99_bad", "lab99_bad", ())]
    rows = record_labs.run_all(plan, worktree, repo, log=lambda _: None)
    assert [(r["record"], r["program"], r["recorded"]) for r in rows] == [
        ("lab97_small", "lab97_flagged", True),
        ("lab99_bad", "lab99_bad", False),
    ]
    record = json.loads((repo / "docs" / "results" / "lab97_small.json").read_text())
    assert record["results"] == {"size": "3"}
    # `keep` is asked just before each entry's turn; a kept entry is not run again.
    asked, lines = [], []
    keep = record_labs.entry_turn(keep=lambda entry: asked.append(entry) or True)
    rows = record_labs.run_all(plan, worktree, repo, log=lines.append, turn=keep)
    assert rows == [] and asked == plan
    progress = worktree / "runs" / "record_labs" / "progress.txt"
    assert len(progress.read_text().splitlines()) == 2  # the first run's rows only
    assert [json.loads(line) for line in lines] == [
        {"record": "lab97_small", "kept": True},
        {"record": "lab99_bad", "kept": True},
    ]
    assert len(commit) == 40


def test_the_course_plan_makes_every_committed_record_once(tmp_path):
    from benchmarks.course import (
        BENCHMARK_NAMES,
        BENCHMARKS,
        BUDGET_60,
        COURSE,
        FOLLOW,
        LEAD,
        RETIRED,
        course,
    )

    names = [name for name, _, _ in course()]
    assert len(names) == len(set(names))
    committed = {path.stem for path in (record_labs.ROOT / "docs" / "results").glob("*.json")}
    # Every record is made by the plan, or retired in favour of one the plan makes; an entry
    # without a record yet is made by the next run.
    assert committed - set(RETIRED) <= set(names)
    assert not set(RETIRED) & set(names) and set(RETIRED.values()) <= set(names)
    for name, program, flags in COURSE:
        record_labs.command(program, record_labs.ROOT)  # every program exists
        assert "--record" not in flags, name

    # A saved model is written before any entry reads it.
    def save_dir(flags):
        return flags[flags.index("--save-dir") + 1] if "--save-dir" in flags else "saved_models"

    saves = {save_dir(flags) for _, program, flags in COURSE if program == "lab01_pretraining"}
    assert saves == {"saved_models", BUDGET_60}
    written = set()
    for name, program, flags in COURSE:
        if program == "lab01_pretraining":  # a writer
            written.add(save_dir(flags))
            continue
        read = {save for save in saves if f"{save}/" in " ".join(flags)}
        assert read <= written, (name, read - written)
    # The adapters study: both starts, in a run directory of its own.
    flags = {name: flags for name, _, flags in COURSE}["adaptation_grid_adapters"]
    assert flags[flags.index("--studies") + 1] == "adapters"
    assert flags[flags.index("--starts") + 1] == "lab01,minilm_l6"
    assert flags[flags.index("--run-dir") + 1] == "runs/adaptation_grid_adapters"
    # A lab the plan does not name joins it at its defaults, after lab01's model and the grids
    # whose choices the labs read, before the rest.
    (tmp_path / "labs").mkdir()
    (tmp_path / "labs" / "lab99_new.py").write_text("")
    entries = course(root=tmp_path)
    assert entries == [*LEAD, ("lab99_new", "lab99_new", ()), *FOLLOW, *BENCHMARKS]
    # The benchmarks beyond the course are named, and every name is an entry.
    assert {name for name, _, _ in BENCHMARKS} == BENCHMARK_NAMES
    assert not BENCHMARK_NAMES & {name for name, _, _ in (*LEAD, *FOLLOW)}
    assert LEAD[0][0] == "lab01_pretraining" and "distillation_grid" in {e[0] for e in LEAD}
    # Every grid a lab reads a choice from is recorded before the labs.
    from kbert.train import chosen_on_validation as chosen

    read = {*chosen.RATES_RECORDS.values(), chosen.ADAPTERS_RECORD, chosen.MULTITASK_RECORD}
    assert read | {chosen.DISTILLATION_RECORD} <= {name for name, _, _ in LEAD}
    with pytest.raises(ValueError, match="not in the course: nothing"):
        course(["nothing"])
    assert [entry[0] for entry in course(["lab13_ner", "lab01_pretraining"])] == [
        "lab01_pretraining",
        "lab13_ner",
    ]


def test_at_records_at_an_earlier_commit_unless_a_program_s_code_moved_since(repo, tmp_path):
    first = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    (repo / "docs" / "results" / "lab98_good.json").write_text("{}")
    _git("add", ".", cwd=repo)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "a record", cwd=repo)
    worktree = tmp_path / "records"
    assert record_labs.prepare_worktree(repo, worktree, first) == first
    assert not (worktree / "docs" / "results" / "lab98_good.json").exists()  # at `first`
    # Only a record was committed since: no program's code moved.
    assert record_labs.code_moved(["lab98_good", "lab99_bad"], repo, first) == {}
    (repo / "labs" / "lab99_bad.py").write_text("import sys\nsys.exit(4)\n")
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "lab99", cwd=repo)
    assert record_labs.code_moved(["lab98_good", "lab99_bad"], repo, first) == {
        "lab99_bad": ["labs/lab99_bad.py"]
    }
    with pytest.raises(ValueError, match="--at 'nothing' names no commit"):
        record_labs.prepare_worktree(repo, worktree, "nothing")


def test_until_defers_what_would_not_end_by_the_deadline_and_starts_what_keeps_progress(
    tmp_path,
):
    from benchmarks.course import EXPECTED_SECONDS

    repo = tmp_path
    (repo / "docs" / "results").mkdir(parents=True)
    (repo / "docs" / "results" / "lab98_good.json").write_text('{"wall_seconds": 1000}')
    now = [0.0]
    rule = record_labs.until_rule(3600.0, repo, clock=lambda: now[0])
    lab = ("lab98_good", "lab98_good", ())
    grid = ("adaptation_grid_x", "benchmarks.adaptation_grid", ("--run-dir", "runs/x"))
    unknown = ("lab97_new", "lab97_new", ())
    guessed = ("pair_stability", "benchmarks.pair_stability", ())
    now[0] = 3600.0 - 1300  # 1,000 s × 1.2 fits in 1,300 s
    assert rule(lab) is None and rule(grid) is None and rule(unknown) is None
    now[0] = 3600.0 - 1100  # it does not fit in 1,100 s
    reason, final = rule(lab)
    assert not final and "about 20 min" in reason and "18 min left" in reason
    assert rule(grid) is None  # a grid keeps its rows: it starts with whatever time is left
    assert rule(unknown) is None  # no record, no guess: nothing to judge it by
    # The plan's guess, not the old record, where defaults grew since.
    assert EXPECTED_SECONDS["pair_stability"] * 1.2 > 1100
    assert rule(guessed)[1] is False
    # lab19 keeps its pretraining between calls, but as a lab of the course it is judged whole
    # (its record's wall time is the course's); at the hour budget it is a benchmark that resumes.
    (repo / "docs" / "results" / "lab19_text_to_text.json").write_text('{"wall_seconds": 3000}')
    assert rule(("lab19_text_to_text", "lab19_text_to_text", ()))[1] is False
    assert rule(("lab19_text_to_text_budget_60min", "lab19_text_to_text", ())) is None
    now[0] = 3600.0
    reason, final = rule(grid)
    assert final and "has passed" in reason


def test_a_deferred_entry_is_skipped_and_a_deferred_provider_stops_the_run(repo, tmp_path):
    worktree = tmp_path / "records"
    record_labs.prepare_worktree(repo, worktree)
    plan = [
        ("lab98_first", "lab98_good", ()),
        ("lab98_second", "lab98_good", ()),
        ("lab01_pretraining", "lab98_good", ()),  # a provider: later entries read it
        ("lab98_last", "lab98_good", ()),
    ]
    lines = []
    deferred = {
        "lab98_first": ("needs 20 min", False),
        "lab01_pretraining": ("needs 40 min", False),
    }
    turn = record_labs.entry_turn(defer=lambda entry: deferred.get(entry[0]))
    rows = record_labs.run_all(plan, worktree, repo, log=lines.append, turn=turn)
    assert [row["record"] for row in rows] == ["lab98_second"]
    logged = [json.loads(line) for line in lines]
    assert logged[0] == {
        "record": "lab98_first",
        "deferred": "needs 20 min",
        "stops_the_run": False,
    }
    assert logged[-1] == {
        "record": "lab01_pretraining",
        "deferred": "needs 40 min",
        "stops_the_run": True,
    }
    assert not (repo / "docs" / "results" / "lab98_last.json").exists()
    # Past the deadline (final), nothing more starts.
    turn = record_labs.entry_turn(defer=lambda entry: ("passed", True))
    rows = record_labs.run_all(plan, worktree, repo, log=lambda _: None, turn=turn)
    assert rows == []


def test_until_reads_a_clock_time_or_a_date_time_and_refuses_the_rest():
    import datetime

    now = datetime.datetime(2026, 11, 29, 23, 55, tzinfo=datetime.timezone.utc)
    tomorrow = datetime.datetime(2026, 11, 30, 1, 50, tzinfo=datetime.timezone.utc)
    assert record_labs.parse_until("01:50", now) == tomorrow.timestamp()
    later = datetime.datetime(2026, 11, 29, 23, 58, tzinfo=datetime.timezone.utc)
    assert record_labs.parse_until("23:58", now) == later.timestamp()
    assert record_labs.parse_until("2026-11-30T01:50", now) == tomorrow.timestamp()
    assert record_labs.parse_until("2026-11-30T02:50+01:00", now) == tomorrow.timestamp()
    with pytest.raises(ValueError, match="--until '2026-11-29T12:00' has passed"):
        record_labs.parse_until("2026-11-29T12:00", now)
    with pytest.raises(ValueError, match="--until must be HH:MM .* received 'soon'"):
        record_labs.parse_until("soon", now)


GRID = """import argparse, json, pathlib
parser = argparse.ArgumentParser()
parser.add_argument("--record")
parser.add_argument("--run-dir")
parser.add_argument("--fail", action="store_true")
args = parser.parse_args()
rows = pathlib.Path(args.run_dir) / "results.jsonl"
rows.parent.mkdir(parents=True, exist_ok=True)
before = rows.read_text().splitlines() if rows.is_file() else []
with open(rows, "a") as f:
    f.write(json.dumps({"run": len(before)}) + "\\n")
if args.fail:
    raise SystemExit(1)
with open(args.record, "w") as f:
    json.dump({"date": "2026-12-01T00:00:00", "results": {"rows_before": before}}, f)
"""


def test_a_grid_s_rows_are_carried_through_the_repository_to_a_fresh_worktree(repo, tmp_path):
    (repo / "benchmarks" / "adaptation_grid.py").write_text(GRID)
    _git("add", ".", cwd=repo)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "grid", cwd=repo)
    entry = ("adaptation_grid_x", "benchmarks.adaptation_grid", ("--run-dir", "runs/grid_x"))
    first = tmp_path / "first_machine"
    commit = record_labs.prepare_worktree(repo, first)
    # Cut off twice: two rows in the worktree, no record.
    for _ in range(2):
        record_labs.run_all([(*entry[:2], (*entry[2], "--fail"))], first, repo, log=lambda _: None)
    with open(first / "runs" / "grid_x" / "results.jsonl", "a") as rows:
        rows.write('{"run": "half wri')  # a row being written when the rows are saved
    saved = record_labs.unfinished_rows.save([entry], first, repo, commit)
    assert saved == {"adaptation_grid_x": 2}
    carried = repo / "docs" / "results" / "unfinished" / "adaptation_grid_x.jsonl"
    header = record_labs.unfinished_rows.read_header(carried)
    assert (header["commit"], header["run_dir"], header["rows"]) == (commit, "runs/grid_x", 2)
    # The next session: a fresh machine, a worktree at the same commit, the rows come back.
    fresh = tmp_path / "fresh_machine"
    assert record_labs.prepare_worktree(repo, fresh) == commit
    lines = []
    rows = record_labs.run_all([entry], fresh, repo, log=lines.append)
    assert rows[0]["recorded"]
    record = json.loads((repo / "docs" / "results" / "adaptation_grid_x.json").read_text())
    assert record["results"]["rows_before"] == ['{"run": 0}', '{"run": 1}']
    assert "2 rows carried" in json.loads(lines[0])["carried"]
    assert not carried.exists()  # the record holds them now


def test_carried_rows_of_another_commit_are_named_and_not_reused(repo, tmp_path):
    entry = ("adaptation_grid_x", "benchmarks.adaptation_grid", ("--run-dir", "runs/grid_x"))
    carried = repo / "docs" / "results" / "unfinished" / "adaptation_grid_x.jsonl"
    carried.parent.mkdir(parents=True)
    carried.write_text(
        json.dumps(
            {"unfinished": "adaptation_grid_x", "commit": "a" * 40, "run_dir": "runs/grid_x"}
        )
        + '\n{"run": 0}\n'
    )
    worktree = tmp_path / "records"
    commit = record_labs.prepare_worktree(repo, worktree)
    said = record_labs.unfinished_rows.restore(entry, worktree, repo, commit)
    assert "made at aaaaaaaaaa" in said and "not reused" in said
    assert not (worktree / "runs" / "grid_x" / "results.jsonl").exists()
    # The worktree's own rows win over carried ones of the same commit.
    carried.write_text(carried.read_text().replace("a" * 40, commit))
    own = worktree / "runs" / "grid_x" / "results.jsonl"
    own.parent.mkdir(parents=True)
    own.write_text('{"run": "own"}\n')
    assert "own rows" in record_labs.unfinished_rows.restore(entry, worktree, repo, commit)
    assert own.read_text() == '{"run": "own"}\n'
    carried.write_text("not a header\n")
    with pytest.raises(ValueError, match="not a file of carried rows"):
        record_labs.unfinished_rows.restore(entry, tmp_path / "elsewhere", repo, commit)


def test_save_unfinished_saves_the_course_s_grids_and_refuses_a_missing_worktree(
    repo, tmp_path, capsys
):
    worktree = tmp_path / "records"
    commit = record_labs.prepare_worktree(repo, worktree)
    for name in ("adaptation_grid_adapters", "distillation_grid"):
        rows = worktree / "runs" / name / "results.jsonl"
        rows.parent.mkdir(parents=True)
        rows.write_text('{"run": 0}\n{"run": 1}\n')
    assert record_labs.save_unfinished(record_labs.course(), repo, worktree) == 0
    printed = capsys.readouterr().out
    assert f"adaptation_grid_adapters: 2 rows at {commit[:10]}" in printed
    assert "distillation_grid: 2 rows" in printed
    carried = sorted(path.name for path in (repo / "docs" / "results" / "unfinished").iterdir())
    assert carried == ["adaptation_grid_adapters.jsonl", "distillation_grid.jsonl"]
    with pytest.raises(SystemExit):
        record_labs.main(["--course", "--save-unfinished", "--worktree", str(tmp_path / "no")])
    assert "holds no recording worktree" in capsys.readouterr().err
