import numpy as np
import pytest

from kbert.checkpoints import load_pretrained, save_pretrained
from kbert.models import Encoder
from kbert.text import WordPieceTokenizer

VOCABULARY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"w{i}" for i in range(45)]


def test_kbert_directory_round_trip_with_dtype_change(tmp_path):
    encoder = Encoder.from_preset("tiny")
    save_pretrained(encoder, WordPieceTokenizer(VOCABULARY), tmp_path / "model")
    loaded, tokenizer = load_pretrained(tmp_path / "model", dtype="mixed_bfloat16")
    assert tokenizer.get_vocabulary() == VOCABULARY
    assert loaded.embeddings.dtype_policy.name == "mixed_bfloat16"
    for old, new in zip(encoder.weights, loaded.weights, strict=True):
        np.testing.assert_array_equal(old.numpy(), new.numpy())


def test_save_refuses_to_replace_without_overwrite(tmp_path):
    encoder, tokenizer = Encoder.from_preset("tiny"), WordPieceTokenizer(VOCABULARY)
    save_pretrained(encoder, tokenizer, tmp_path / "model")
    with pytest.raises(ValueError, match="exists; pass overwrite=True"):
        save_pretrained(encoder, tokenizer, tmp_path / "model")
    save_pretrained(encoder, tokenizer, tmp_path / "model", overwrite=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]


def test_bad_names_and_incomplete_directories(tmp_path):
    with pytest.raises(ValueError, match="is neither 'minilm_l6' nor an existing directory"):
        load_pretrained(tmp_path / "missing")
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "encoder.keras").write_bytes(b"")
    with pytest.raises(ValueError, match="holds encoder.keras but no vocab.txt"):
        load_pretrained(tmp_path / "half")


def test_minilm_loads_by_name(minilm_dir):
    encoder, tokenizer = load_pretrained("minilm_l6")
    assert encoder.config.hidden_dim == 384 and tokenizer.vocabulary_size() == 30522
