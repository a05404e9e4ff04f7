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
        "--seeds",
        "2",
        "--output-dir",
        str(tmp_path / "run"),
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "KBERT_DATA_DIR": str(data_root)}
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "features    pooling  head    val acc  test acc (mean ± sd, 2 seeds)" in result.stdout
    assert "top linear: mean − cls" in result.stdout and "cls top: mlp − linear" in result.stdout
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
        # Two heads per setting, seeds 0 and 1; the row is their mean, with its sd.
        assert [seed["seed"] for seed in run["seeds"]] == [0, 1]
        tests = [seed["test_accuracy"] for seed in run["seeds"]]
        assert run["test_accuracy"] == pytest.approx(sum(tests) / 2)
        assert run["test_accuracy_sd"] is not None
        assert 1 <= run["epochs"] <= 2
        if run["layers"] == "scalar_mix":  # embeddings + 6 blocks of MiniLM-L6
            assert len(run["mixing_weights"]) == 7
            assert sum(run["mixing_weights"]) == pytest.approx(1.0, abs=1e-3)
    # Per pooling: 3 mlp − linear, 4 wider − top; per layers × head: 6 mean − cls.
    compared = [row["compared"] for row in report["differences"]]
    assert len(compared) == 2 * 3 + 2 * 4 + 6
    assert all(row["difference"]["n"] == 2 for row in report["differences"])
