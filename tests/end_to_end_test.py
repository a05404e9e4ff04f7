"""Bad input through the whole pipeline: real checkpoint → preprocessor → encoder."""

import numpy as np
import pytest
import tensorflow as tf

from kbert.checkpoints import load_hf_bert


@pytest.fixture(scope="module")
def pipeline(minilm_dir):
    from kbert.text import BertPreprocessor

    encoder, tokenizer = load_hf_bert(minilm_dir)
    return encoder, tokenizer, BertPreprocessor(tokenizer, sequence_length=32)


@pytest.mark.slow
def test_bad_texts_give_defined_finite_outputs(pipeline):
    encoder, tokenizer, preprocessor = pipeline
    texts = tf.constant(
        [
            "",  # empty
            " \t\n  ",  # whitespace only
            "bank " * 25_000,  # 125,000 characters
            "I love 🍕 and 北京 ✓",  # non-BMP emoji, CJK
            b"caf\xc3\xa9 \xff\xfe broken",  # invalid UTF-8 bytes
        ]
    )
    inputs = preprocessor(texts)
    ids = inputs["token_ids"].numpy()
    cls, sep, pad = tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id
    # Empty and whitespace-only texts pack to [CLS] [SEP] and padding.
    for row in ids[:2]:
        assert row[:2].tolist() == [cls, sep] and (row[2:] == pad).all()
    # The long text is truncated to the sequence length, never dropped.
    assert ids[2, 0] == cls and ids[2, -1] == sep and (ids[2] != pad).all()
    assert tokenizer.token_to_id("北") in ids[3]
    assert tokenizer.unknown_token_id in ids[3]  # the emoji has no WordPiece
    assert tokenizer.token_to_id("broken") in ids[4]
    outputs = encoder(inputs)
    assert np.isfinite(outputs["sequence_output"].numpy()).all()


@pytest.mark.slow
def test_pair_with_one_side_empty(pipeline):
    _, tokenizer, preprocessor = pipeline
    inputs = preprocessor((tf.constant(["where is the bank"]), tf.constant([""])))
    ids = inputs["token_ids"].numpy()[0].tolist()
    cls, sep = tokenizer.cls_token_id, tokenizer.sep_token_id
    assert ids[:7] == [cls] + tokenizer(tf.constant("where is the bank")).numpy().tolist() + [
        sep,
        sep,
    ]
    assert inputs["segment_ids"].numpy()[0, :7].tolist() == [0, 0, 0, 0, 0, 0, 1]


@pytest.mark.slow
def test_sequence_longer_than_the_position_table(pipeline):
    encoder, _, _ = pipeline
    with pytest.raises(ValueError, match="max_sequence_length=512"):
        encoder(encoder.dummy_inputs(1, 600))
