"""benchmarks/torch_peer.py: which sides run, why the PyTorch peer is skipped, kbert/peer ratios."""

import argparse
import importlib.util

import pytest

from benchmarks import torch_peer


def parse(argv, monkeypatch, missing=()):
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name: None if name in missing else real_find_spec(name),
    )
    parser = argparse.ArgumentParser()
    torch_peer.add_peers_argument(parser, others=("keras_hub",))
    args = parser.parse_args(argv)
    return torch_peer.chosen_peers(parser, args, others=("keras_hub",))


def test_without_torch_the_default_run_skips_the_peer_and_says_why(monkeypatch):
    peers, reason = parse([], monkeypatch, missing=("torch",))
    assert peers == ["keras_hub"]
    assert reason.startswith("torch") and "not importable" in reason
    assert "PYTHONPATH=../kbert-peers" in reason


def test_asking_for_the_peer_without_torch_is_an_error(monkeypatch):
    with pytest.raises(SystemExit):
        parse(["--peers", "keras_hub,torch"], monkeypatch, missing=("transformers",))


def test_peers_are_chosen_by_name(monkeypatch):
    assert parse(["--peers", "none"], monkeypatch) == ([], "not requested (--peers none)")
    assert parse(["--peers", "keras_hub"], monkeypatch)[0] == ["keras_hub"]
    with pytest.raises(SystemExit):
        parse(["--peers", "jax"], monkeypatch)


def test_the_comparison_takes_kbert_s_best_configuration_of_each_dtype():
    rows = [
        {"dtype": "float32", "kbert_tokens_per_s": 100.0},
        {"dtype": "float32", "kbert_tokens_per_s": 150.0},
        {"dtype": "mixed_bfloat16", "kbert_tokens_per_s": 240.0},
    ]
    speeds = {
        "float32": {"tokens_per_s": 100.0, "mfu": 0.1},
        "mixed_bfloat16": {"tokens_per_s": 200.0, "mfu": 0.05},
    }
    comparison = torch_peer.compare(rows, speeds)
    assert comparison["float32"] == {
        "torch_tokens_per_s": 100.0,
        "torch_mfu": 0.1,
        "kbert_tokens_per_s": 150.0,
        "ratio": 1.5,
        "goal_met": True,
    }
    assert comparison["mixed_bfloat16"]["ratio"] == 1.2
    assert comparison["mixed_bfloat16"]["goal_met"] is False
