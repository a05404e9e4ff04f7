"""Whether a record in `docs/results/` still stands for what its program would run now.

A record is evidence for the code it was made at (its `commit`) and for the files it read (its
`inputs`, each pinned by SHA-256: `kbert.run_inputs`). It still stands, *fresh*, when all of
these hold:

- it was made from a clean checkout (`dirty` false), by the command the course runs now (the
  same program, flags and record path);
- the program's code did not change since that commit: its own file and every module of this
  checkout it imports, followed import by import (`code_files`), read the same at HEAD;
- every input it pinned has the same content now: a data file, a saved model that a re-run of
  its writer has rebuilt, a grid record whose choice the program read.

Otherwise it is *stale*, and `stale_reasons` says why. `benchmarks.record_labs --resume` asks
this just before each entry's turn and re-runs only stale records (so a program after a re-run
of the model or grid it reads is re-run too), and `--stale` lists them. A course that takes
longer than a working session can then be recorded over several, and a change to code no
program imports (a test, the report, the command line) keeps the records already made.

What the rule cannot see: a file that TensorFlow's own file system opens and no reader names
with `note_input` is not pinned, so a change to it alone does not make a record stale.
"""

import ast
import dataclasses
import hashlib
import json
import shlex
import subprocess
from pathlib import Path

from benchmarks.unfinished_rows import ROWS, run_dir

DATA_LABEL = "$KBERT_DATA_DIR/"


def program_file(program, root):
    """The file that runs `program` (a lab's name or `benchmarks.<name>`) in checkout `root`."""
    if program.startswith("benchmarks."):
        return Path(root) / "benchmarks" / f"{program.removeprefix('benchmarks.')}.py"
    return Path(root) / "labs" / f"{program}.py"


def expected_command(name, program, flags):
    """The `command` a record of plan entry `(name, program, flags)` holds (`kbert.run_records`)."""
    start = ["-m", program] if program.startswith("benchmarks.") else [f"labs/{program}.py"]
    return "python " + shlex.join([*start, *flags, "--record", f"docs/results/{name}.json"])


