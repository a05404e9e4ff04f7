"""Runs labs and benchmarks at their defaults on a fixed commit, one at a time, recording each.

A measurement that takes an hour must not run on code that changes under it, and two heavy
TensorFlow jobs on two cores slow each other and spoil both wall times. This tool:

1. puts a git worktree of this checkout's HEAD beside it (default `../kbert-records`; a
   worktree holding uncommitted changes is refused, never overwritten);
2. runs the named programs there one after the other, each with `--record
   docs/results/<name>.json`, importing the worktree's `kbert` (not the editable install of
   this checkout; the caller's `PYTHONPATH` comes after it) and reading the data this checkout
   reads (`KBERT_DATA_DIR`);
3. copies each record (and the figures its program wrote beside it, `docs/results/<name>*`)
   into this checkout's `docs/results/` as soon as its program ends (where the programs after
   it read the settings it chose on validation: `KBERT_CHOICES_DIR`), with
   a line per program (exit status, wall time) in `<worktree>/runs/record_labs/progress.txt`
   and its output in `<name>.log` beside it.

    nohup python -m benchmarks.record_labs lab13_ner lab14_qa > /dev/null 2>&1 &
    nohup python -m benchmarks.record_labs --course --resume > /dev/null 2>&1 &   # everything
    python -m benchmarks.record_labs --course --stale    # which records no longer stand, and why
    python -m benchmarks.record_labs --list      # every lab and benchmark, and its record's date

`--course` runs the plan in `benchmarks/course.py` (every record of `docs/results/`, with its
flags, writers of saved models before their readers). `--resume` keeps each record that still
stands for the code and inputs it would be made from now (`benchmarks.record_freshness`: its
commit's code on the program's import path is HEAD's, its pinned inputs read the same), judged
just before the entry's turn, and runs the rest: a course cut off by the end of a session goes
on in the next one, even at a later commit, and a program after a re-run of the model or grid
it reads is re-run too. `--stale` lists the stale records and why, running nothing.

`--at REV` records at an earlier commit instead of HEAD: a course longer than a session, begun
at REV, goes on there after commits of its records (or of code no program imports), so its
records name one commit and the grids reuse the rows the interrupted run saved at that commit.
A program whose code changed between REV and HEAD is left out (listed): made at REV, its record
would be stale on arrival, so a run at HEAD makes it:

    nohup python -m benchmarks.record_labs --course --resume --at 58394e9 > /dev/null 2>&1 &

`--save-unfinished` copies the rows of a grid cut off (or still running) into
`docs/results/unfinished/` to commit: the next session's machine may be a fresh one, and a run
at the same commit goes on from them (`benchmarks.unfinished_rows`).

`--until TIME` (HH:MM UTC, or an ISO date-time: the working session's end) starts only what can
end by then. A session's end kills the job, and a lab cut off there runs again from its start
in the next session (its record must time a whole run), so the time it ran is lost: a lab whose
expected time (its last record's, or the plan's guess where defaults grew since) does not fit is
left for the next run and the entries after it still run, unless later entries read it
(`course.PROVIDERS`: then the run stops there). A grid, or another benchmark that keeps its
progress, starts whatever time is left.

A program is a lab's name (`labs/<name>.py`) or `benchmarks.<name>` (run as a module). A
program that fails leaves no record and the next one runs. Render the copied records with
`python -m benchmarks.report` and commit them.
"""

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from benchmarks import unfinished_rows
from benchmarks.course import EXPECTED_SECONDS, LEAD, PROVIDERS, course, resumes
from benchmarks.record_freshness import (
    InputPlaces,
    changed_files,
    code_files,
    saves_missing,
    stale_reasons,
)
from kbert.train.chosen_on_validation import (
    ADAPTERS_RECORD,
    CHOICES_VARIABLE,
    DISTILLATION_RECORD,
    MULTITASK_RECORD,
    RATES_RECORDS,
)

ROOT = Path(__file__).resolve().parents[1]
# The records whose choices on validation later programs read (lab16 reads the PEFT rates:
# labs/lab16_peft.py, PEFT_RECORD).
CHOICE_RECORDS = frozenset(
    {
        *RATES_RECORDS.values(),
        ADAPTERS_RECORD,
        MULTITASK_RECORD,
        DISTILLATION_RECORD,
        "adaptation_grid_peft",
    }
)


def record_name(program):
    """`docs/results/<name>.json`'s name for a program: the lab's or benchmark's module name."""
    return program.removeprefix("benchmarks.")


