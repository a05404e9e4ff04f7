"""The tree is formatted and linted by ruff (settings in pyproject.toml), checked in the fast tier."""

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PATHS = ["kbert", "labs", "benchmarks", "tests"]


def _ruff(*arguments):
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    assert Path(ruff).exists(), "ruff is not installed: pip install -e '.[dev]'"
    return subprocess.run(
        [ruff, *arguments, *PATHS], cwd=ROOT, capture_output=True, text=True, timeout=300
    )


def test_ruff_format_leaves_every_file_unchanged():
    result = _ruff("format", "--check")
    assert result.returncode == 0, f"run `ruff format {' '.join(PATHS)}`:\n{result.stdout[-3000:]}"


def test_ruff_check_passes():
    result = _ruff("check", "--output-format", "concise")
    assert result.returncode == 0, result.stdout[-3000:]


def test_the_models_import_nothing_from_the_data_readers():
    # Numeric core apart from I/O (issue #16): task models read their inputs as arrays.
    offenders = [
        f"{path.relative_to(ROOT)}: {line.strip()}"
        for path in sorted((ROOT / "kbert" / "models").rglob("*.py"))
        for line in path.read_text().splitlines()
        if re.match(r"\s*(from|import) kbert\.data\b", line)
    ]
    assert not offenders, offenders


# Private attributes of Keras objects (layers, models, optimizers) kbert once reached into.
KERAS_PRIVATE = re.compile(
    r"\._(tracker|nodes_by_depth|layers|flatten_layers|trainable_variables|"
    r"trainable_variables_indices|non_trainable_variables|var_key|initial_epoch|trainable|"
    r"iterations|variables)\b|_peft_"
)


def test_only_keras_internals_reaches_into_keras():
    # Issue #16: a Keras release that changes an internal breaks one module, with its test.
    offenders = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in sorted((ROOT / "kbert").rglob("*.py"))
        if path.name != "keras_internals.py"
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if KERAS_PRIVATE.search(line)
    ]
    assert not offenders, offenders


def _kbert_import_graph():
    """Module → the kbert modules it imports, at top level or inside functions alike."""
    modules = {}
    for path in (ROOT / "kbert").rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path

    def owner(name):  # `kbert.models.Encoder` → `kbert.models`
        while name not in modules and "." in name:
            name = name.rsplit(".", 1)[0]
        return name if name in modules else None

    graph = {}
    for name, path in modules.items():
        targets = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("kbert"):
                targets |= {owner(f"{node.module}.{alias.name}") for alias in node.names}
            elif isinstance(node, ast.Import):
                targets |= {owner(alias.name) for alias in node.names}
        # A package's own __init__ runs before its modules: importing it is not a cycle.
        graph[name] = {t for t in targets if t and t != name and not name.startswith(t + ".")}
    return graph


def test_kbert_has_no_import_cycle():
    # Issue #16: no cycle hidden by an import inside a function either.
    graph = _kbert_import_graph()
    state = {}

    def visit(name, trail):
        state[name] = "open"
        for target in sorted(graph[name]):
            if state.get(target) == "open":
                raise AssertionError(" → ".join([*trail[trail.index(target) :], target]))
            if target not in state:
                visit(target, [*trail, target])
        state[name] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])


def test_the_readme_stays_under_12_kb():
    # Issue #16: what kbert is, the commands, the quick start, the parts and a results summary;
    # everything else lives in docs/ and labs/README.md.
    size = (ROOT / "README.md").stat().st_size
    assert size <= 12 * 1024, f"README.md is {size:,} bytes; move detail to docs/"