def _module_file(root, module):
    """`root`'s file for dotted `module` (its `.py`, or its package's `__init__.py`), or None."""
    base = Path(root).joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _lazy_homes(tree):
    """A package's `_HOMES = {name: module}` (names imported on first use, PEP 562), or {}."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "_HOMES" for target in node.targets
        ):
            return ast.literal_eval(node.value)
    return {}


def _imported_modules(tree, module, is_package):
    """The dotted names `tree` (the code of `module`) imports: each module and its parents, and
    for `from X import y`, `X.y` as well (a submodule, when there is one)."""
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = module.split(".")
                package = parts if is_package else parts[:-1]
                parent = package[: len(package) - (node.level - 1)]
                base = ".".join([*parent, base] if base else parent)
            names += [base] + [f"{base}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            names.append(f"{node.value.id}.{node.attr}")  # `kbert.Encoder` after `import kbert`
    expanded = set()
    for name in names:
        parts = name.split(".")
        expanded.update(".".join(parts[:end]) for end in range(1, len(parts) + 1))
    return expanded


def code_files(program, root):
    """The files of checkout `root` that `program` runs: its own file and every module of the
    checkout it imports, transitively (found by reading the imports, not by running them;
    names a package imports lazily through `_HOMES` count as imports of their modules).

    Returns:
        sorted list of paths relative to `root`, in POSIX form.
    """
    root = Path(root)
    start = program_file(program, root)
    if not start.is_file():
        raise ValueError(f"no program {program!r} in {root}: expected {start}")
    seen = {start: start.relative_to(root).with_suffix("").as_posix().replace("/", ".")}
    pending = [start]
    while pending:
        path = pending.pop()
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        module = seen[path]
        is_package = path.name == "__init__.py"
        for name in _imported_modules(tree, module, is_package):
            found = _module_file(root, name)
            if found is None and "." in name:
                # A name its package imports on first use: `from kbert import Encoder`.
                parent, _, attribute = name.rpartition(".")
                package = _module_file(root, parent)
                if package is not None and package.name == "__init__.py":
                    home = _lazy_homes(ast.parse(package.read_text(encoding="utf-8"))).get(
                        attribute
                    )
                    found = None if home is None else _module_file(root, home)
                    name = home or name
            if found is not None and found not in seen:
                dotted = name.removesuffix(".__init__")
                seen[found] = dotted
                pending.append(found)
    return sorted(path.relative_to(root).as_posix() for path in seen)


def _git(root, *arguments):
    return subprocess.run(
        ["git", *arguments], cwd=root, capture_output=True, text=True, check=True
    ).stdout.strip()


def changed_files(root, commit, files):
    """Which of `files` (relative to `root`) differ between `commit` and HEAD.

    Raises:
        ValueError: `commit` is not in the checkout's history.
    """
    try:
        _git(root, "cat-file", "-e", f"{commit}^{{commit}}")
    except subprocess.CalledProcessError:
        raise ValueError(f"commit {commit[:10]} is not in this checkout's history") from None
    changed = _git(root, "diff", "--name-only", commit, "HEAD", "--", *files)
    return changed.splitlines()


def _sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclasses.dataclass
class InputPlaces:
    """Where a record's pinned inputs are now, and a cache of their SHA-256s.

    Attributes:
        worktree: the checkout the records were made in (checkout-relative inputs).
        data: the data directory (`$KBERT_DATA_DIR/...` inputs), or None when none is set.
        digests: SHA-256s by (path, size, mtime), shared by every record checked.
    """

    worktree: Path
    data: Path | None
    digests: dict = dataclasses.field(default_factory=dict)
    choices: Path | None = None
    choice_records: tuple = ()

    def path(self, label):
        """Where input `label` is now (None for a data file when no data directory is set).

        A record under a `docs/results/` folder (a grid's choice, read by
        `kbert.train.chosen_on_validation`) is judged where the next run reads the choices,
        `choices`, whichever checkout it was read from then."""
        if label.startswith(DATA_LABEL):
            if self.data is None:
                return None
            return Path(self.data) / label.removeprefix(DATA_LABEL)
        path = Path(label)
        if self.choices is not None and path.parent.parts[-2:] == ("docs", "results"):
            return Path(self.choices) / path.name
        return path if path.is_absolute() else Path(self.worktree) / path

    def reasons(self, inputs):
        """Why `inputs` (`{label: sha256}`) no longer read the same: one line per input."""
        reasons = []
        for label, pinned in inputs.items():
            path = self.path(label)
            if path is None or not path.is_file():
                reasons.append(f"input missing: {label}")
                continue
            stat = path.stat()
            key = (str(path), stat.st_size, stat.st_mtime_ns)
            if key not in self.digests:
                self.digests[key] = _sha256(path)
            if self.digests[key] != pinned:
                reasons.append(f"input changed: {label}")
        return reasons

    def missed_choices(self, record, files, own=None):
        """The grid records whose choice a program of code `files` (one that reads choices,
        through `kbert/train/chosen_on_validation.py`) may read now but did not pin: recorded
        after `record`, so it fell back to the source's setting then, or read none.

        `own`: the record's name. A grid's record (one of `choice_records`, which are in the
        course's order) reads only the choices of the grids before it, never of those after:
        a grid recorded after it does not make it stale."""
        if self.choices is None or "kbert/train/chosen_on_validation.py" not in files:
            return []
        pinned = {Path(label).name for label in record.get("inputs") or {}}
        order = list(self.choice_records)
        later = set(order[order.index(own) + 1 :]) if own in order else set()
        reasons = []
        for name in self.choice_records:
            grid, _ = _read(Path(self.choices) / f"{name}.json")
            if grid is None or f"{name}.json" in pinned or name in later:
                continue
            if str(grid.get("date", "")) > str(record.get("date", "")):
                reasons.append(f"{name}.json was recorded after it (its choice not read then)")
        return reasons


def _names_record(label, name):
    """Whether input `label` is the record of entry `name` (`.../docs/results/<name>.json`)."""
    path = Path(label)
    return path.name == f"{name}.json" and path.parent.parts[-2:] == ("docs", "results")


def _read(record_path):
    """The record at `record_path` as a dict, or the reason it cannot stand as one."""
    if not record_path.is_file():
        return None, "no record"
    try:
        record = json.loads(record_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        return None, f"{record_path.name} is not JSON ({error})"
    if not isinstance(record, dict):
        return None, f"{record_path.name} is not a run record"
    return record, None


def _code_reasons(record, files, root):
    """Why the code `record` was made from is not `root`'s HEAD code (`files`, the program's)."""
    commit = record.get("commit")
    if not commit:
        return ["names no commit"]
    try:
        changed = changed_files(root, commit, files)
    except ValueError as error:
        return [str(error)]
    if not changed:
        return []
    more = f" and {len(changed) - 6} more" if len(changed) > 6 else ""
    return [f"code changed since {commit[:10]}: {', '.join(changed[:6])}{more}"]


def _own_rows(flags):
    """The label of the rows file an entry's run keeps (`--run-dir`), or None."""
    folder = run_dir(flags)
    return None if folder is None else (folder / ROWS).as_posix()


