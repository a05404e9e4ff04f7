"""benchmarks/long_inputs.py on a handful of IMDb reviews: every training × reading strategy."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_long_inputs_benchmark_scores_every_strategy(tiny_models, data_root, tmp_path):
    record = tmp_path / "long_inputs.json"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.long_inputs",
            "--model",
            str(tiny_models[1]),  # the BERT stand-in
            "--data-dir",
            str(data_root),
            "--train-examples",
            "16",
            "--test-examples",
            "8",
            "--epochs",
            "1",
            "--sequence-length",
            "32",
            "--batch-size",
            "8",
            "--training",  # the default is head and head_tail; windows training is opt-in
            "head",
            "head_tail",
            "windows",
            "--record",
            str(record),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["test_reviews"] == 8 and summary["train_reviews"] == 16
    assert set(summary["accuracy"]) == {"head", "head_tail", "windows"}
    for row in summary["accuracy"].values():
        assert set(row) == {"head", "head_tail", "window_mean", "window_max"}
        assert all(0.0 <= value <= 1.0 for value in row.values())
    # Every test review is longer than the 32-token window: windows read it in several pieces.
    assert summary["windows_per_review"]["head"] == 1.0
    assert summary["windows_per_review"]["window_mean"] > 2.0
    assert json.loads(record.read_text())["results"]["accuracy"] == summary["accuracy"]