def command(program, root):
    """The argv that runs `program` in checkout `root` (a lab script or a benchmark module).

    Raises:
        ValueError: `program` is neither `labs/<program>.py` nor `benchmarks/<name>.py`.
    """
    if program.startswith("benchmarks."):
        if not (Path(root) / "benchmarks" / f"{record_name(program)}.py").is_file():
            raise ValueError(
                f"no benchmark {program!r}: expected benchmarks/{record_name(program)}.py"
            )
        return [sys.executable, "-m", program]
    if not (Path(root) / "labs" / f"{program}.py").is_file():
        raise ValueError(
            f"no lab {program!r}: expected labs/{program}.py, or benchmarks.<name> for a benchmark"
        )
    return [sys.executable, f"labs/{program}.py"]


def _git(*arguments, cwd):
    return subprocess.run(
        ["git", *arguments], cwd=cwd, capture_output=True, text=True, check=True
    ).stdout.strip()


def prepare_worktree(repo, path, revision="HEAD"):
    """A worktree at `path` holding `repo`'s commit `revision` (HEAD); returns that commit.

    Raises:
        ValueError: `revision` names no commit of `repo`, or `path` exists and is not a clean
            worktree of `repo` (nothing is touched).
    """
    try:
        commit = _git("rev-parse", "--verify", f"{revision}^{{commit}}", cwd=repo)
    except subprocess.CalledProcessError:
        raise ValueError(f"--at {revision!r} names no commit of {repo}") from None
    path = Path(path)
    if not path.exists():
        _git("worktree", "add", "--detach", str(path), commit, cwd=repo)
        return commit
    try:
        common = Path(_git("rev-parse", "--git-common-dir", cwd=path))
        status = _git("status", "--porcelain", "--untracked-files=no", cwd=path)
    except subprocess.CalledProcessError:
        raise ValueError(f"{path} exists and is not a git worktree; choose --worktree") from None
    ours = Path(_git("rev-parse", "--git-common-dir", cwd=repo))
    if (path / common).resolve() != (Path(repo) / ours).resolve():
        raise ValueError(f"{path} is a worktree of another repository; choose --worktree")
    if status:
        raise ValueError(f"{path} has uncommitted changes to tracked files; it is left as it is")
    try:
        _git("checkout", "--quiet", "--detach", commit, cwd=path)
    except subprocess.CalledProcessError as error:
        # Untracked files the commit now tracks (a record written there by hand, say).
        raise ValueError(
            f"{path} cannot move to {commit[:10]}; it is left as it is. git says: "
            f"{error.stderr.strip()}"
        ) from None
    return commit


def _restore(worktree, record):
    """Puts the worktree's file `record` back as committed, or removes it if it is not tracked."""
    relative = str(record.relative_to(worktree))
    try:
        _git("ls-files", "--error-unmatch", relative, cwd=worktree)
    except subprocess.CalledProcessError:
        record.unlink(missing_ok=True)
        return
    _git("checkout", "--quiet", "--", relative, cwd=worktree)


def record_dates(root):
    """Every lab and benchmark of checkout `root` → its record's date, or None."""
    programs = [f"benchmarks.{p.stem}" for p in sorted((Path(root) / "benchmarks").glob("*.py"))]
    programs += [p.stem for p in sorted((Path(root) / "labs").glob("lab*.py"))]
    dates = {}
    for program in programs:
        path = Path(root) / "docs" / "results" / f"{record_name(program)}.json"
        dates[program] = json.loads(path.read_text())["date"][:10] if path.is_file() else None
    # Not programs: the package, the tools, and `flops` (FLOP counts the speed benchmarks share).
    skip = ("__init__", "report", "record_labs", "flops", "course")
    return {p: d for p, d in dates.items() if not p.endswith(skip)}


def _entry(item):
    """`(record name, program, flags)` for a program's name (its defaults) or a plan entry."""
    if isinstance(item, str):
        return record_name(item), item, ()
    name, program, flags = item
    return name, program, tuple(flags)


