"""kbert's structure in numbers: lines and files per package, the longest functions, imports
made inside functions, and the README's size, for a checkout or any commit.

    python -m benchmarks.code_structure                 # this checkout
    python -m benchmarks.code_structure --commit 5b942c7   # a commit, read through `git show`

Issue #16 compares the tree before its work (5b942c7) with today's.
"""

import argparse
import ast
import collections
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _sources(commit):
    """`(path relative to kbert/, text)` of every kbert module, at `commit` or in the checkout."""
    if commit is None:
        for path in sorted((ROOT / "kbert").rglob("*.py")):
            yield path.relative_to(ROOT / "kbert"), path.read_text(encoding="utf-8")
        return
    names = subprocess.run(
        ["git", "ls-tree", "-r", "--name-only", commit, "kbert"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    for name in sorted(name for name in names if name.endswith(".py")):
        text = subprocess.run(
            ["git", "show", f"{commit}:{name}"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        yield Path(name).relative_to("kbert"), text


def _imports_inside_functions(node, inside=False):
    """`(all, of kbert)`: import statements under `node` that sit in a function body."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
        names += [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
        return (int(inside), int(inside and any(n.startswith("kbert") for n in names)))
    inside = inside or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    counts = [_imports_inside_functions(child, inside) for child in ast.iter_child_nodes(node)]
    return (sum(c[0] for c in counts), sum(c[1] for c in counts))


def structure(commit=None, longest=6):
    """The numbers: per-package lines and files, the longest functions, in-function imports."""
    lines, files, functions = collections.Counter(), collections.Counter(), []
    inner_imports = inner_kbert_imports = 0
    for relative, text in _sources(commit):
        package = relative.parts[0] if len(relative.parts) > 1 else "(top)"
        lines[package] += len(text.splitlines())
        files[package] += 1
        tree = ast.parse(text)
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions.append((node.end_lineno - node.lineno + 1, f"{relative}:{node.name}"))
        every, of_kbert = _imports_inside_functions(tree)
        inner_imports, inner_kbert_imports = inner_imports + every, inner_kbert_imports + of_kbert
    if commit is None:
        readme = (ROOT / "README.md").stat().st_size
    else:
        readme = len(
            subprocess.run(
                ["git", "show", f"{commit}:README.md"], cwd=ROOT, capture_output=True, check=True
            ).stdout
        )
    return {
        "readme_bytes": readme,
        "lines": sum(lines.values()),
        "files": sum(files.values()),
        "imports_inside_functions": inner_imports,
        "kbert_imports_inside_functions": inner_kbert_imports,
        "packages": {name: [lines[name], files[name]] for name in sorted(lines)},
        "longest_functions": sorted(functions, reverse=True)[:longest],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commit", default=None, help="a commit to read (default: the checkout)")
    args = parser.parse_args()
    numbers = structure(args.commit)
    print(
        f"README {numbers['readme_bytes']:,} bytes; kbert: {numbers['lines']:,} lines in "
        f"{numbers['files']} files; {numbers['imports_inside_functions']} imports inside functions "
        f"({numbers['kbert_imports_inside_functions']} of kbert modules)"
    )
    print(" | ".join(f"{name} {n:,} ({f})" for name, (n, f) in numbers["packages"].items()))
    for length, name in numbers["longest_functions"]:
        print(f"  {length} lines  {name}")


if __name__ == "__main__":
    main()
