"""What the records say as a whole: the commit and machine they describe, the ones from
elsewhere or resumed, and the course's total wall time (the paragraph under docs/results.md's
title)."""

from collections import Counter


def _machine(record):
    """The CPU, its bfloat16 features where the record names them (a Xeon with AMX and one
    without share a model name), and the cores."""
    machine = record["machine"]
    bf16 = [flag for flag in machine.get("cpu_features", ()) if "bf16" in flag]
    features = f" ({', '.join(bf16) or 'no bf16'})" if "cpu_features" in machine else ""
    return f"{machine['cpu']}{features}, {machine['cores']} cores"


def _duration(seconds):
    hours, minutes = divmod(round(seconds / 60), 60)
    return f"{hours} h {minutes:02d} min" if hours else f"{minutes} min"


def _saved_files(value):
    """Every `saved_files` mapping (label → sha256) anywhere in a record's results."""
    if isinstance(value, dict):
        found = dict(value.get("saved_files") or {})
        for key, item in value.items():
            if key != "saved_files":
                found |= _saved_files(item)
        return found
    if isinstance(value, list):
        found = {}
        for item in value:
            found |= _saved_files(item)
        return found
    return {}


def foreign_models(records):
    """`"<record> (<files>: not what <writer> wrote)"` for each record that read a file whose
    hash differs from the one the record that wrote it (lab01 names its `saved_files`) holds."""
    written = {}
    for name, record in records.items():
        for label, digest in _saved_files(record.get("results")).items():
            written[label] = (name, digest)
    foreign = []
    for name, record in records.items():
        by_writer = {}
        for label, digest in (record.get("inputs") or {}).items():
            writer = written.get(label)
            if writer is not None and writer[0] != name and writer[1] != digest:
                by_writer.setdefault(writer[0], []).append(label)
        foreign += [
            f"{name} ({', '.join(labels)}: not what {writer} wrote)"
            for writer, labels in by_writer.items()
        ]
    return foreign


def trained_seconds(record):
    """The training seconds a comparison record's rows add up to (each row's mean `train_s`
    times its `seeds`), 0.0 for a record without such rows. A comparison resumed after an
    interruption reuses the rows it saved and times only its last call, so its training can
    exceed its wall time: the rows' sum is then the floor of what the whole run took."""
    results = record.get("results")
    rows = results.get("rows") if isinstance(results, dict) else None
    total = 0.0
    for row in rows if isinstance(rows, list) else ():
        seconds = row.get("train_s") if isinstance(row, dict) else None
        if isinstance(seconds, (int, float)):
            total += float(seconds) * (row.get("seeds") or 1)
    return total


def evidence_summary(records, benchmarks=frozenset(), labs=None):
    """A paragraph about `records` (`{name: record}`): the commit most of them were made at and
    its machine, every record made at another commit, on another machine, on a dirty tree or
    without pinned inputs, and the summed wall times.

    Args:
        records: `{name: record}`.
        benchmarks: set of str. The records of the benchmarks beyond the course.
        labs: set of str, or None. The records of the labs at their defaults, what a student
            runs (issue #36's goal: at most 8 hours, not-measured): the course's time is theirs,
            and the rest not in `benchmarks` (the grids whose choices the labs read, the
            diagnoses their pages cite) is summed apart. None: the course is every record not
            in `benchmarks`.

    Returns:
        str (empty without records).
    """
    if not records:
        return ""
    commits = Counter((record.get("commit") or "unknown") for record in records.values())
    machines = Counter(_machine(record) for record in records.values())
    commit, made_here = commits.most_common(1)[0]
    machine = machines.most_common(1)[0][0]
    seconds = {"course": 0.0, "evidence": 0.0, "benchmarks": 0.0}
    for name, record in records.items():
        if name in benchmarks:
            part = "benchmarks"
        else:
            part = "course" if labs is None or name in labs else "evidence"
        seconds[part] += max(float(record["wall_seconds"]), trained_seconds(record))
    course = seconds["course"]
    what = "summed over its records" if labs is None else "every lab at its defaults"
    time = f"The course's total wall time, {what}: {_duration(course)} ({course:,.0f} s)"
    for part, beyond in (
        ("the grids and diagnoses the labs read and cite", seconds["evidence"]),
        ("the benchmarks beyond them", seconds["benchmarks"]),
    ):
        if beyond:
            time += f"; {part}: {_duration(beyond)} ({beyond:,.0f} s)"
    lines = [
        f"These pages describe commit `{commit[:10]}` on {machine}: {made_here} of "
        f"{len(records)} records were made there. {time}."
    ]
    flagged = {
        "made at another commit": [
            f"{name} (`{(record.get('commit') or 'unknown')[:10]}`)"
            for name, record in records.items()
            if (record.get("commit") or "unknown") != commit
        ],
        "made on another machine": [
            f"{name} ({_machine(record)})"
            for name, record in records.items()
            if _machine(record) != machine
        ],
        "made with uncommitted changes": [
            name for name, record in records.items() if record.get("dirty")
        ],
        "without pinned inputs (made before records hashed what they read)": [
            name for name, record in records.items() if "inputs" not in record
        ],
        "that read a saved model other than the one its writer's record wrote": (
            foreign_models(records)
        ),
        "resumed after an interruption (their rows' training exceeds their wall time, which "
        "counts only the last call; the totals above count the training instead)": [
            f"{name} ({record['wall_seconds']:,.0f} s wall, {trained_seconds(record):,.0f} s "
            "of training)"
            for name, record in records.items()
            if trained_seconds(record) > float(record["wall_seconds"])
        ],
    }
    for what, names in flagged.items():
        if names:
            lines.append(f"**{len(names)} {what}:** {', '.join(names)}.")
    return "\n\n".join(lines)
