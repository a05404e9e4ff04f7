"""Runs benchmarks/parity.py as a user would and holds it to the foundation issue's bars."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_parity_script_meets_the_bars(minilm_dir, data_root):
    result = subprocess.run(
        [
            sys.executable,
            "benchmarks/parity.py",
            "--checkpoint",
            str(minilm_dir),
            "--data-dir",
            str(data_root),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["sentences"] == 500 + 872
    assert report["encoder_max_abs_diff"] <= 1e-4
    assert report["embedding_min_cosine"] >= 0.99999
    assert report["tokenizer_agreement"] == 1.0
    assert report["tokenizer_texts"] == 5452 + 500 + 872
