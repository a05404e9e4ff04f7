"""A grid's rows carried from one working session's machine to the next, in the repository.

A grid (`benchmarks.adaptation_grid`, `distillation_grid`, `unfreezing_regime`) appends each
finished run to `<run-dir>/results.jsonl` in the recording worktree, and a call cut off by the
end of a session resumes from those rows. They live on the machine, not in git: a session that
starts on a fresh machine starts the grid over, and a grid longer than a session never ends.

    python -m benchmarks.record_labs --course --save-unfinished   # before the session ends

copies each unfinished grid's rows into `docs/results/unfinished/<record>.jsonl` (a header
line naming the commit they were made at and the run directory, then the rows as written), to
commit. The next `record_labs` run at that commit puts them back in the worktree before the
grid's turn, so it goes on from them; the file is removed when the grid's record lands. Rows
made at another commit are never reused (the record must be made at one commit): they are named
and left where they are.

Only complete lines are carried (a run being appended when they are saved is left out), and
rows already in the worktree are kept as they are.
"""

import datetime
import json
from pathlib import Path

UNFINISHED = Path("docs") / "results" / "unfinished"
ROWS = "results.jsonl"


def run_dir(flags):
    """The `--run-dir` an entry's flags name, or None (the entry keeps no rows this way)."""
    flags = list(flags)
    if "--run-dir" not in flags or flags.index("--run-dir") + 1 >= len(flags):
        return None
    return Path(flags[flags.index("--run-dir") + 1])


def carried_path(repo, name):
    """Where the rows of record `name` are carried in `repo`."""
    return Path(repo) / UNFINISHED / f"{name}.jsonl"


def _complete_lines(path):
    text = path.read_text() if path.is_file() else ""
    lines = text.split("\n")
    # The last piece has no newline after it: a row still being written, or "" after the last.
    return [line for line in lines[:-1] if line.strip()]


def save(entries, worktree, repo, commit, now=None):
    """Copies the rows of each entry (`(name, program, flags)`) that has any in `worktree`
    into `repo` (`carried_path`), with a header naming `commit`. Returns `{name: rows}`."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    saved = {}
    for name, _, flags in entries:
        folder = run_dir(flags)
        if folder is None:
            continue
        rows = _complete_lines(Path(worktree) / folder / ROWS)
        if not rows:
            continue
        header = {
            "unfinished": name,
            "commit": commit,
            "run_dir": str(folder),
            "saved": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "rows": len(rows),
        }
        target = carried_path(repo, name)
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f".{target.name}.partial")
        partial.write_text("\n".join([json.dumps(header), *rows]) + "\n")
        partial.replace(target)
        saved[name] = len(rows)
    return saved


def read_header(path):
    """The header of a carried file.

    Raises:
        ValueError: the file's first line is not a carried file's header.
    """
    first = Path(path).read_text().split("\n", 1)[0]
    try:
        header = json.loads(first)
    except ValueError:
        header = None
    if not isinstance(header, dict) or not {"unfinished", "commit", "run_dir"} <= set(header):
        raise ValueError(
            f"{path} is not a file of carried rows: its first line must be a JSON object with "
            f"'unfinished', 'commit' and 'run_dir'; received {first[:80]!r}"
        )
    return header


def restore(entry, worktree, repo, commit):
    """Puts an entry's carried rows back in `worktree` before its turn, when they were made at
    `commit` and the worktree has no rows of its own there. Returns a line saying what was done,
    or None when nothing is carried for it."""
    name, _, flags = entry
    source = carried_path(repo, name)
    folder = run_dir(flags)
    if folder is None or not source.is_file():
        return None
    header = read_header(source)
    if header["commit"] != commit:
        return (
            f"{name}: carried rows were made at {header['commit'][:10]}, not at {commit[:10]}: "
            f"left in {source} and not reused"
        )
    target = Path(worktree) / folder / ROWS
    if _complete_lines(target):
        return f"{name}: the worktree's own rows in {target} are kept; {source} is not read"
    rows = _complete_lines(source)[1:]
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("".join(f"{row}\n" for row in rows))
    return f"{name}: {len(rows)} rows carried from {source} (saved {header.get('saved')})"


def discard(name, repo):
    """Removes a record's carried rows once its record has landed; True if there were any."""
    path = carried_path(repo, name)
    if path.is_file():
        path.unlink()
        return True
    return False
