import numpy as np
import pytest

from kbert.models import Encoder, grow_vocabulary
from kbert.text import WordPieceTokenizer

VOCABULARY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"w{i}" for i in range(45)]


def _start():
    return Encoder.from_preset("tiny"), WordPieceTokenizer(VOCABULARY)


def test_new_rows_are_appended_and_everything_else_is_copied():
    encoder, tokenizer = _start()
    grown, grown_tokenizer = grow_vocabulary(encoder, tokenizer, ["[CLF]", "[SEP]"])
    assert grown_tokenizer.token_to_id("[CLF]") == 50 and grown_tokenizer.vocabulary_size() == 51
    table = grown.embeddings.token_embedding.embeddings.numpy()
    old_table = encoder.embeddings.token_embedding.embeddings.numpy()
    np.testing.assert_array_equal(table[:50], old_table)
    np.testing.assert_allclose(table[50], old_table.mean(axis=0), rtol=1e-6)
    for old, new in zip(encoder.weights, grown.weights, strict=True):
        if "token_embedding" not in new.path:
            np.testing.assert_array_equal(old.numpy(), new.numpy())
    # Old ids mean the same thing: outputs on old tokens are unchanged.
    x = {
        "token_ids": np.array([[2, 7, 9, 3]]),
        "segment_ids": np.zeros((1, 4), "int32"),
        "padding_mask": np.ones((1, 4), "int32"),
    }
    np.testing.assert_allclose(
        grown(x)["sequence_output"], encoder(x)["sequence_output"], atol=1e-6
    )
    assert encoder.config.vocabulary_size == 50  # the input is untouched


def test_normal_initializer_and_mismatch_error():
    encoder, tokenizer = _start()
    grown, _ = grow_vocabulary(encoder, tokenizer, ["[CLF]"], initializer="normal")
    assert abs(float(grown.embeddings.token_embedding.embeddings.numpy()[50].std()) - 0.02) < 0.01
    with pytest.raises(ValueError, match="initializer must be one of"):
        grow_vocabulary(encoder, tokenizer, ["[CLF]"], initializer="zeros")
    with pytest.raises(ValueError, match="the tokenizer has 5 tokens but the encoder"):
        grow_vocabulary(encoder, WordPieceTokenizer(VOCABULARY[:5]), ["[CLF]"])
