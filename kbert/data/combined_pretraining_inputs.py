"""The batches of BERT's objective combinations: MLM alone, MLM + NSP, MLM + SOP, spans + SBO.

`kbert.data.pretraining_inputs` feeds one objective per model; BERT (MLM + NSP), ALBERT
(MLM + SOP) and SpanBERT (span masking, MLM + SBO) each train two heads on one encoder pass
(`kbert.models.PretrainingModel`), so one batch must carry what both heads read:

- `masked`: RoBERTa's FULL-SENTENCES blocks with BERT's token masks (15%, 80/10/10), as
  `pretraining_datasets("masked", ...)` gives them;
- `masked+nsp`, `masked+sop`: `[CLS] A [SEP] B [SEP]` pairs (`sentence_pair_examples`) with
  `next_sentence_labels`, masked the same way after the cache;
- `span+sbo`: the same FULL-SENTENCES blocks masked in spans of whole words by a `SpanMasker`
  (geometric lengths, mean 3.8 words, at most 10), which also gives each masked token's
  boundary positions for the span boundary objective.

Masks are drawn after the cache, so every epoch gets new ones. Training batches repeat forever
(a run is measured in steps) and drop the last partial batch.
"""

import dataclasses

from kbert.data.full_sentences_blocks import full_sentences_blocks
from kbert.data.pretraining_inputs import special_token_ids
from kbert.data.pretraining_pipelines import PipelineOptions
from kbert.data.sentence_pair_examples import sentence_pair_examples
from kbert.text.masked_lm_masker import MaskedLMMasker
from kbert.text.span_masker import SpanMasker

COMBINED_OBJECTIVES = ("masked", "masked+nsp", "masked+sop", "span+sbo")


def combined_pretraining_datasets(
    objective, documents, tokenizer, block_length, batch_size, **option_overrides
):
    """The `(train, valid)` datasets of one objective combination.

    Args:
        objective: str. One of `COMBINED_OBJECTIVES`: "masked", "masked+nsp", "masked+sop" or
            "span+sbo".
        documents: `(train_documents, valid_documents)`: lists of documents (each a str or a
            list of str paragraphs); `valid_documents` may be None (then `valid` is None).
        tokenizer: WordPiece, BPE or unigram tokenizer with BERT's role tokens.
        block_length: int. Tokens per block or pair, special tokens included.
        batch_size: int. Examples per batch.
        **option_overrides: `kbert.data.PipelineOptions` names (`seed`, `cache`,
            `shuffle_buffer_size`, ...). The seed also draws the pairs and the masks; the
            masking hook, `drop_remainder` (train only) and `shuffle` (train only) are set here.

    Returns:
        `(train, valid)` `tf.data.Dataset`s of dicts with the encoder's keys, the MLM keys
        (`mask_positions`, `mask_ids`, `mask_weights`), and `next_sentence_labels` (pairs) or
        the SBO keys (`mask_left_boundary`, `mask_right_boundary`, `mask_relative_positions`);
        `train` repeats forever.

    Raises:
        ValueError: an unknown objective, or what the pipelines raise (a corpus too short, NSP
            without two documents, a tokenizer without a role).

    Example:
    >>> from kbert.text import WordPieceTokenizer
    >>> tokenizer = WordPieceTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b", "."])
    >>> documents = (["A b. B a. A a."] * 2, None)
    >>> train, _ = combined_pretraining_datasets("masked+sop", documents, tokenizer,
    ...                                          block_length=12, batch_size=2, seed=0)
    >>> sorted(next(iter(train)))[:3]
    ['mask_ids', 'mask_positions', 'mask_weights']
    """
    if objective not in COMBINED_OBJECTIVES:
        raise ValueError(f"objective must be one of {COMBINED_OBJECTIVES}; received {objective!r}")
    options = PipelineOptions.resolve(None, option_overrides, "combined_pretraining_datasets")
    seed = options.seed
    if not isinstance(documents, (tuple, list)) or len(documents) != 2:
        raise ValueError(
            "documents must be a pair (train_documents, valid_documents); received "
            f"{type(documents).__name__}"
        )
    train_documents, valid_documents = documents
    special = special_token_ids(tokenizer)
    if objective == "span+sbo":
        # Room above the 15% budget for a last span of up to 10 words (module docstring).
        masker = SpanMasker(
            tokenizer.vocabulary_size(),
            tokenizer.mask_token_id,
            special,
            max_selections=int(block_length * 0.15) + 16,
            seed=seed,
        )

        def mask(batch):
            masked = masker(batch["token_ids"], batch["padding_mask"], word_ids=batch["word_ids"])
            return {**batch, **masked}
    else:
        masker = MaskedLMMasker(
            tokenizer.vocabulary_size(),
            tokenizer.mask_token_id,
            special,
            max_selections=int(block_length * 0.2) + 1,
            seed=seed,
        )

        def mask(batch):
            return {**batch, **masker(batch["token_ids"], batch["padding_mask"])}

    def examples(texts, training):
        shuffle = options.shuffle and training
        chosen = dataclasses.replace(options, map_fn=mask, drop_remainder=training, shuffle=shuffle)
        if objective in ("masked+nsp", "masked+sop"):
            task = objective.split("+")[1]
            return sentence_pair_examples(
                texts, tokenizer, block_length, task=task, batch_size=batch_size, options=chosen
            )
        return full_sentences_blocks(texts, tokenizer, block_length, batch_size, options=chosen)

    valid = examples(valid_documents, False) if valid_documents else None
    return examples(train_documents, True).repeat(), valid


__all__ = ["COMBINED_OBJECTIVES", "combined_pretraining_datasets"]
