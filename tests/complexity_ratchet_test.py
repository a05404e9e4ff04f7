"""A ratchet on ruff's complexity (C901) and argument-count (PLR0913) checks (issue #39).

Today's violations are counted per file and rule in `tests/complexity_baseline.json`; the counts
may only go down. A file whose count rises, or a new file with a violation, fails the test; so
does a file whose count dropped and whose baseline was not lowered with it, so that the ratchet
tightens. Thresholds: `[tool.ruff.lint.mccabe]` and `[tool.ruff.lint.pylint]` in pyproject.toml.

Regenerate the baseline (after lowering counts, or after a merge that moved code):

    python -m tests.complexity_ratchet_test --update
"""

import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE = Path(__file__).with_name("complexity_baseline.json")
PATHS = ["kbert", "labs", "benchmarks"]
RULES = "C901,PLR0913"
UPDATE = "python -m tests.complexity_ratchet_test --update"


def violation_counts(findings, root=ROOT):
    """`{file: {rule: count}}` from ruff's JSON findings, files relative to `root`, sorted."""
    counts = Counter()
    for finding in findings:
        path = Path(finding["filename"]).resolve().relative_to(root).as_posix()
        counts[path, finding["code"]] += 1
    table = {}
    for (path, code), count in sorted(counts.items()):
        table.setdefault(path, {})[code] = count
    return table


def current_counts():
    """Today's counts: ruff over `PATHS` with only the two rules, `noqa` comments ignored."""
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    result = subprocess.run(
        [ruff, "check", "--select", RULES, "--ignore-noqa", "--exit-zero"]
        + ["--output-format", "json", *PATHS],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return violation_counts(json.loads(result.stdout))


def ratchet_problems(baseline, current):
    """What stops the ratchet: a list of lines, empty when `current` matches `baseline`.

    Args:
        baseline: `{file: {rule: count}}`, the committed counts.
        current: `{file: {rule: count}}`, today's counts.

    Returns:
        One line per file and rule whose count rose (or that is new) or dropped.
    """
    problems = []
    for path in sorted(set(baseline) | set(current)):
        was, now = baseline.get(path, {}), current.get(path, {})
        for rule in sorted(set(was) | set(now)):
            before, after = was.get(rule, 0), now.get(rule, 0)
            if after > before:
                problems.append(
                    f"{path}: {rule} count rose from {before} to {after}; split the function "
                    f"or pass a config object instead (see `ruff check --select {rule} {path}`)"
                )
            elif after < before:
                problems.append(
                    f"{path}: {rule} count dropped from {before} to {after}, well done; lower "
                    f"the baseline so it stays down: `{UPDATE}`"
                )
    return problems


def test_no_file_is_more_complex_than_its_baseline():
    baseline = json.loads(BASELINE.read_text())
    problems = ratchet_problems(baseline, current_counts())
    assert not problems, "\n".join(problems)


def test_a_raised_or_new_count_fails_and_a_dropped_one_asks_to_lower_the_baseline():
    baseline = {"kbert/a.py": {"C901": 2, "PLR0913": 1}, "kbert/b.py": {"PLR0913": 3}}
    assert ratchet_problems(baseline, baseline) == []
    raised = {**baseline, "kbert/a.py": {"C901": 3, "PLR0913": 1}}
    (problem,) = ratchet_problems(baseline, raised)
    assert problem.startswith("kbert/a.py: C901 count rose from 2 to 3")
    new_file = {**baseline, "labs/new.py": {"C901": 1}}
    (problem,) = ratchet_problems(baseline, new_file)
    assert problem.startswith("labs/new.py: C901 count rose from 0 to 1")
    new_rule = {**baseline, "kbert/b.py": {"C901": 1, "PLR0913": 3}}
    (problem,) = ratchet_problems(baseline, new_rule)
    assert problem.startswith("kbert/b.py: C901 count rose from 0 to 1")
    dropped = {"kbert/a.py": {"C901": 2, "PLR0913": 1}}  # b.py is clean now
    (problem,) = ratchet_problems(baseline, dropped)
    assert problem.startswith("kbert/b.py: PLR0913 count dropped from 3 to 0")
    assert UPDATE in problem


def test_counts_come_from_ruffs_json_per_file_and_rule(tmp_path):
    findings = [
        {"filename": str(tmp_path / "kbert" / "a.py"), "code": "C901"},
        {"filename": str(tmp_path / "kbert" / "a.py"), "code": "PLR0913"},
        {"filename": str(tmp_path / "kbert" / "a.py"), "code": "C901"},
        {"filename": str(tmp_path / "labs" / "b.py"), "code": "PLR0913"},
    ]
    assert violation_counts(findings, root=tmp_path.resolve()) == {
        "kbert/a.py": {"C901": 2, "PLR0913": 1},
        "labs/b.py": {"PLR0913": 1},
    }


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        sys.exit(f"usage: {UPDATE}")
    counts = current_counts()
    rows = (f"  {json.dumps(path)}: {json.dumps(rules)}" for path, rules in counts.items())
    BASELINE.write_text("{\n" + ",\n".join(rows) + "\n}\n")  # a line a file: small diffs
    total = sum(sum(rules.values()) for rules in counts.values())
    print(f"{BASELINE.relative_to(ROOT)}: {total} violations in {len(counts)} files")