def stale_reasons(entry, record_path, root, places):
    """Why the record of plan entry `(name, program, flags)` at `record_path` no longer stands
    for checkout `root` (its HEAD) with its inputs where `places` (`InputPlaces`) says; [] when
    it does."""
    name, program, flags = entry
    record, unreadable = _read(Path(record_path))
    if record is None:
        return [unreadable]
    reasons = []
    if record.get("dirty", True):
        reasons.append("made with uncommitted changes (or does not say)")
    command = expected_command(name, program, flags)
    if record.get("command") != command:
        reasons.append(f"made by another command: {record.get('command')!r}, now {command!r}")
    files = code_files(program, root)
    reasons += _code_reasons(record, files, root)
    # A record without `inputs` (its program does not watch what it reads) stands on its code
    # alone: `record_labs --stale` says so beside it.
    # A grid that reads its own earlier record (a starting point's chosen rates, printed beside
    # the run) pinned the version it overwrote: no record can pin itself, so that one is skipped.
    inputs = {
        label: digest
        for label, digest in (record.get("inputs") or {}).items()
        if not _names_record(label, name)
    }
    # The run's own rows (`<run-dir>/results.jsonl`, which a grid pins as it resumes from
    # them) are what the record holds: gone with a machine, they leave the record standing.
    own_rows = _own_rows(flags)
    if own_rows in inputs and not (places.path(own_rows) or Path()).is_file():
        del inputs[own_rows]
    reasons += places.reasons(inputs)
    return reasons + places.missed_choices(record, files, own=name)


def nested_dicts(value):
    """Every dict in `value` and below it (through dicts' values and lists' items): where a
    record's results say what its run saved (`saved_to`, `saved_files`) at any depth."""
    found, pending = [], [value]
    while pending:
        value = pending.pop()
        if isinstance(value, dict):
            found.append(value)
            pending += list(value.values())
        elif isinstance(value, list):
            pending += value
    return found


def saves_missing(record_path, worktree):
    """The models `record` says its run saved for later runs (every `saved_to` in its results)
    that are not in `worktree`: a worktree laid anew has lost them, so the run is made again
    even though its record stands. [] without a record."""
    record, _ = _read(Path(record_path))
    saved = [
        value["saved_to"]
        for value in nested_dicts((record or {}).get("results"))
        if isinstance(value.get("saved_to"), str)
    ]
    return sorted(path for path in set(saved) if not (Path(worktree) / path).exists())


__all__ = [
    "InputPlaces",
    "changed_files",
    "code_files",
    "expected_command",
    "nested_dicts",
    "saves_missing",
    "stale_reasons",
]
