"""Causal-LM pretraining blocks: the token stream cut into consecutive fixed-length blocks.

How every pretraining pipeline is built (tokenized once, then cache, shuffle, batch, masking
hook, prefetch) is `kbert.data.pretraining_pipelines`.
"""

import numpy as np
import tensorflow as tf

from kbert.data.pretraining_pipelines import (
    PipelineOptions,
    check_at_least,
    check_documents,
    check_sequence_length,
    check_tokenizer,
    finish_pipeline,
    tokenize_texts,
    vocabulary_token_id,
)

LAST_BLOCKS = ("drop", "pad")


def causal_lm_blocks(
    documents,
    tokenizer,
    block_length,
    batch_size,
    max_sequence_length=None,
    document_separator="[SEP]",
    last_block="drop",
    options=None,
    **option_overrides,
):
    """Fixed-length blocks cut from the concatenated token stream, for causal language models.

    The documents are tokenized, joined into one stream with `document_separator` between
    consecutive documents (not before the first or after the last; documents without tokens
    are skipped), and cut into consecutive blocks of `block_length` tokens: no [CLS], no
    padding, blocks cross document boundaries (the NAACL 2019 tutorial's and GPT-2's setup).
    The causal model predicts token t + 1 from tokens up to t inside each block.

    Args:
        documents: list of documents, each a str or a list of str paragraphs.
        tokenizer: WordPiece, BPE or unigram tokenizer (`pretraining_pipelines`) with [PAD] (for
            `padding_mask`).
        block_length: int, at least 2. Tokens per block.
        batch_size: int. Blocks per batch.
        max_sequence_length: int or None, default None. The encoder's longest input (its
            position embeddings); `block_length` above it raises.
        document_separator: str or None, default "[SEP]". Token put between documents (any
            token of the vocabulary), or None to join them directly.
        last_block: str, default "drop". What to do with the stream's tail shorter than a
            block: "drop" it (training), or "pad" it with [PAD] into a last block whose
            `padding_mask` marks the padding (evaluation over every token, e.g. word-level
            perplexity).
        options, **option_overrides: `PipelineOptions` (shuffle, seed, shuffle_buffer_size,
            cache, map_fn, drop_remainder), or those names as keywords.

    Returns:
        A `tf.data.Dataset` of dicts of int32 (batch, block_length) tensors: `token_ids`,
        `segment_ids` (all 0) and `padding_mask` (all 1 except a padded last block).

    Example:
    >>> from kbert.text import WordPieceTokenizer
    >>> vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b", "c"]
    >>> tokenizer = WordPieceTokenizer(vocabulary)
    >>> blocks = causal_lm_blocks(["a b c a", "b c"], tokenizer, block_length=3,
    ...                           batch_size=2, shuffle=False)
    >>> next(iter(blocks))["token_ids"].numpy().tolist()
    [[5, 6, 7], [5, 3, 6]]
    """
    options = PipelineOptions.resolve(options, option_overrides, "causal_lm_blocks")
    documents = check_documents(documents)
    if last_block not in LAST_BLOCKS:
        raise ValueError(f"last_block must be one of {LAST_BLOCKS}; received {last_block!r}")
    check_tokenizer(tokenizer, ("pad_token",), "causal_lm_blocks")
    check_sequence_length(
        "block_length", block_length, 2, " (an input and a next token)", max_sequence_length
    )
    check_at_least("batch_size", batch_size)
    separator_id = None
    if document_separator is not None:
        separator_id = vocabulary_token_id(tokenizer, document_separator, "document_separator")
        if separator_id == tokenizer.pad_token_id:
            raise ValueError(
                "document_separator must not be the padding token (padding_mask would hide "
                f"it); received {document_separator!r}"
            )

    paragraphs = [paragraph for document in documents for paragraph in document]
    ids, splits, _ = tokenize_texts(tokenizer, paragraphs, with_word_ids=False)
    paragraph_ends = np.cumsum([len(document) for document in documents])
    document_starts = splits[paragraph_ends - np.asarray([len(d) for d in documents])]
    document_ends = splits[paragraph_ends]
    starts = document_starts[document_ends > document_starts]  # documents with tokens
    if ids.size == 0:
        raise ValueError(
            f"documents hold no text: {len(documents)} documents give no tokens; expected a "
            "non-empty corpus"
        )
    stream = ids if separator_id is None else np.insert(ids, starts[1:], separator_id)
    if stream.size < block_length:
        raise ValueError(
            f"documents give {stream.size} tokens (separators included), fewer than one block of "
            f"block_length={block_length}; expected a longer corpus or a shorter block_length"
        )
    full = stream.size // block_length
    blocks = stream[: full * block_length].reshape(full, block_length)
    if last_block == "pad" and stream.size > full * block_length:
        tail = np.full([1, block_length], tokenizer.pad_token_id, np.int32)
        rest = stream[full * block_length :]
        tail[0, : rest.size] = rest
        blocks = np.concatenate([blocks, tail])
    examples = tf.data.Dataset.from_tensor_slices({"token_ids": blocks})
    return finish_pipeline(
        examples,
        len(blocks),
        batch_size,
        tokenizer.pad_token_id,
        options,
    )
