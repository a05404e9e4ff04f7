"""Packing text-to-text examples for an encoder-decoder, in tf.data and inside exported graphs.

T5 reads a source text and writes a target text (textbook §20.10). These functions turn strings
into the four inputs of `kbert.models.EncoderDecoder` and turn generated ids back into strings,
with the ops `WordPieceTokenizer` already uses (core TensorFlow plus classic tf-text), so the
training pipeline, `generate_texts` and an exported `generate` signature pack and read text the
same way:

- source: the text's tokens cut to `max_length - 1`, then `end_id`, padded with 0 (id 0 is
  padding, as in T5) to the longest row of the batch;
- target: the text's tokens cut to `max_length - 1`, then `end_id`; the decoder reads it
  shifted right behind `start_id` (teacher forcing) and is scored on every target token,
  `end_id` included (-100 on padding);
- generated ids: the start id dropped, everything from the first `end_id` on dropped, the rest
  detokenized.
"""

import tensorflow as tf

from kbert.checks import check_int

IGNORE_INDEX = -100  # labels not scored (kbert.models.pretraining_utils.IGNORE_INDEX)


def _check_length(name, value, minimum):
    return check_int(name, value, minimum=minimum, expected=f"an integer >= {minimum}")


def _token_ids(tokenizer, texts, max_length, end_id):
    """Ragged `(batch, ≤ max_length)` int32 ids: tokens cut to `max_length - 1`, then `end_id`."""
    ids = tf.cast(tokenizer(texts), tf.int32)[:, : max_length - 1]
    ends = tf.fill([ids.nrows(), 1], tf.constant(end_id, tf.int32))
    return tf.concat([ids, tf.RaggedTensor.from_tensor(ends)], axis=1)


def pack_sources(tokenizer, texts, max_length, end_id):
    """Encoder inputs for a batch of source strings.

    Args:
        tokenizer: `kbert.text.WordPieceTokenizer` (whose id 0 is padding).
        texts: `(batch,)` string tensor or list of str.
        max_length: int >= 2. Most tokens per source, `end_id` included.
        end_id: int. Appended to every source.

    Returns:
        dict of int32 `(batch, length)` tensors, `length` the longest row:
        `encoder_token_ids` (0 on padding) and `encoder_padding_mask`.

    Example:
    >>> from kbert.text import WordPieceTokenizer
    >>> tokenizer = WordPieceTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b"])
    >>> pack_sources(tokenizer, ["a b a", "b"], 3, 3)["encoder_token_ids"].numpy().tolist()
    [[5, 6, 3], [6, 3, 0]]
    """
    _check_length("max_length", max_length, 2)
    ids = _token_ids(tokenizer, texts, max_length, end_id).to_tensor(0)
    return {"encoder_token_ids": ids, "encoder_padding_mask": tf.cast(ids != 0, tf.int32)}


def pack_targets(tokenizer, texts, max_length, end_id, start_id=0):
    """Decoder inputs and labels for a batch of target strings (teacher forcing).

    Args:
        tokenizer: `kbert.text.WordPieceTokenizer`.
        texts: `(batch,)` string tensor or list of str.
        max_length: int >= 2. Most target tokens, `end_id` included.
        end_id: int. Ends every target.
        start_id: int, default 0. The decoder's first input (`EncoderDecoder.decoder_start_id`).

    Returns:
        `(inputs, labels)`: `decoder_token_ids` and `decoder_padding_mask` int32
        `(batch, length)`, and labels int32 `(batch, length)`, -100 on padding.

    Example:
    >>> from kbert.text import WordPieceTokenizer
    >>> tokenizer = WordPieceTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b"])
    >>> inputs, labels = pack_targets(tokenizer, ["a b", "b"], 4, 3)
    >>> inputs["decoder_token_ids"].numpy().tolist(), labels.numpy().tolist()
    ([[0, 5, 6], [0, 6, 0]], [[5, 6, 3], [6, 3, -100]])
    """
    _check_length("max_length", max_length, 2)
    ids = _token_ids(tokenizer, texts, max_length, end_id)
    labels = ids.to_tensor(IGNORE_INDEX)
    starts = tf.RaggedTensor.from_tensor(tf.fill([ids.nrows(), 1], tf.constant(start_id, tf.int32)))
    decoder_ids = tf.concat([starts, ids[:, :-1]], axis=1)
    inputs = {
        "decoder_token_ids": decoder_ids.to_tensor(0),
        "decoder_padding_mask": tf.cast(labels != IGNORE_INDEX, tf.int32),
    }
    return inputs, labels


def texts_from_generated(tokenizer, generated, end_id):
    """Strings from decoded ids `(batch, 1 + new)` that start with the decoder's start id.

    The first column is dropped, and so is every id from a row's first `end_id` on; padding
    (id 0) is dropped by `detokenize`, which joins subwords and puts one space between words.

    Example:
    >>> from kbert.text import WordPieceTokenizer
    >>> tokenizer = WordPieceTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "##b"])
    >>> texts_from_generated(tokenizer, [[0, 5, 6, 3, 5], [0, 3, 5, 5, 5]], 3).numpy().tolist()
    [b'ab', b'']
    """
    generated = tf.convert_to_tensor(generated)
    if generated.shape.rank is not None and generated.shape.rank != 2:
        raise ValueError(
            f"generated must be (batch, 1 + new tokens) ids; received shape {generated.shape}"
        )
    ids = tf.cast(generated[:, 1:], tf.int32)
    ended = tf.cumsum(tf.cast(ids == end_id, tf.int32), axis=1) > 0  # from the first end_id on
    return tokenizer.detokenize(tf.where(ended, tf.zeros_like(ids), ids))


__all__ = ["IGNORE_INDEX", "pack_sources", "pack_targets", "texts_from_generated"]
