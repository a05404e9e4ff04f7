"""Running a lab as a user does: `python labs/<lab>.py ...` in a fresh process from the root."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_lab(lab, arguments, data_root, timeout=600):
    """Runs `lab` (a path under the root) with `arguments`, reading data from `data_root`.

    Returns:
        `subprocess.CompletedProcess` with text stdout and stderr.
    """
    env = {**os.environ, "PYTHONPATH": str(ROOT), "KBERT_DATA_DIR": str(data_root)}
    return subprocess.run(
        [sys.executable, lab, *arguments],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