def run_all(programs, worktree, repo, log=print, turn=None):
    """Runs each program in `worktree` in turn; copies each record into `repo`. Returns rows.

    Args:
        programs: list of program names (run at their defaults, recorded under their own
            name) or `(record name, program, flags)` entries (`benchmarks.course`).
        turn: callable or None (`entry_turn`). Asked `turn((name, program, flags))` just
            before an entry's turn: None runs it; a dict is logged instead, and with
            `"stops_the_run"` true nothing after it runs either.
    """
    commit = _git("rev-parse", "HEAD", cwd=worktree)
    logs = Path(worktree) / "runs" / "record_labs"
    logs.mkdir(parents=True, exist_ok=True)
    # Imported here, not at the top: kbert.data loads TensorFlow, which `--list` does not need;
    # quietly, so this tool's output is not TensorFlow's start-up lines.
    from kbert.startup import quiet_tensorflow

    quiet_tensorflow()
    from kbert.data.data_dir import data_dir

    # The worktree's code first; what the caller's PYTHONPATH held after it (e.g. a folder of
    # benchmark-only peers, `bash benchmarks/install_peers.sh DIR`).
    paths = [str(Path(worktree).resolve()), os.environ.get("PYTHONPATH", "")]
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(path for path in paths if path)}
    data = data_dir()
    if data is not None:
        environment["KBERT_DATA_DIR"] = str(Path(data).resolve())
    # A lab reads the grids' choices where this run copies the records it makes (the worktree's
    # own go back to the committed ones after each program): so the labs of a course read what
    # the course's grids chose at this commit (`kbert.train.chosen_on_validation`).
    environment[CHOICES_VARIABLE] = str((Path(repo) / "docs" / "results").resolve())
    rows = []
    for item in programs:
        name, program, flags = _entry(item)
        skipped = turn((name, program, flags)) if turn is not None else None
        if skipped is not None:
            log(json.dumps(skipped))
            if skipped.get("stops_the_run"):
                break
            continue
        if resumes((name, program, flags)):
            carried = unfinished_rows.restore((name, program, flags), worktree, repo, commit)
            if carried:
                log(json.dumps({"record": name, "carried": carried}))
        record = Path(worktree) / "docs" / "results" / f"{name}.json"
        # The committed record stays where it is while the program runs: deleting it would
        # make the worktree's tracked files differ from the commit, and the run's record would
        # say "dirty". A record counts as this run's only if written after the start.
        started = time.time()
        with open(logs / f"{name}.log", "w") as output:
            status = subprocess.run(
                [*command(program, worktree), *flags, "--record", f"docs/results/{name}.json"],
                cwd=worktree,
                env=environment,
                stdout=output,
                stderr=subprocess.STDOUT,
            ).returncode
        seconds = round(time.time() - started)
        copied = status == 0 and record.is_file() and record.stat().st_mtime >= started
        # The record and what the run wrote beside it under the same name (its figures).
        outputs = [
            path
            for path in sorted(record.parent.glob(f"{name}*"))
            if path.is_file() and path.stat().st_mtime >= started
        ]
        for path in outputs if copied else []:
            target = Path(repo) / "docs" / "results" / path.name
            partial = target.with_name(f".{target.name}.partial")
            shutil.copyfile(path, partial)
            os.replace(partial, target)
        if copied:
            unfinished_rows.discard(name, repo)  # its rows are in the record now
        # Not left changed in the worktree: committed files go back (untracked ones are
        # removed), or they would block the next checkout of the worktree.
        for path in set(outputs) | {record}:
            _restore(worktree, path)
        row = {
            "program": program,
            "record": name,
            "commit": commit,
            "status": status,
            "seconds": seconds,
            "recorded": copied,
        }
        with open(logs / "progress.txt", "a") as progress:
            progress.write(json.dumps(row) + "\n")
        log(json.dumps(row))
        rows.append(row)
    return rows


def expected_seconds(name, repo):
    """An entry's expected wall seconds: the plan's guess where its last record is no guide
    (`course.EXPECTED_SECONDS`), else that record's `wall_seconds`; None without either."""
    if name in EXPECTED_SECONDS:
        return float(EXPECTED_SECONDS[name])
    path = Path(repo) / "docs" / "results" / f"{name}.json"
    try:
        seconds = json.loads(path.read_text()).get("wall_seconds")
    except (OSError, ValueError):
        return None
    return float(seconds) if isinstance(seconds, (int, float)) else None


def until_rule(deadline, repo, clock=time.time, margin=1.2):
    """`defer` for `run_all` with a deadline (`--until`, epoch seconds): a session's end kills
    the job, and an entry cut off there is run again from its start (a lab's record must time
    a whole run), so the time it ran is lost. Past the deadline every entry is deferred; before
    it, an entry that keeps its progress (`course.resumes`) starts whatever time is left, and
    any other starts only when its expected time (`expected_seconds`, × `margin`) fits, or is
    unknown. Returns a callable giving `(reason, final)` (final: past the deadline, so
    nothing more starts) or None."""

    def defer(entry):
        left = deadline - clock()
        if left <= 0:
            return f"the deadline ({_clock_time(deadline)}) has passed", True
        if resumes(entry):
            return None
        expected = expected_seconds(entry[0], repo)
        if expected is None or expected * margin <= left:
            return None
        reason = (
            f"expected to take about {expected * margin / 60:.0f} min ({expected / 60:.0f} "
            f"× {margin:g}), {left / 60:.0f} min left before {_clock_time(deadline)}"
        )
        return reason, False

    return defer


