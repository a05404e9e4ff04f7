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


MAX_MODULE_LINES = 700  # issue #39: a module a maintainer reads in one sitting


def long_modules(root=ROOT, limit=MAX_MODULE_LINES):
    """`{path: lines}` of the Python files in kbert/, labs/ and benchmarks/ over `limit`."""
    found = {}
    for folder in ("kbert", "labs", "benchmarks"):
        for path in sorted((Path(root) / folder).rglob("*.py")):
            lines = len(path.read_text(encoding="utf-8").splitlines())
            if lines > limit:
                found[str(path.relative_to(root))] = lines
    return found


def test_no_module_outgrows_700_lines(tmp_path):
    assert long_modules() == {}, "split these modules (a new module for a part of each)"
    # The check finds a planted one.
    (tmp_path / "kbert").mkdir()
    (tmp_path / "kbert" / "big.py").write_text("x = 1\n" * (MAX_MODULE_LINES + 1))
    (tmp_path / "kbert" / "small.py").write_text("x = 1\n" * MAX_MODULE_LINES)
    assert long_modules(tmp_path) == {"kbert/big.py": MAX_MODULE_LINES + 1}


# ----------------------------------------------------------------- fences, checked on the AST
# Each check is a function of a module's source, so the tests below show it catching a planted
# violation as well as passing on the tree.

# Named by TensorFlow's internals, not its public API: kbert.keras_internals alone uses them.
TENSORFLOW_INTERNALS = ("tensorflow.python", "tf.python")


def tensorflow_internals(source):
    """`tf.__internal__` and `tensorflow.python` in `source`: a list of (line, text)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr == "__internal__":
            found.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.Attribute) and ast.unparse(node) in TENSORFLOW_INTERNALS:
            found.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.ImportFrom | ast.Import):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            names += [alias.name for alias in node.names]
            if any(n == "tensorflow.python" or n.startswith("tensorflow.python.") for n in names):
                found.append((node.lineno, ast.unparse(node)))
    return sorted(found)


# A namedtuple's public API is spelt with an underscore.
NAMEDTUPLE_API = {"_asdict", "_field_defaults", "_fields", "_make", "_replace"}


def private_reads(source):
    """Reads of `x._name` in `source` where `x` is not `self`, `cls`, `super()` or a class the
    module defines: another object's private attribute, whose type the module does not own.

    (The attribute's name alone cannot tell: `GraphBytePairTokenizer` has a `self._ranks` of its
    own and read `bpe._ranks` of the `BytePairTokenizer` it wraps.) Writes are left to the code
    review; reading another class's private state is what breaks when that class changes.
    Returns a list of (line, text).
    """
    tree = ast.parse(source)
    classes = {node.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load)):
            continue
        name, owner = node.attr, node.value
        if not name.startswith("_") or name.startswith("__") or name in NAMEDTUPLE_API:
            continue
        if isinstance(owner, ast.Name) and (owner.id in ("self", "cls") or owner.id in classes):
            continue
        if isinstance(owner, ast.Call) and ast.unparse(owner.func) == "super":
            continue
        found.append((node.lineno, ast.unparse(node)))
    return sorted(found)


def _is_import(node):
    # `try: import fcntl` / `except ImportError: ...` (an optional module) counts as an import.
    if isinstance(node, ast.Try):
        return all(isinstance(child, ast.Import | ast.ImportFrom) for child in node.body)
    return isinstance(node, ast.Import | ast.ImportFrom)


def mid_file_imports(source):
    """Module-level imports after the first statement that is neither an import nor the module
    docstring: a list of (line, text)."""
    found, started = [], False
    for index, node in enumerate(ast.parse(source).body):
        if _is_import(node):
            if started:
                found.append((node.lineno, ast.unparse(node)))
        elif not (
            index == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        ):
            started = True
    return found


# Reads allowed by name, each with the reason beside it (none now).
PRIVATE_READS_ALLOWED = set()


def _offenders(check, roots, skip=(), allowed=()):
    return [
        f"{path.relative_to(ROOT)}:{line}: {text}"
        for root in roots
        for path in sorted((ROOT / root).rglob("*.py"))
        if path.relative_to(ROOT).as_posix() not in skip
        for line, text in check(path.read_text())
        if (path.relative_to(ROOT).as_posix(), text) not in allowed
    ]


def test_only_keras_internals_names_tensorflow_internals():
    offenders = _offenders(tensorflow_internals, PATHS, skip={"kbert/keras_internals.py"})
    assert not offenders, offenders


def test_no_module_reads_another_objects_private_attribute():
    offenders = _offenders(
        private_reads,
        ["kbert", "labs", "benchmarks"],
        skip={"kbert/keras_internals.py"},
        allowed=PRIVATE_READS_ALLOWED,
    )
    assert not offenders, offenders


# Mid-file imports allowed by name, each with its reason.
MID_FILE_IMPORTS_ALLOWED = {
    # A figure cell: matplotlib's file backend is chosen before pyplot is imported.
    ("labs/lab18_tokenizers.py", "import matplotlib"),
    ("labs/lab18_tokenizers.py", "import matplotlib.pyplot as plt"),
}


def test_imports_sit_at_the_top_of_each_module():
    # Labs and benchmarks quiet TensorFlow by importing `kbert.quiet` first, not by a call
    # between imports.
    offenders = _offenders(
        mid_file_imports, ["kbert", "labs", "benchmarks"], allowed=MID_FILE_IMPORTS_ALLOWED
    )
    assert not offenders, offenders


def private_imports(source, root=ROOT):
    """`from kbert... import _name` (or benchmarks...) where `_name` is a private name of that
    module, not a package-private module file (`kbert/text/_bert_text.py`): a list of
    (line, "module._name")."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ImportFrom) or not node.module:
            continue
        if node.module.split(".")[0] not in ("kbert", "benchmarks"):
            continue
        package = root.joinpath(*node.module.split("."))
        for alias in node.names:
            name = alias.name
            if not name.startswith("_") or name.startswith("__"):
                continue
            if (package / f"{name}.py").is_file() or (package / name).is_dir():
                continue  # a package-private module, imported within its package
            found.append((node.lineno, f"{node.module}.{name}"))
    return found


