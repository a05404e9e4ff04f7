"""RoBERTa's FULL-SENTENCES pretraining blocks: whole sentences packed up to a block length.

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
    sentences_of_documents,
    tokenize_texts,
)
from kbert.data.sentence_splitter import split_sentences


def full_sentences_blocks(
    documents,
    tokenizer,
    block_length,
    batch_size,
    max_sequence_length=None,
    sentence_splitter=split_sentences,
    options=None,
    **option_overrides,
):
    """RoBERTa's FULL-SENTENCES inputs: whole sentences packed up to the block length.

    Sentences are taken in corpus order and packed as `[CLS] s1 s2 ... [SEP]` while they fit
    in `block_length`; a block may cross document boundaries, and an extra [SEP] separates the
    last sentence of one document from the first of the next inside a block (Liu et al. 2019,
    section 4.2). The rest of each block is padding. A sentence longer than a block
    (`block_length - 2` tokens) is cut into block-sized pieces, each starting a new block.

    `word_ids` number the words of each block 0, 1, 2, ... in order, -1 at [CLS], [SEP] and
    padding, so whole-word and span masking can run on them; a word is the tokenizer's word (a
    pre-tokenized word for WordPiece, where punctuation marks are words of their own, and BPE;
    a whitespace-separated word for unigram), and a word cut by a sentence piece boundary counts
    once in each block.

    Args:
        documents: list of documents, each a str or a list of str paragraphs.
        tokenizer: WordPiece, BPE or unigram tokenizer with [CLS], [SEP] and [PAD].
        block_length: int, at least 3. Tokens per block, [CLS] and [SEP] included.
        batch_size: int. Blocks per batch.
        max_sequence_length: int or None, default None. The encoder's longest input;
            `block_length` above it raises.
        sentence_splitter: callable, default `split_sentences`. Turns a paragraph (str) into a
            list of sentences (str).
        options, **option_overrides: `PipelineOptions` (shuffle, seed, shuffle_buffer_size,
            cache, map_fn, drop_remainder), or those names as keywords.

    Returns:
        A `tf.data.Dataset` of dicts of int32 (batch, block_length) tensors: `token_ids`,
        `segment_ids` (all 0), `padding_mask` and `word_ids`.

    Example:
    >>> from kbert.text import WordPieceTokenizer
    >>> vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b", "."]
    >>> blocks = full_sentences_blocks(["A b. B a.", "A."], WordPieceTokenizer(vocabulary),
    ...                                block_length=11, batch_size=1, shuffle=False)
    >>> batch = next(iter(blocks))
    >>> batch["token_ids"].numpy().tolist()
    [[2, 5, 6, 7, 6, 5, 7, 3, 5, 7, 3]]
    >>> batch["word_ids"].numpy().tolist()
    [[-1, 0, 1, 2, 3, 4, 5, -1, 6, 7, -1]]
    """
    options = PipelineOptions.resolve(options, option_overrides, "full_sentences_blocks")
    documents = check_documents(documents)
    check_tokenizer(tokenizer, ("cls_token", "sep_token", "pad_token"), "full_sentences_blocks")
    check_sequence_length(
        "block_length", block_length, 3, " ([CLS], one token, [SEP])", max_sequence_length
    )
    check_at_least("batch_size", batch_size)
    if not callable(sentence_splitter):
        raise ValueError(f"sentence_splitter must be callable; received {sentence_splitter!r}")

    sentences, document_of = sentences_of_documents(documents, sentence_splitter)
    ids, splits, word_ids = tokenize_texts(tokenizer, sentences, with_word_ids=True)
    if ids.size == 0:
        raise ValueError(
            f"documents hold no text: {len(documents)} documents give no tokens; expected a "
            "non-empty corpus"
        )
    capacity = block_length - 2

    # Plan the blocks on lengths alone (plain Python ints), then copy all tokens at once.
    piece_start, piece_length, piece_block, piece_position, piece_word_offset = [], [], [], [], []
    separators = []  # (block, position) of the [SEP] between two documents
    block, used, words_used, last_document = 0, 0, 0, None
    for index, (start, end) in enumerate(
        zip(splits[:-1].tolist(), splits[1:].tolist(), strict=True)
    ):
        document = int(document_of[index])
        for piece in range(start, end, capacity):
            length = min(capacity, end - piece)
            separated = used > 0 and document != last_document
            if used + length + separated > capacity:
                block, used, words_used, separated = block + 1, 0, 0, False
            if separated:
                separators.append((block, 1 + used))
                used += 1
            piece_start.append(piece)
            piece_length.append(length)
            piece_block.append(block)
            piece_position.append(1 + used)  # after [CLS]
            # Words of the piece are renumbered from the block's running count.
            first = int(word_ids[piece])
            piece_word_offset.append(words_used - first)
            words_used += int(word_ids[piece + length - 1]) - first + 1
            used += length
            last_document = document
    num_blocks = block + 1
    total = int(np.sum(piece_length)) + len(separators)
    if total < capacity:
        raise ValueError(
            f"documents give {total} tokens (document separators included), fewer than one "
            f"block of block_length={block_length} ({capacity} tokens besides [CLS] and [SEP]); "
            "expected a longer corpus or a shorter block_length"
        )

    lengths = np.asarray(piece_length, np.int64)
    within = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    source = np.repeat(np.asarray(piece_start, np.int64), lengths) + within
    rows = np.repeat(np.asarray(piece_block, np.int64), lengths)
    columns = np.repeat(np.asarray(piece_position, np.int64), lengths) + within
    token_ids = np.full([num_blocks, block_length], tokenizer.pad_token_id, np.int32)
    block_words = np.full([num_blocks, block_length], -1, np.int32)
    token_ids[rows, columns] = ids[source]
    block_words[rows, columns] = word_ids[source] + np.repeat(
        np.asarray(piece_word_offset, np.int64), lengths
    )
    token_ids[:, 0] = tokenizer.cls_token_id
    for row, column in separators:
        token_ids[row, column] = tokenizer.sep_token_id
    # The closing [SEP] goes right after each block's last token (a block never ends with a
    # document separator).
    last = np.zeros([num_blocks], np.int64)
    np.maximum.at(last, piece_block, np.asarray(piece_position) + lengths - 1)
    token_ids[np.arange(num_blocks), last + 1] = tokenizer.sep_token_id

    examples = tf.data.Dataset.from_tensor_slices({"token_ids": token_ids, "word_ids": block_words})
    return finish_pipeline(
        examples,
        num_blocks,
        batch_size,
        tokenizer.pad_token_id,
        options,
    )