def _clock_time(seconds):
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime(
        "%Y-%m-%d %H:%M UTC"
    )


def parse_until(text, now=None):
    """`--until`'s deadline as epoch seconds: `HH:MM` (UTC: the next such time from `now`)
    or an ISO date-time (UTC unless it names its zone).

    Raises:
        ValueError: neither form, or a date-time already past.
    """
    now = datetime.datetime.now(datetime.timezone.utc) if now is None else now
    try:
        clock = datetime.datetime.strptime(text, "%H:%M")
    except ValueError:
        clock = None
    if clock is not None:
        moment = now.replace(hour=clock.hour, minute=clock.minute, second=0, microsecond=0)
        if moment <= now:
            moment += datetime.timedelta(days=1)
        return moment.timestamp()
    try:
        moment = datetime.datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(
            f"--until must be HH:MM (UTC) or an ISO date-time; received {text!r}"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.timezone.utc)
    if moment <= now:
        raise ValueError(f"--until {text!r} has passed (now {now:%Y-%m-%d %H:%M} UTC)")
    return moment.timestamp()


def entry_turn(keep=None, defer=None):
    """`turn` for `run_all`. `keep(entry)` true: its record stands (`--resume`), logged as
    kept. Else `defer(entry)` (`until_rule`) giving `(reason, final)`: left for a later run,
    and where `final` is true or later entries read it (`course.PROVIDERS`), nothing after it
    runs either."""

    def turn(entry):
        if keep is not None and keep(entry):
            return {"record": entry[0], "kept": True}
        verdict = defer(entry) if defer is not None else None
        if not verdict:
            return None
        reason, final = verdict
        return {
            "record": entry[0],
            "deferred": reason,
            "stops_the_run": bool(final) or entry[0] in PROVIDERS,
        }

    return turn


def code_moved(entries, repo, commit):
    """The entries whose program's code (`record_freshness.code_files` at HEAD) differs between
    `commit` and `repo`'s HEAD, with the files: records made at `commit` would be stale."""
    moved = {}
    for item in entries:
        name, program, _ = _entry(item)
        changed = changed_files(repo, commit, code_files(program, repo))
        if changed:
            moved[name] = changed
    return moved


def input_places(repo, worktree):
    """Where the records' inputs are judged: data under the data directory, saved models under
    the worktree, the grids' choices in `repo`'s `docs/results/` (where the course reads them)."""
    from kbert.data.data_dir import data_dir

    return InputPlaces(
        Path(worktree),
        data_dir(),
        choices=Path(repo) / "docs" / "results",
        # In the course's order: a grid reads only the choices of the grids before it.
        choice_records=tuple(name for name, _, _ in LEAD if name in CHOICE_RECORDS),
    )


def standing(repo, worktree):
    """`keep` for `run_all`: whether an entry's record in `repo` stands for the worktree's code
    (its HEAD) and the inputs where `input_places` says, and the models its run saved for later
    runs are in the worktree (`record_freshness.saves_missing`)."""
    places = input_places(repo, worktree)

    def keep(entry):
        record = Path(repo) / "docs" / "results" / f"{entry[0]}.json"
        if saves_missing(record, worktree):
            return False
        return not stale_reasons(entry, record, worktree, places)

    return keep


def print_stale(entries, repo, worktree):
    """Prints each entry's record as standing or stale (with why) for `repo`'s HEAD, and the
    wall time the stale ones' last records took (a floor for re-making them: defaults that grew
    since take longer). Returns 0."""
    places, stale, seconds, unrecorded = input_places(repo, worktree), 0, 0.0, 0
    for item in entries:
        entry = _entry(item)
        record = Path(repo) / "docs" / "results" / f"{entry[0]}.json"
        reasons = stale_reasons(entry, record, repo, places)
        reasons += [f"saved model gone: {path}" for path in saves_missing(record, worktree)]
        made = json.loads(record.read_text()) if record.is_file() else {}
        last = made.get("wall_seconds")
        if made and "inputs" not in made:
            note = "    note: pins no inputs, so only its code and command are checked"
        else:
            note = None
        took = f"last took {last / 60:.0f} min" if isinstance(last, (int, float)) else ""
        print(f"{entry[0]:<45} {'stale' if reasons else 'stands'}  {took if reasons else ''}")
        for reason in reasons:
            print(f"    {reason}")
        if note:
            print(note)
        if reasons:
            stale += 1
            seconds += last if isinstance(last, (int, float)) else 0.0
            unrecorded += not isinstance(last, (int, float))
    print(
        f"{stale} of {len(entries)} record(s) stale; their last records took "
        f"{seconds / 3600:.1f} h, and {unrecorded} have no timed record"
    )
    return 0


