"""Encoder-decoder pretraining blocks: T5's span corruption and BART's text infilling.

Both cut the token stream into blocks (`causal_lm_blocks`) and corrupt each block anew every
epoch after the cache; how every pretraining pipeline is built is
`kbert.data.pretraining_pipelines`.
"""

import numpy as np
import tensorflow as tf

from kbert.data.causal_lm_blocks import causal_lm_blocks
from kbert.data.pretraining_pipelines import (
    PipelineOptions,
    check_sequence_length,
    vocabulary_token_id,
)
from kbert.data.token_classification_features import IGNORE_INDEX
from kbert.text.seq2seq_noising import span_corruption, text_infilling


def span_corruption_blocks(
    documents,
    tokenizer,
    block_length,
    batch_size,
    sentinel_ids,
    noise_density=0.15,
    mean_noise_span_length=3.0,
    end_token="[SEP]",
    decoder_start_id=0,
    options=None,
    **option_overrides,
):
    """T5's pretraining batches: blocks of the token stream, span-corrupted for an encoder-decoder.

    The corpus is cut into blocks of `block_length` tokens as `causal_lm_blocks` cuts it
    (documents joined directly, blocks crossing document boundaries, as T5 packs C4). Every
    epoch each block is corrupted anew (`kbert.text.seq2seq_noising.span_corruption`):
    round(block_length × noise_density) tokens in round(noise / mean_noise_span_length) spans
    are each replaced by the next sentinel in the encoder's input; the decoder writes each
    sentinel followed by the tokens it hid, then `end_token`. Noise and span counts are exact,
    so every batch has the same shapes: inputs `block_length - noise + spans + 1`, targets
    `noise + spans + 1` tokens.

    Args:
        documents: list of documents, each a str or a list of str paragraphs.
        tokenizer: WordPiece, BPE or unigram tokenizer whose vocabulary holds the sentinels.
        block_length: int >= 2. Tokens per uncorrupted block.
        batch_size: int. Blocks per batch.
        sentinel_ids: sequence of int. `<extra_id_0>`, `<extra_id_1>`, … in order, at least as
            many as a block's spans.
        noise_density: float in (0, 1), default 0.15.
        mean_noise_span_length: float >= 1, default 3.0.
        end_token: str, default "[SEP]". Ends inputs and targets.
        decoder_start_id: int, default 0. The decoder's first input (`EncoderDecoder`'s).
        options, **option_overrides: `PipelineOptions` (shuffle, seed, shuffle_buffer_size,
            cache, drop_remainder; not map_fn: the corruption is the per-batch map), or those
            names as keywords; the seed also draws the corruption.

    Returns:
        A `tf.data.Dataset` of `(x, y)`: `x` the four `EncoderDecoder` inputs (int32; every row
        has the same lengths, so both padding masks are all ones), `y` the target ids
        `(batch, targets)`.

    Example:
    >>> from kbert.text import WordPieceTokenizer
    >>> vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b", "c", "<s0>", "<s1>"]
    >>> blocks = span_corruption_blocks(["a b c " * 10], WordPieceTokenizer(vocabulary), 20, 2,
    ...                                 [8, 9], shuffle=False, seed=0)
    >>> x, y = next(iter(blocks))
    >>> tuple(x["encoder_token_ids"].shape), tuple(y.shape)  # 3 noise tokens in 1 span
    ((1, 19), (1, 5))
    """
    options = PipelineOptions.resolve(options, option_overrides, "span_corruption_blocks")
    end_id = vocabulary_token_id(tokenizer, end_token, "end_token")
    sentinel_ids = [int(i) for i in sentinel_ids]
    vocabulary_size = tokenizer.vocabulary_size()
    bad = [i for i in sentinel_ids if not 0 <= i < vocabulary_size or i in (0, end_id)]
    if not sentinel_ids or bad:
        raise ValueError(
            f"sentinel_ids must be ids of the vocabulary (0 to {vocabulary_size - 1}) other than "
            f"padding and end_token; received {sentinel_ids if not bad else bad}"
        )
    return _denoising_batches(
        documents,
        tokenizer,
        block_length,
        batch_size,
        lambda row, rng: span_corruption(
            row, sentinel_ids, noise_density, mean_noise_span_length, end_id, rng=rng
        ),
        decoder_start_id,
        options,
    )


