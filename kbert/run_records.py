"""Recorded runs: a lab's or benchmark's numbers with the command, commit, date and machine.

Published numbers come from these files (`docs/results/<name>.json`), never from hand-copied
tables: each holds what was measured and exactly how, so a reader can re-run it and a changed
number can be traced to a commit.
"""

import argparse
import datetime
import json
import os
import platform
import shlex
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

from kbert import run_inputs
from kbert.files import atomic_write_text


def _git(*arguments):
    try:
        result = subprocess.run(
            ["git", *arguments],
            capture_output=True,
            text=True,
            timeout=30,
            cwd=Path(__file__).resolve().parents[1],
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return result.stdout.strip() if result.returncode == 0 else None


# CPU flags that decide how fast a run is here: vector width, and bfloat16 arithmetic (a Xeon
# with AMX and one without report the same model name).
CPU_FEATURES = ("avx2", "avx512f", "avx512_bf16", "amx_bf16", "amx_tile")
# The packages a recorded number can depend on; the optional peers only where installed.
PACKAGES = (
    "tensorflow",
    "tensorflow-cpu",
    "keras",
    "keras-hub",
    "tensorflow-text",
    "numpy",
    "torch",
    "transformers",
    "onnxruntime",
)


def cpu_description(cpuinfo="/proc/cpuinfo"):
    """`(model name, set of flags)` read from `cpuinfo`; an unreadable file gives the platform's
    processor name and no flags."""
    model, flags = platform.processor() or platform.machine() or "unknown CPU", set()
    try:
        text = Path(cpuinfo).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return model, flags
    for line in text.splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[-1].strip()
        elif line.startswith("flags"):
            flags.update(line.split(":", 1)[-1].split())
    return model, flags


def machine_description():
    """The machine a run happened on: CPU model and the features that set its speed, cores,
    memory, OS and Python.

    Returns:
        A dict with "cpu", "cpu_features" (those of `CPU_FEATURES` it has), "cores",
        "memory_gib", "platform" and "python".

    Example:
    >>> sorted(machine_description())
    ['cores', 'cpu', 'cpu_features', 'memory_gib', 'platform', 'python']
    """
    cpu, flags = cpu_description()
    memory = None
    try:
        with open("/proc/meminfo", encoding="utf-8") as lines:
            kib = next(
                (int(line.split()[1]) for line in lines if line.startswith("MemTotal")), None
            )
            memory = None if kib is None else round(kib / 2**20, 1)
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cpu_features": [flag for flag in CPU_FEATURES if flag in flags],
        "cores": os.cpu_count(),
        "memory_gib": memory,
        "platform": platform.platform(),
        "python": platform.python_version(),
    }


