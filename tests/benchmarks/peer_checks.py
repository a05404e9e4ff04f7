"""What the speed benchmarks' tests check of a record's PyTorch peer side."""

import importlib.util

import pytest

from benchmarks import torch_peer

COMPARISON_KEYS = {"torch_tokens_per_s", "torch_mfu", "kbert_tokens_per_s", "ratio", "goal_met"}


def skip_without_peers(side):
    missing = [name for name in torch_peer.PEER_MODULES if importlib.util.find_spec(name) is None]
    if missing:
        pytest.skip(
            f"the {side} needs the benchmark-only peers {missing} "
            "(bash benchmarks/install_peers.sh, then PYTHONPATH=../kbert-peers)"
        )


def check_peer_facts(facts):
    import torch
    import transformers

    assert facts["versions"] == {
        "torch": torch.__version__,
        "transformers": transformers.__version__,
    }
    assert facts["threads"]["torch_intra_op"] == torch_peer.tensorflow_threads()[0]
    assert facts["goal_ratio"] == torch_peer.GOAL_RATIO


def check_comparison(comparison, kbert_speeds):
    """`kbert_speeds`: dtype → (kbert's best tokens/s, its MFU), from the record's kbert side.

    The same FLOPs over the same peak make MFU proportional to tokens/s on both sides.
    """
    assert set(comparison) == set(kbert_speeds)
    for dtype, peer in comparison.items():
        assert set(peer) == COMPARISON_KEYS
        tokens_per_s, mfu = kbert_speeds[dtype]
        assert peer["torch_tokens_per_s"] > 0
        assert peer["kbert_tokens_per_s"] == pytest.approx(tokens_per_s, abs=0.051)
        ratio = peer["kbert_tokens_per_s"] / peer["torch_tokens_per_s"]
        # tokens/s are recorded to 0.1, the ratio from the unrounded speeds: allow that much.
        rounding = 0.06 / peer["kbert_tokens_per_s"] + 0.06 / peer["torch_tokens_per_s"] + 1e-3
        assert peer["ratio"] == pytest.approx(ratio, rel=rounding)
        assert peer["torch_mfu"] == pytest.approx(mfu / ratio, rel=rounding + 1e-3)
        assert peer["goal_met"] == (peer["ratio"] >= torch_peer.GOAL_RATIO)
