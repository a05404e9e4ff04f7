"""benchmarks/train_step.py on a tiny batch: kbert against the PyTorch peer, same inputs.

The PyTorch side runs only where torch and transformers are installed (benchmark-only peers,
benchmarks/requirements-peer.txt). The peak is pinned so the check is of the arithmetic: both
sides' MFU divide the same FLOPs by the same peak.
"""

import json

import pytest

from benchmarks import train_step
from tests.benchmarks.peer_checks import check_comparison, check_peer_facts, skip_without_peers


@pytest.mark.slow
def test_the_pytorch_peer_trains_the_same_classifier_and_is_compared_per_dtype(
    minilm_dir, tmp_path, monkeypatch
):
    skip_without_peers("PyTorch side")
    monkeypatch.setattr(train_step, "measure_matmul_peak", lambda dtype: 1.0)
    record = tmp_path / "train_step.json"
    result = train_step.main(
        [
            "--checkpoint",
            str(minilm_dir),
            "--batch-size",
            "2",
            "--sequence-length",
            "16",
            "--steps",
            "1",
            "--warmup",
            "1",
            "--jit",
            "false",
            "--workloads",
            "full",
            "--peers",
            "torch",
            "--record",
            str(record),
        ]
    )
    assert json.loads(record.read_text())["results"] == json.loads(json.dumps(result))
    check_peer_facts(result["torch_peer"])
    assert "keras_hub_tokens_per_s" not in result
    best = {}
    for row in result["configurations"]:
        if row["kbert_tokens_per_s"] > best.get(row["dtype"], (0,))[0]:
            best[row["dtype"]] = (row["kbert_tokens_per_s"], row["kbert_mfu"])
    check_comparison(result["torch"], best)
