"""benchmarks/pretrain_speed.py on a tiny batch: kbert's causal LM against GPT-2 in PyTorch.

The PyTorch side runs only where torch and transformers are installed (benchmark-only peers,
benchmarks/requirements-peer.txt). The peak is pinned so the check is of the arithmetic: both
sides' MFU divide the same FLOPs by the same peak.
"""

import json

import pytest

from benchmarks import pretrain_speed
from tests.benchmarks.peer_checks import check_comparison, check_peer_facts, skip_without_peers


@pytest.mark.slow
def test_the_gpt2_peer_trains_on_the_same_block_and_is_compared_per_dtype(tmp_path, monkeypatch):
    skip_without_peers("PyTorch side")
    monkeypatch.setattr(pretrain_speed, "measure_matmul_peak", lambda dtype: 1.0)
    record = tmp_path / "pretrain_speed.json"
    result = pretrain_speed.main(
        [
            "--batch-size",
            "1",
            "--sequence-length",
            "8",
            "--steps",
            "1",
            "--warmup",
            "1",
            "--jit",
            "false",
            "--peers",
            "torch",
            "--record",
            str(record),
        ]
    )
    assert json.loads(record.read_text())["results"] == json.loads(json.dumps(result))
    check_peer_facts(result["torch_peer"])
    check_comparison(
        result["torch"],
        {dtype: (result[dtype]["tokens_per_s"], result[dtype]["mfu"]) for dtype in result["torch"]},
    )


def test_a_post_ln_preset_has_no_gpt2_peer():
    skip_without_peers("PyTorch side")
    args, config = pretrain_speed.parse_arguments(["--preset", "tiny", "--sequence-length", "8"])
    assert not config.norm_first and args.peers == []
    assert args.torch_skipped.startswith("GPT-2 is pre-LN; this preset is post-LN")
    # Named, the peer must run: a run that cannot have it fails instead of recording kbert alone.
    with pytest.raises(SystemExit):
        pretrain_speed.parse_arguments(
            ["--preset", "tiny", "--sequence-length", "8", "--peers", "torch"]
        )
