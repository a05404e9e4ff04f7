"""benchmarks/text_to_text_start.py as a user runs it: two books, a few pretraining steps, each
checkpoint measured and fine-tuned, the decoder reset, the record written."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_every_checkpoint_is_measured_and_fine_tuned(tmp_path, data_root):
    record = tmp_path / "text_to_text_start.json"
    arguments = (
        "--max-documents 2 --vocabulary-size 1500 --steps 4 --checkpoints 0,2,4 --rates 1e-3 "
        "--labelled 16 --held-out-batches 2 --hidden-dim 32 --num-heads 2 --layers 1 "
        "--intermediate-dim 64 --block-length 32 --batch-size 4 --epochs 1 --min-steps 2"
    ).split()
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks.text_to_text_start", *arguments]
        + ["--run-dir", str(tmp_path / "run"), "--record", str(record)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "KBERT_DATA_DIR": str(data_root)},
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert set(report["checkpoints"]) == {"0", "2", "4"}
    for scores in report["checkpoints"].values():
        corruption = scores["span_corruption"]
        assert 0.0 <= corruption["content_token_accuracy"] <= 1.0
        assert set(scores["trec"]) == {"0.001"}
    assert set(report["decoder_reset"]) == {"4"}
    assert json.loads(record.read_text())["results"]["steps"] == 4