def test_no_module_imports_another_modules_private_name():
    offenders = _offenders(private_imports, ["kbert", "labs", "benchmarks"])
    assert not offenders, offenders


def test_each_check_reports_a_planted_violation():
    assert [line for line, _ in tensorflow_internals(PLANTED)] == [5, 6, 11, 12]
    assert private_reads(PLANTED) == [(17, "attention._split_heads"), (18, "bpe._ranks")]
    assert mid_file_imports(PLANTED) == [
        (11, "import tensorflow.python.ops"),
        (12, "from tensorflow.python import keras"),
        (13, "from kbert.text.masked_lm_masker import _corrupt, OUTPUT_KEYS"),
    ]
    assert private_imports(PLANTED) == [(13, "kbert.text.masked_lm_masker._corrupt")]
    assert tensorflow_internals(CLEAN) == private_reads(CLEAN) == mid_file_imports(CLEAN) == []
    assert private_imports(CLEAN) == []


PLANTED = '''"""A module with one of each."""
import tensorflow as tf

LEVEL = 2
module = tf.__internal__.tracking.AutoTrackable()
graph = tf.python.framework


class Block:
    pass
import tensorflow.python.ops
from tensorflow.python import keras
from kbert.text.masked_lm_masker import _corrupt, OUTPUT_KEYS


def heads(attention, bpe, x):
    attention._split_heads(x)
    return bpe._ranks
'''

CLEAN = '''"""A module that keeps every fence."""

from kbert.text import _bert_text  # a package-private module, not a private name

try:
    import fcntl
except ImportError:
    fcntl = None

import tensorflow as tf

Pair = __import__("collections").namedtuple("Pair", "left right")


class Ranks:
    _default = 0

    def __init__(self):
        self._ranks = {}
        self._size = len(self._ranks) + super()._size_of_base  # parsed, never run

    @classmethod
    def make(cls):
        return cls._default, Ranks._default, Pair(1, 2)._replace(left=0)


def main():
    import numpy as np  # inside a function: not a mid-file import

    return np, tf.Module(), fcntl
'''