def save_unfinished(entries, repo, worktree):
    """`--save-unfinished`: the rows of each entry that keeps its progress in a run directory,
    copied from `worktree` into `repo` with the worktree's commit (`unfinished_rows.save`).
    Returns 0.

    Raises:
        ValueError: `worktree` is not a git checkout.
    """
    if not (Path(worktree) / ".git").exists():
        raise ValueError(f"--worktree {worktree} holds no recording worktree: nothing to save")
    commit = _git("rev-parse", "HEAD", cwd=worktree)
    kept = [_entry(item) for item in entries if resumes(_entry(item))]
    saved = unfinished_rows.save(kept, worktree, repo, commit)
    for name, rows in saved.items():
        print(f"{name}: {rows} rows at {commit[:10]} -> {unfinished_rows.carried_path(repo, name)}")
    if not saved:
        print(f"no unfinished rows in {worktree}")
    return 0


def _turn(args, deadline):
    """`run_all`'s `turn` for `--resume` and `--until`, saying what each will do."""
    keep = defer = None
    if args.resume:
        keep = standing(ROOT, args.worktree)
        print("resuming: records that still stand are kept (benchmarks.record_freshness)")
    if deadline is not None:
        defer = until_rule(deadline, ROOT)
        print(f"entries that would not end by {_clock_time(deadline)} are left for the next run")
    return entry_turn(keep, defer)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("programs", nargs="*", help="lab names, or benchmarks.<name>")
    parser.add_argument("--worktree", default=str(ROOT.parent / "kbert-records"))
    parser.add_argument("--list", action="store_true", help="list programs and record dates")
    parser.add_argument(
        "--course",
        action="store_true",
        help="run the whole course plan (benchmarks/course.py), or with names, those records",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="keep the records that still stand for their code and inputs; run the rest",
    )
    parser.add_argument(
        "--at",
        default="HEAD",
        metavar="REV",
        help="record at this earlier commit instead of HEAD (a course begun there goes on at "
        "one commit); the programs whose code differs between REV and HEAD are left out, for a "
        "run at HEAD",
    )
    parser.add_argument(
        "--until",
        metavar="TIME",
        help="a deadline (HH:MM UTC, or an ISO date-time), e.g. the working session's end: "
        "an entry whose run would not end by then is left for the next run, and one that keeps "
        "its progress (a grid) still starts",
    )
    parser.add_argument(
        "--stale",
        action="store_true",
        help="list the records that no longer stand, and why; run nothing",
    )
    parser.add_argument(
        "--save-unfinished",
        action="store_true",
        help="copy the rows of the grids still running or cut off in the worktree into "
        "docs/results/unfinished/ (benchmarks.unfinished_rows), to commit before a session "
        "ends; run nothing",
    )
    args = parser.parse_args(argv)
    if args.list:
        for program, date in record_dates(ROOT).items():
            print(f"{program:<40} {date or 'not recorded'}")
        return 0
    if not args.programs and not args.course:
        parser.error("name at least one program (or --course, or --list)")
    try:
        entries = course(args.programs or None) if args.course else list(args.programs)
        for item in entries:
            command(_entry(item)[1], ROOT)  # every name checked before anything runs
        if args.stale:
            return print_stale(entries, ROOT, args.worktree)
        if args.save_unfinished:
            return save_unfinished(entries, ROOT, args.worktree)
        deadline = parse_until(args.until) if args.until else None
        commit = prepare_worktree(ROOT, args.worktree, args.at)
    except ValueError as error:
        parser.error(str(error))
    moved = code_moved(entries, ROOT, commit)
    if moved:
        # Made at `commit`, their records would be stale on arrival: a run at HEAD makes them.
        print(
            f"left for a run at HEAD: {len(moved)} program(s) whose code changed since "
            f"{commit[:10]}:"
        )
        for name, files in moved.items():
            print(f"  {name}: {', '.join(files)}")
        entries = [item for item in entries if _entry(item)[0] not in moved]
    turn = _turn(args, deadline)
    print(f"recording up to {len(entries)} program(s) at {commit[:10]} in {args.worktree}")
    rows = run_all(entries, args.worktree, ROOT, turn=turn)
    return 0 if all(row["recorded"] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
