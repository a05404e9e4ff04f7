#!/usr/bin/env bash
# Installs the benchmarks' peers (benchmarks/requirements-peer.txt: PyTorch, transformers, ONNX
# Runtime) into a folder of their own, never into kbert's environment, as an overlay that holds
# only what that environment lacks:
#
#   bash benchmarks/install_peers.sh [FOLDER]        # default ../kbert-peers
#   PYTHONPATH=../kbert-peers python -m benchmarks.serving ...
#   PYTHONPATH=../kbert-peers nohup python -m benchmarks.record_labs --course --resume &
#
# - The packages kbert's environment has are pinned to its versions (a constraints file from
#   `pip freeze`) and then removed from the folder, so the overlay shadows none of them.
# - PyPI's torch for Linux is the CUDA build. It runs on a CPU as it is, but it pulls in
#   triton, and importing triton in a process that has already loaded TensorFlow segfaults on
#   these machines: triton is removed (torch runs on a CPU without it).
set -euo pipefail
target="$(realpath -m "${1:-$(dirname "$0")/../../kbert-peers}")"  # FOLDER from the caller's folder
cd "$(dirname "$0")/.."
python="${PYTHON:-.venv/bin/python}"
constraints="$(mktemp)"
trap 'rm -f "$constraints"' EXIT
"$python" -m pip freeze --exclude-editable | grep -v "^-e " > "$constraints"
"$python" -m pip install --quiet --disable-pip-version-check --upgrade --target "$target" \
    -c "$constraints" -r benchmarks/requirements-peer.txt
"$python" - "$target" <<'PYTHON'
"""Removes from the overlay what kbert's environment already has, and triton: each such
distribution's files as its RECORD lists them (a package without top_level.txt, or one sharing
a namespace folder such as google/ or nvidia/, is removed exactly), then the folders left empty."""
import sys
import sysconfig
from importlib import metadata
from pathlib import Path


def key(name):
    return name.lower().replace("-", "_").replace(".", "_")


target = Path(sys.argv[1]).resolve()
have = {key(dist.metadata["Name"]) for dist in metadata.distributions(
    path=[sysconfig.get_paths()["purelib"]])}
removed, folders = [], set()
for dist in metadata.distributions(path=[str(target)]):
    name = key(dist.metadata["Name"])
    if name not in have and name != "triton":
        continue
    for listed in dist.files or []:  # its RECORD, the .dist-info folder's own files included
        path = Path(dist.locate_file(listed)).resolve()
        if path.is_relative_to(target) and path.is_file():
            path.unlink()
            folders.update(parent for parent in path.parents if parent.is_relative_to(target))
    removed.append(name)
for folder in sorted(folders, key=lambda path: len(path.parts), reverse=True):
    if folder != target and folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
print(f"{target}: peers installed; left to kbert's environment or removed: {', '.join(removed)}")
PYTHON