def text_infilling_blocks(
    documents,
    tokenizer,
    block_length,
    batch_size,
    mask_rate=0.3,
    poisson_lambda=3.0,
    mask_token="[MASK]",
    end_token="[SEP]",
    decoder_start_id=0,
    options=None,
    **option_overrides,
):
    """BART's pretraining batches: blocks of the token stream with text infilling.

    Blocks as in `span_corruption_blocks`; every epoch each block is corrupted anew
    (`kbert.text.seq2seq_noising.text_infilling`): spans of Poisson(`poisson_lambda`) length
    covering `mask_rate` of the tokens each become one `mask_token` (a length-0 span inserts
    one), so the encoder must also tell how many tokens are missing; the decoder writes the
    whole block, then `end_token`. Inputs differ in length: padded with 0 to the batch's longest
    (`encoder_padding_mask` marks them).

    Args:
        documents, tokenizer, block_length, batch_size: as `span_corruption_blocks`.
        mask_rate: float in (0, 1), default 0.3.
        poisson_lambda: float > 0, default 3.0.
        mask_token: str, default "[MASK]".
        end_token, decoder_start_id, options, **option_overrides: as
            `span_corruption_blocks`.

    Returns:
        A `tf.data.Dataset` of `(x, y)`: `x` the four `EncoderDecoder` inputs, `y` the block
        and the end id `(batch, block_length + 1)`.
    """
    options = PipelineOptions.resolve(options, option_overrides, "text_infilling_blocks")
    end_id = vocabulary_token_id(tokenizer, end_token, "end_token")
    mask_id = vocabulary_token_id(tokenizer, mask_token, "mask_token")

    def corrupt(row, rng):
        inputs, targets = text_infilling(row, mask_id, mask_rate, poisson_lambda, rng=rng)
        return np.append(inputs, end_id), np.append(targets, end_id)

    return _denoising_batches(
        documents,
        tokenizer,
        block_length,
        batch_size,
        corrupt,
        decoder_start_id,
        options,
    )


def _denoising_batches(
    documents,
    tokenizer,
    block_length,
    batch_size,
    corrupt,
    decoder_start_id,
    options,
):
    """Encoder-decoder batches from blocks of the token stream (`causal_lm_blocks`, documents
    joined directly): `corrupt(row, rng) → (inputs, targets)` per row, run in NumPy after the
    cache (new noise every epoch, one seeded generator); inputs padded with 0 and targets with
    -100 to each batch's longest row."""
    check_sequence_length("block_length", block_length, 2, " (a kept and a hidden token)", None)
    if options.map_fn is not None:
        raise ValueError(
            "map_fn is not an option of the encoder-decoder pipelines: their corruption is the "
            "per-batch map; corrupt the text yourself or use causal_lm_blocks' map_fn"
        )
    blocks = causal_lm_blocks(
        documents, tokenizer, block_length, batch_size, document_separator=None, options=options
    )
    rng = np.random.default_rng(options.seed)

    def corrupt_batch(token_ids):
        pairs = [corrupt(row, rng) for row in token_ids]
        width = (
            max([len(p[0]) for p in pairs], default=0),
            max([len(p[1]) for p in pairs], default=0),
        )
        inputs = np.zeros((len(pairs), width[0]), np.int32)
        targets = np.full((len(pairs), width[1]), IGNORE_INDEX, np.int32)
        for row, (source, target) in enumerate(pairs):
            inputs[row, : len(source)] = source
            targets[row, : len(target)] = target
        return inputs, targets

    def to_example(batch):
        inputs, targets = tf.numpy_function(
            corrupt_batch, [batch["token_ids"]], (tf.int32, tf.int32), stateful=True
        )
        inputs.set_shape([None, None])
        targets.set_shape([None, None])
        scored = tf.cast(targets != IGNORE_INDEX, tf.int32)
        starts = tf.fill([tf.shape(targets)[0], 1], tf.constant(decoder_start_id, tf.int32))
        x = {
            "encoder_token_ids": inputs,
            "encoder_padding_mask": tf.cast(inputs != 0, tf.int32),
            "decoder_token_ids": tf.concat([starts, targets[:, :-1] * scored[:, :-1]], axis=1),
            "decoder_padding_mask": scored,
        }
        return x, targets

    # Sequential (one call at a time), so a seed gives the same corruptions in the same order.
    return blocks.map(to_example).prefetch(tf.data.AUTOTUNE)
