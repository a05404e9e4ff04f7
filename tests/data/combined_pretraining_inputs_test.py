"""The batches of MLM alone, MLM + NSP, MLM + SOP and span masking + SBO, from documents."""

import numpy as np
import pytest

from kbert.data.combined_pretraining_inputs import (
    COMBINED_OBJECTIVES,
    combined_pretraining_datasets,
)
from kbert.data.pretraining_inputs import special_token_ids
from kbert.text import WordPieceTokenizer

WORDS = ["the", "old", "man", "looked", "at", "sea", "and", "boat", "a", "fish", "."]
VOCABULARY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]
TOKENIZER = WordPieceTokenizer(VOCABULARY)
DOCUMENTS = [
    ["The old man looked at the sea. The boat and the sea. A fish looked at the man."],
    ["A man and a boat. The fish and the old sea. The man looked at a fish."],
] * 4


def batches(objective, count=30, block_length=24):
    train, valid = combined_pretraining_datasets(
        objective, (DOCUMENTS, DOCUMENTS[:2]), TOKENIZER, block_length, 4, seed=3
    )
    assert valid is not None
    return [{k: v.numpy() for k, v in b.items()} for b in train.take(count)]


@pytest.mark.parametrize("objective", COMBINED_OBJECTIVES)
def test_every_combination_masks_its_batches_for_the_mlm_head(objective):
    drawn = batches(objective)
    for batch in drawn:
        assert batch["token_ids"].shape == (4, 24)
        assert batch["mask_positions"].shape == batch["mask_ids"].shape
    originals = np.concatenate([b["mask_ids"][b["mask_weights"] > 0] for b in drawn])
    assert originals.size > 0  # something to predict, never a role token
    assert not np.isin(originals, special_token_ids(TOKENIZER)).any()


@pytest.mark.parametrize("task", ["nsp", "sop"])
def test_pair_combinations_carry_both_labels_and_two_segments(task):
    drawn = batches(f"masked+{task}")
    labels = np.concatenate([b["next_sentence_labels"] for b in drawn])
    assert set(labels.tolist()) == {0, 1}  # about half each, drawn once from the seed
    assert 0.2 < labels.mean() < 0.8, labels.mean()
    segments = np.concatenate([b["segment_ids"] for b in drawn])
    assert segments.max() == 1  # B is segment 1
    assert all("mask_left_boundary" not in b for b in drawn)


def test_span_masking_gives_the_boundaries_of_contiguous_spans():
    drawn = batches("span+sbo")
    for batch in drawn:
        weights = batch["mask_weights"] > 0
        positions = batch["mask_positions"][weights]
        left, right = batch["mask_left_boundary"][weights], batch["mask_right_boundary"][weights]
        relative = batch["mask_relative_positions"][weights]
        # Each masked token sits strictly inside its span's boundaries, at its offset from s - 1.
        assert (left < positions).all() and (positions < right).all()
        assert (positions - left == relative).all()
        assert "next_sentence_labels" not in batch
    lengths = np.concatenate(
        [
            b["mask_right_boundary"][b["mask_weights"] > 0]
            - b["mask_left_boundary"][b["mask_weights"] > 0]
            - 1
            for b in drawn
        ]
    )
    assert lengths.max() > 1  # spans, not single tokens


def test_an_unknown_combination_is_refused_by_name():
    with pytest.raises(ValueError, match="objective must be one of .*received 'masked\\+sbo'"):
        combined_pretraining_datasets("masked+sbo", (DOCUMENTS, None), TOKENIZER, 24, 4)
    assert combined_pretraining_datasets("masked", (DOCUMENTS, None), TOKENIZER, 24, 4)[1] is None
    with pytest.raises(TypeError, match="unexpected keyword argument 'sed'"):
        combined_pretraining_datasets("masked", (DOCUMENTS, None), TOKENIZER, 24, 4, sed=1)
