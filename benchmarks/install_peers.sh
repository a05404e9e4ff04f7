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
cd "$(dirname "$0")/.."
target="${1:-../kbert-peers}"
python="${PYTHON:-.venv/bin/python}"
constraints="$(mktemp)"
trap 'rm -f "$constraints"' EXIT
"$python" -m pip freeze --exclude-editable | grep -v "^-e " > "$constraints"
"$python" -m pip install --quiet --disable-pip-version-check --target "$target" \
    -c "$constraints" -r benchmarks/requirements-peer.txt
"$python" - "$target" <<'PYTHON'
"""Removes from the overlay what kbert's environment already has, and triton."""
import shutil
import sys
import sysconfig
from importlib import metadata
from pathlib import Path

target = Path(sys.argv[1])
have = {dist.metadata["Name"].lower().replace("-", "_") for dist in metadata.distributions(
    path=[sysconfig.get_paths()["purelib"]])}
removed = []
for info in sorted(target.glob("*.dist-info")):
    name = info.name.split("-")[0].lower().replace("-", "_")
    if name not in have and name != "triton":
        continue
    tops = (info / "top_level.txt").read_text().split() if (info / "top_level.txt").is_file() else [name]
    for top in tops:
        for path in (target / top, target / f"{top}.py"):
            if path.is_dir():
                shutil.rmtree(path)
            elif path.exists():
                path.unlink()
    shutil.rmtree(info)
    removed.append(name)
print(f"{target}: peers installed; left to kbert's environment or removed: {', '.join(removed)}")
PYTHON