def package_versions():
    """`{package: version}` of `PACKAGES` installed here (read from their metadata, so nothing
    is imported)."""
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def _invocation():
    """This process's command line as typed: `-m package.module` for modules, repo-relative paths."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    if spec is not None and spec.name and spec.name != "__main__":
        return ["-m", spec.name.removesuffix(".__main__")] + sys.argv[1:]
    script = Path(sys.argv[0]).resolve() if sys.argv and sys.argv[0] else None
    root = _git("rev-parse", "--show-toplevel")
    if script is not None and root and script.is_relative_to(Path(root).resolve()):
        return [str(script.relative_to(Path(root).resolve()))] + sys.argv[1:]
    return list(sys.argv)


_CODE_VERSION = {}


def code_version():
    """The git commit of the code this process runs, and whether tracked files differed from it
    (outside `docs/results/`, where runs write their records and figures).

    Taken once, the first time it is asked (`add_record_argument` asks when a lab parses its
    arguments, before any work): a record written at the end of a long run then names the code
    that ran, even if commits were made while it ran.

    Returns:
        dict with "commit" (str or None outside a checkout) and "dirty" (bool).
    """
    if not _CODE_VERSION:
        _CODE_VERSION["commit"] = _git("rev-parse", "HEAD")
        # Records and figures under docs/results/ are outputs, not code: a run that rewrites
        # its own committed record (as every re-recording does) is not "dirty".
        _CODE_VERSION["dirty"] = bool(
            _git("status", "--porcelain", "--untracked-files=no", "--", ".", ":!docs/results")
        )
    return dict(_CODE_VERSION)


def write_run_record(path, results, seconds, argv=None):
    """Writes `results` with how they were made to a JSON file, atomically.

    The record holds the command (`python` + `argv`), the git commit of the code (with
    `"dirty": true` when tracked files had uncommitted changes; see `code_version`, taken when
    the run started if it asked then), the UTC date, the wall time, the machine, the versions of
    the packages its numbers depend on (`package_versions`) and, when the
    process watched what it read (`add_record_argument` starts that), `"inputs"`: the SHA-256
    of each data file and saved model it read (`kbert.run_inputs`); a killed run never leaves a
    half-written file.

    Args:
        path: str or Path. The JSON file (its folder is created).
        results: dict. The run's numbers (JSON-serializable).
        seconds: float. The run's wall time.
        argv: list of str, default None (`sys.argv`).

    Returns:
        The record (a dict).

    Raises:
        ValueError: `results` is not a dict or not JSON-serializable.

    Example:
    >>> record = write_run_record("/tmp/record.json", {"f1": 70.1}, 12.5)  # doctest: +SKIP
    """
    if not isinstance(results, dict):
        raise ValueError(f"results must be a dict of numbers; received {type(results).__name__}")
    argv = _invocation() if argv is None else list(argv)
    record = {
        "command": "python " + shlex.join(argv),
        **code_version(),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "wall_seconds": round(float(seconds), 1),
        "machine": machine_description(),
        "software": package_versions(),
        "results": results,
    }
    if run_inputs.is_watching():
        record["inputs"] = run_inputs.pinned_inputs()
    try:
        text = json.dumps(record, indent=2) + "\n"
    except (TypeError, ValueError) as error:
        raise ValueError(f"results must be JSON-serializable; {error}") from None
    atomic_write_text(path, text)
    return record


EVIDENCE_DIR = Path(__file__).resolve().parents[1] / "docs" / "results"


def _record_path(text):
    if not text.endswith(".json") or Path(text).is_dir():
        raise argparse.ArgumentTypeError(f"must name a .json file to write; received {text!r}")
    if Path(text).resolve().parent == EVIDENCE_DIR and code_version()["dirty"]:
        raise argparse.ArgumentTypeError(
            f"{text!r} is the course's evidence, and tracked files differ from commit "
            f"{(code_version()['commit'] or '?')[:10]}: commit them first (a record names the "
            "code it ran), or record elsewhere"
        )
    return text


def add_record_argument(parser):
    """Adds `--record PATH.json` to a lab's or benchmark's `argparse` parser.

    The path is checked when the arguments are parsed (before any work; a record in
    `docs/results/` is refused while tracked files have uncommitted changes), the parser notes
    the time it was made, from which `record_if_requested` counts the wall time, and the
    process starts noting the files it reads (`kbert.run_inputs.watch_inputs`).

    Example:
    >>> parser = argparse.ArgumentParser()
    >>> add_record_argument(parser)
    >>> parser.parse_args(["--record", "docs/results/lab.json"]).record
    'docs/results/lab.json'
    """
    parser.add_argument(
        "--record",
        type=_record_path,
        default=None,
        help="also write the run's numbers, command, commit, date and machine to this JSON "
        "(e.g. docs/results/<lab>.json; `python -m benchmarks.report` renders it)",
    )
    parser.set_defaults(record_started=time.perf_counter())
    code_version()  # the code that runs is the code at the start
    run_inputs.watch_inputs()


def record_if_requested(args, results):
    """Writes `results` to `args.record` (see `add_record_argument`) when one was given.

    Returns:
        The record (a dict), or None without `--record`.
    """
    if not getattr(args, "record", None):
        return None
    return write_run_record(args.record, results, time.perf_counter() - args.record_started)
