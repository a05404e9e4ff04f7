"""The training and held-out batches of each pretraining objective, from documents.

lab01 and `kbert pretrain` feed the objectives of `kbert.models.pretraining_models` the same way:

- `causal`: consecutive blocks of the token stream (`causal_lm_blocks`), documents joined by
  [SEP]; the held-out tail is padded so every held-out token is scored;
- `masked` and `electra`: RoBERTa's FULL-SENTENCES blocks (`full_sentences_blocks`) with masks
  drawn anew every epoch by a `MaskedLMMasker` (BERT's 15%, 80/10/10; ELECTRA masks with [MASK]
  only, since the generator's samples are its corruption);
- `span_corruption`: T5's span-corrupted blocks (`span_corruption_blocks`) with sentinels.

Training batches repeat forever (a run is measured in steps) and drop the last partial batch.
"""

import math

from kbert.data.causal_lm_blocks import causal_lm_blocks
from kbert.data.denoising_blocks import span_corruption_blocks
from kbert.data.full_sentences_blocks import full_sentences_blocks
from kbert.text.masked_lm_masker import MaskedLMMasker

OBJECTIVES = ("causal", "masked", "electra", "span_corruption")


def special_token_ids(tokenizer):
    """The ids a masker never selects: padding, unknown (byte-level BPE has none), [CLS], [SEP]."""
    roles = (
        tokenizer.pad_token_id,
        tokenizer.unknown_token_id,
        tokenizer.cls_token_id,
        tokenizer.sep_token_id,
    )
    return [i for i in roles if i is not None]


def mask_capacity(block_length, mask_rate):
    """Mask slots per block: the expected count plus 3 standard deviations of the binomial, so
    that truncation (`MaskedLMMasker` drops selections beyond its slots) almost never happens.

    >>> mask_capacity(128, 0.15), mask_capacity(128, 0.4)
    (32, 68)
    """
    mean = block_length * mask_rate
    return min(block_length, math.ceil(mean + 3 * math.sqrt(mean * (1 - mask_rate))))


def pretraining_datasets(
    objective,
    train_documents,
    valid_documents,
    tokenizer,
    block_length,
    batch_size,
    seed=0,
    sentinel_ids=None,
    mask_rate=0.15,
):
    """The `(train, valid)` datasets of `objective`.

    Args:
        objective: str. "causal", "masked", "electra" or "span_corruption".
        train_documents: list of documents (each a str or a list of str paragraphs).
        valid_documents: list of documents, or None (then `valid` is None).
        tokenizer: WordPiece, BPE or unigram tokenizer with BERT's role tokens.
        block_length: int. Tokens per block.
        batch_size: int. Blocks per batch.
        seed: int, default 0. Seeds shuffling, masks and corruption.
        sentinel_ids: list of int or None. T5's sentinels (span corruption only).
        mask_rate: float in (0, 1), default 0.15. The share of tokens the masked and ELECTRA
            objectives select (BERT: 0.15; Wettig et al. 2023 find 0.4 better for MLM).

    Returns:
        `(train, valid)` `tf.data.Dataset`s; `train` repeats forever.

    Raises:
        ValueError: an unknown objective, span corruption without sentinels, or what the
            pipelines raise (a corpus shorter than one block, a tokenizer without a role).
    """
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {OBJECTIVES}; received {objective!r}")
    if (
        isinstance(mask_rate, bool)
        or not isinstance(mask_rate, (int, float))
        or not (0 < mask_rate < 1)
    ):
        raise ValueError(f"mask_rate must be a number in (0, 1); received {mask_rate!r}")
    if objective == "causal":
        train = causal_lm_blocks(
            train_documents, tokenizer, block_length, batch_size, seed=seed, drop_remainder=True
        ).repeat()
        valid = None
        if valid_documents:
            valid = causal_lm_blocks(
                valid_documents,
                tokenizer,
                block_length,
                batch_size,
                last_block="pad",
                shuffle=False,
            )
        return train, valid
    if objective == "span_corruption":
        if not sentinel_ids:
            raise ValueError("span_corruption needs sentinel_ids (T5's <extra_id_N> token ids)")

        def blocks(documents, training):
            return span_corruption_blocks(
                documents,
                tokenizer,
                block_length,
                batch_size,
                sentinel_ids,
                shuffle=training,
                seed=seed,
                drop_remainder=training,
            )

        valid = blocks(valid_documents, False) if valid_documents else None
        return blocks(train_documents, True).repeat(), valid
    # ELECTRA masks with [MASK] only: the generator's samples are the corruption.
    rates = dict(mask_token_rate=1.0, random_token_rate=0.0) if objective == "electra" else {}
    masker = MaskedLMMasker(
        tokenizer.vocabulary_size(),
        tokenizer.mask_token_id,
        special_token_ids(tokenizer),
        max_selections=mask_capacity(block_length, mask_rate),
        selection_rate=mask_rate,
        seed=seed,
        **rates,
    )

    def mask(batch):
        masked = masker(batch["token_ids"], batch["padding_mask"])
        return {**batch, **masked}

    train = full_sentences_blocks(
        train_documents,
        tokenizer,
        block_length,
        batch_size,
        seed=seed,
        map_fn=mask,
        drop_remainder=True,
    ).repeat()
    valid = None
    if valid_documents:
        valid = full_sentences_blocks(
            valid_documents,
            tokenizer,
            block_length,
            batch_size,
            shuffle=False,
            map_fn=mask,
        )
    return train, valid


__all__ = ["mask_capacity", "pretraining_datasets", "special_token_ids"]
