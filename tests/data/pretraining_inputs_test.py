"""The batches of each pretraining objective, from documents."""

import numpy as np
import pytest

from kbert.data.pretraining_inputs import pretraining_datasets, special_token_ids
from kbert.text import WordPieceTokenizer

WORDS = ["the", "old", "man", "looked", "at", "sea", "and", "boat", "."]
VOCABULARY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS, "<s0>", "<s1>", "<s2>"]
DOCUMENTS = [["the old man looked at the sea .", "the boat and the sea ."]] * 6
TOKENIZER = WordPieceTokenizer(VOCABULARY)


def test_causal_blocks_repeat_and_the_held_out_ones_are_padded():
    train, valid = pretraining_datasets("causal", DOCUMENTS, DOCUMENTS[:1], TOKENIZER, 8, 2)
    batch = next(iter(train.take(50)))  # repeats past the corpus (a few batches)
    assert batch["token_ids"].shape == (2, 8)
    rows = np.concatenate([b["padding_mask"].numpy() for b in valid])
    assert rows.sum() == 14  # one held-out document's 14 tokens, the tail padded
    assert pretraining_datasets("causal", DOCUMENTS, None, TOKENIZER, 8, 2)[1] is None


@pytest.mark.parametrize("objective", ["masked", "electra"])
def test_masked_objectives_mask_full_sentence_blocks(objective):
    train, valid = pretraining_datasets(objective, DOCUMENTS, DOCUMENTS, TOKENIZER, 12, 4, seed=1)
    masked = [batch for batch in train.take(40)]
    weights = np.concatenate([b["mask_weights"].numpy().ravel() for b in masked])
    assert masked[0]["token_ids"].shape == (4, 12) and weights.sum() > 0
    positions = np.concatenate(
        [
            np.take_along_axis(b["token_ids"].numpy(), b["mask_positions"].numpy(), axis=1)[
                b["mask_weights"].numpy() > 0
            ]
            for b in masked
        ]
    )
    mask_share = np.mean(positions == TOKENIZER.mask_token_id)
    if objective == "electra":  # [MASK] only: the generator's samples are the corruption
        assert mask_share == 1.0
    else:  # BERT's 80/10/10 over many draws
        assert 0.6 < mask_share < 0.95, mask_share
    originals = np.concatenate(
        [b["mask_ids"].numpy()[b["mask_weights"].numpy() > 0] for b in masked]
    )  # the tokens that were masked: never [PAD], [UNK], [CLS] or [SEP]
    assert originals.size and not np.isin(originals, special_token_ids(TOKENIZER)).any()
    assert valid is not None


def test_span_corruption_needs_sentinels_and_gives_encoder_decoder_batches():
    with pytest.raises(ValueError, match="span_corruption needs sentinel_ids"):
        pretraining_datasets("span_corruption", DOCUMENTS, None, TOKENIZER, 20, 2)
    sentinels = [TOKENIZER.token_to_id(t) for t in ("<s0>", "<s1>", "<s2>")]
    train, valid = pretraining_datasets(
        "span_corruption", DOCUMENTS, DOCUMENTS, TOKENIZER, 20, 2, sentinel_ids=sentinels
    )
    x, y = next(iter(train))
    assert set(x) == {
        "encoder_token_ids",
        "encoder_padding_mask",
        "decoder_token_ids",
        "decoder_padding_mask",
    }
    assert int(y[0, 0]) == sentinels[0] and valid is not None


def test_an_unknown_objective_is_refused():
    with pytest.raises(ValueError, match="objective must be one of"):
        pretraining_datasets("nsp", DOCUMENTS, None, TOKENIZER, 8, 2)


def test_mask_rate_sets_the_share_of_masked_tokens_and_their_slots():
    from kbert.data.pretraining_inputs import mask_capacity

    assert mask_capacity(128, 0.15) == 32 and mask_capacity(128, 0.4) == 68
    assert mask_capacity(4, 0.9) == 4  # never more slots than tokens
    for rate in (0.15, 0.4):
        train, _ = pretraining_datasets("masked", DOCUMENTS, None, TOKENIZER, 12, 4, mask_rate=rate)
        batches = list(train.take(60))
        assert batches[0]["mask_positions"].shape == (4, mask_capacity(12, rate))
        selected = sum(float(b["mask_weights"].numpy().sum()) for b in batches)
        eligible = sum(
            float(np.isin(b["token_ids"].numpy(), special_token_ids(TOKENIZER), invert=True).sum())
            for b in batches
        )  # [MASK] replaced a selected token: it counts as eligible, as the token it hides
        assert abs(selected / eligible - rate) < 0.05, (rate, selected / eligible)
    with pytest.raises(ValueError, match=r"mask_rate must be a number in \(0, 1\); received 1.5"):
        pretraining_datasets("masked", ["a b"], None, None, 8, 2, mask_rate=1.5)
