"""Adapter sets as files: written whole or not at all (the round trip is in peft_test)."""

import numpy as np
import pytest

from kbert.checkpoints import load_adapters, save_adapters
from kbert.models import Encoder, add_adapters


def test_a_failed_save_leaves_the_earlier_file_and_no_temporary(tmp_path):
    encoder = add_adapters(Encoder.from_preset("tiny"), bottleneck_dim=4, name="sst2")
    path = tmp_path / "adapters.npz"
    save_adapters(encoder, path, "sst2")
    before = path.read_bytes()
    with pytest.raises(ValueError, match="the encoder has no adapters named 'trec'"):
        save_adapters(encoder, path, "trec")
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["adapters.npz"]
    with np.load(path) as data:
        assert int(data["__bottleneck_dim__"]) == 4


def test_a_file_without_its_spec_needs_the_set_added_first(tmp_path):
    encoder = add_adapters(Encoder.from_preset("tiny"), bottleneck_dim=4, name="sst2")
    path = tmp_path / "bare.npz"
    with np.load(_saved(encoder, tmp_path)) as data:
        np.savez(path, **{key: data[key] for key in data.files if not key.startswith("__")})
    with pytest.raises(ValueError, match=r"does not say how its adapters were added"):
        load_adapters(Encoder.from_preset("tiny"), path, "sst2")


def _saved(encoder, directory):
    path = directory / "full.npz"
    save_adapters(encoder, path, "sst2")
    return path
