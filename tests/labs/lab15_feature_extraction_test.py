"""lab15_feature_extraction as a user runs it, on a few questions and two epochs."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_a_small_run_prints_the_table_and_writes_the_results(tmp_path, data_root, minilm_dir):
    command = [
        sys.executable,
        "labs/lab15_feature_extraction.py",
        "--checkpoint",
        str(minilm_dir),
        "--max-train-examples",
        "48",
        "--max-eval-examples",
        "16",
        "--epochs",
        "2",
        "--patience",
        "1",
        "--mlp-units",
        "8",
        "--output-dir",
        str(tmp_path / "run"),
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "KBERT_DATA_DIR": str(data_root)}
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "features    pooling  head    val acc  test acc" in result.stdout
    assert "learned scalar-mix weights" in result.stdout

    report = json.loads((tmp_path / "run" / "results.json").read_text())
    assert report["examples"] == {"train": 48, "validation": 16, "test": 16}
    assert set(report["extraction"]) == {"cls", "mean"}
    runs = report["runs"]
    assert {(r["pooling"], r["layers"], r["head"]) for r in runs} == {
        (pooling, layers, head)
        for pooling in ("cls", "mean")
        for layers in ("top", "last4", "scalar_mix")
        for head in ("linear", "mlp")
    }
    for run in runs:
        assert 0.0 <= run["validation_accuracy"] <= 1.0 and 0.0 <= run["test_accuracy"] <= 1.0
        assert 1 <= run["epochs"] <= 2
        if run["layers"] == "scalar_mix":  # embeddings + 6 blocks of MiniLM-L6
            assert len(run["mixing_weights"]) == 7
            assert sum(run["mixing_weights"]) == pytest.approx(1.0, abs=1e-3)
