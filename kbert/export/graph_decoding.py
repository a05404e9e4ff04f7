"""Decoding inside the serving graph: per-token scores in, words, entities and answer spans out.

The Python decoders (`kbert.metrics.entity_metrics.bio_to_entities`,
`kbert.models.answer_decoding.decode_answers`) run after a model, on numpy arrays. An exported
SavedModel that answers with entities or answer spans needs the same decoding as TensorFlow
ops, traceable in a `tf.function` whose batch and sequence sizes are unknown.

Which ops the graph may hold: TF Serving's C++ server knows the core TensorFlow ops (plus the
classic tf-text ops that the preprocessor uses), so these functions use core ops only: no
tf-text op, no `py_function` or `numpy_function`. Ragged tensors are fine (their ops are core),
and `CRF.decode` is written with `keras.ops`, which lower to core ops (a `While` loop).

Offsets are those of `kbert.text.BertPreprocessor(..., return_alignment=True)`: character (code
point) offsets into the original text of the token's own segment, end exclusive, -1 at
`[CLS]`, `[SEP]` and padding. So an entity's span slices the sentence as a Python `str`
(`text[start:end]`), and an answer's span slices the context (the second segment of the pair),
not the question and not the UTF-8 bytes.
"""

import tensorflow as tf

_NEGATIVE_INFINITY = float("-inf")


def _parse_tag_names(tag_names):
    """Checks IOB2 tag names; returns (list of names, entity types, type id per tag, is "I-")."""
    if isinstance(tag_names, (str, bytes)):
        raise ValueError(
            f"tag_names must be a sequence of IOB2 tags ('O', 'B-X', 'I-X'); received the "
            f"string {tag_names!r}"
        )
    tag_names = list(tag_names)
    if not tag_names:
        raise ValueError("tag_names must hold at least one IOB2 tag; received an empty sequence")
    entity_types, type_ids, inside = [], [], []
    for tag in tag_names:
        if tag == "O":
            type_ids.append(-1)
            inside.append(False)
            continue
        if not isinstance(tag, str) or tag[:2] not in ("B-", "I-") or len(tag) < 3:
            raise ValueError(
                f"tag_names must be IOB2 tags ('O', 'B-X', 'I-X'); received {tag!r} in {tag_names}"
            )
        if tag[2:] not in entity_types:
            entity_types.append(tag[2:])
        type_ids.append(entity_types.index(tag[2:]))
        inside.append(tag.startswith("I-"))
    return tag_names, entity_types, type_ids, inside


def _check_rank(value, rank, name):
    if value.shape.rank is not None and value.shape.rank != rank:
        raise ValueError(f"{name} must have rank {rank}; received shape {value.shape}")


def _shift_right(values, fill):
    """`values[:, p - 1]` at every position p, `fill` at p = 0 (works for zero columns too)."""
    column = tf.fill([tf.shape(values)[0], 1], tf.constant(fill, values.dtype))  # (batch, 1)
    return tf.concat([column, values], axis=1)[:, :-1]  # (batch, seq)


def _shift_left(values, fill):
    """`values[:, p + 1]` at every position p, `fill` at the last one."""
    column = tf.fill([tf.shape(values)[0], 1], tf.constant(fill, values.dtype))  # (batch, 1)
    return tf.concat([values, column], axis=1)[:, 1:]  # (batch, seq)


def first_subword_mask(word_ids):
    """Marks each word's first subword: `word_ids >= 0` and unlike the previous position's.

    Args:
        word_ids: int tensor (batch, seq), the preprocessor's `word_ids` (-1 at special and
            padding positions).

    Returns:
        bool tensor (batch, seq).

    Example:
    >>> first_subword_mask(tf.constant([[-1, 0, 1, 1, -1, 0, -1]])).numpy().astype(int).tolist()
    [[0, 1, 1, 0, 0, 1, 0]]
    """
    word_ids = tf.cast(word_ids, tf.int32)
    return (word_ids >= 0) & (word_ids != _shift_right(word_ids, -1))


def tag_outputs(scores, word_ids, start_offsets, end_offsets, tag_names, crf=None):
    """Tags each word at its first subword and groups the tags into entities with char spans.

    A word's tag is read at its first subword (the positions `first_subword_mask` marks;
    the second segment of a pair, whose word ids restart at 0, is told apart by the `[SEP]`
    between them). Without `crf` the tag is the argmax of the scores there; with `crf` it is
    the Viterbi path over the first subwords only, under `bio_constraints(tag_names)`, so it
    equals `crf.decode` with the first-subword mask. Entities follow the conlleval rule of
    `kbert.metrics.entity_metrics.bio_to_entities`: "B-X" begins an entity of type X, "I-X"
    continues one only right after a "B-X" or "I-X" and otherwise begins one, "O" ends one.

    Only the words that survived truncation are seen: a word cut after some of its subwords
    keeps the span of its kept subwords, and words cut entirely have no tag.

    Args:
        scores: float tensor (batch, seq, num_tags): per-token emissions (logits) or
            probabilities (argmax only; the CRF path wants emissions).
        word_ids: int tensor (batch, seq), the preprocessor's `word_ids`.
        start_offsets: int tensor (batch, seq), the preprocessor's `start_offsets`.
        end_offsets: int tensor (batch, seq), the preprocessor's `end_offsets` (exclusive).
        tag_names: sequence of str, the IOB2 tags in id order ("O", "B-PER", "I-PER", ...).
        crf: `kbert.layers.CRF`, default None. Decode with its Viterbi path instead of argmax.

    Returns:
        dict of tensors, `max_words` and `max_entities` being the most of any row:
        `tags`: string (batch, max_words), "" as padding.
        `word_starts`, `word_ends`: int32 (batch, max_words), character span of each word
            (first subword's start to last subword's end), -1 as padding.
        `num_words`: int32 (batch,).
        `entity_types`: string (batch, max_entities), the type ("PER"), "" as padding.
        `entity_starts`, `entity_ends`: int32 (batch, max_entities), character span of each
            entity, end exclusive, -1 as padding.
        `num_entities`: int32 (batch,).

    Raises:
        ValueError: if `tag_names` are not IOB2 tags, a tensor has the wrong rank, or the
            number of tags of `scores` or `crf` differs from `len(tag_names)`.

    Example:
    >>> outputs = tag_outputs(
    ...     tf.one_hot([[0, 1, 0, 2, 0]], 3),  # (batch 1, seq 5, 3 tags); word 1 is read at 2
    ...     word_ids=tf.constant([[-1, 0, 1, 1, -1]]),
    ...     start_offsets=tf.constant([[-1, 0, 4, 7, -1]]),
    ...     end_offsets=tf.constant([[-1, 3, 7, 9, -1]]),
    ...     tag_names=["O", "B-PER", "I-PER"])
    >>> outputs["tags"].numpy().tolist()
    [[b'B-PER', b'O']]
    >>> outputs["entity_starts"].numpy().tolist(), outputs["entity_ends"].numpy().tolist()
    ([[0]], [[3]])
    """
    tag_names, entity_types, type_ids, inside = _parse_tag_names(tag_names)
    num_tags = len(tag_names)
    scores = tf.convert_to_tensor(scores)
    if not scores.dtype.is_floating:
        raise ValueError(f"scores must be a float tensor; received dtype {scores.dtype.name}")
    scores = tf.cast(scores, tf.float32)
    _check_rank(scores, 3, "scores")
    if scores.shape[-1] is not None and scores.shape[-1] != num_tags:
        raise ValueError(
            f"scores must have one score per tag name ({num_tags}) in its last dimension; "
            f"received shape {scores.shape}"
        )
    if crf is not None and crf.num_tags != num_tags:
        raise ValueError(
            f"crf must have one tag per tag name ({num_tags}); received crf.num_tags={crf.num_tags}"
        )
    tensors = {}
    for name, value in (
        ("word_ids", word_ids),
        ("start_offsets", start_offsets),
        ("end_offsets", end_offsets),
    ):
        value = tf.convert_to_tensor(value)
        if not value.dtype.is_integer:
            raise ValueError(f"{name} must be an int tensor; received dtype {value.dtype.name}")
        _check_rank(value, 2, name)
        tensors[name] = tf.cast(value, tf.int32)
    word_ids = tensors["word_ids"]  # (batch, seq)

    first = first_subword_mask(word_ids)  # (batch, seq)
    last = (word_ids >= 0) & (word_ids != _shift_left(word_ids, -1))  # (batch, seq)
    num_words = tf.reduce_sum(tf.cast(first, tf.int32), axis=1)  # (batch,)
    # Every word has one first and one last subword, so the compacted rows line up.
    word_starts = tf.ragged.boolean_mask(tensors["start_offsets"], first).to_tensor(-1)
    word_ends = tf.ragged.boolean_mask(tensors["end_offsets"], last).to_tensor(-1)
    word_scores = tf.ragged.boolean_mask(scores, first).to_tensor(0.0)  # (batch, words, tags)
    max_words = tf.shape(word_scores)[1]
    word_mask = tf.sequence_mask(num_words, max_words)  # (batch, words)

    if crf is None:
        tag_ids = tf.argmax(word_scores, axis=-1, output_type=tf.int32)  # (batch, words)
    else:
        from kbert.layers.crf import bio_constraints

        # One extra unscored step: CRF.decode reads its first step, so it needs seq >= 1 even
        # when no row has a word (and skipping unscored steps leaves the path unchanged).
        padded = tf.pad(word_scores, [[0, 0], [0, 1], [0, 0]])  # (batch, words + 1, tags)
        padded_mask = tf.sequence_mask(num_words, max_words + 1)  # (batch, words + 1)
        path, _ = crf.decode(padded, padded_mask, constraints=bio_constraints(tag_names))
        tag_ids = tf.cast(path, tf.int32)[:, :max_words]  # (batch, words)
    tags = tf.where(word_mask, tf.gather(tf.constant(tag_names), tag_ids), "")

    # conlleval: an "I-X" continues the entity only right after a word of type X.
    tag_type = tf.where(word_mask, tf.gather(tf.constant(type_ids, tf.int32), tag_ids), -1)
    is_inside = word_mask & tf.gather(tf.constant(inside), tag_ids)  # (batch, words)
    continues = is_inside & (tag_type == _shift_right(tag_type, -1))  # (batch, words)
    in_entity = tag_type >= 0
    begins = in_entity & ~continues  # (batch, words)
    ends = in_entity & ~_shift_left(continues, False)  # (batch, words) the entity's last word
    type_index = tf.where(in_entity, tag_type, len(entity_types))  # the last entry is ""
    type_strings = tf.gather(tf.constant(entity_types + [""]), type_index)  # (batch, words)
    return {
        "tags": tags,
        "word_starts": word_starts,
        "word_ends": word_ends,
        "num_words": num_words,
        "entity_types": tf.ragged.boolean_mask(type_strings, begins).to_tensor(""),
        "entity_starts": tf.ragged.boolean_mask(word_starts, begins).to_tensor(-1),
        "entity_ends": tf.ragged.boolean_mask(word_ends, ends).to_tensor(-1),
        "num_entities": tf.reduce_sum(tf.cast(begins, tf.int32), axis=1),
    }


def answer_outputs(
    start_logits,
    end_logits,
    segment_ids,
    padding_mask,
    start_offsets,
    end_offsets,
    max_answer_length,
):
    """Picks the best answer span of each row and returns its character span in the context.

    The candidates are the context tokens: second segment (`segment_ids == 1`), not padding,
    and with offsets >= 0 (which leaves out the final `[SEP]`). Over all pairs of candidates
    (i, j) with `i <= j < i + max_answer_length`, the span maximizing
    `start_logits[i] + end_logits[j]` wins (on a tie, the smallest i, then the smallest j):
    what `kbert.models.answer_decoding.decode_answers` returns for one window when `n_best`
    covers every token. A row without any candidate (an empty context) gets start = end = -1
    and score -inf.

    Args:
        start_logits: float tensor (batch, seq).
        end_logits: float tensor (batch, seq).
        segment_ids: int tensor (batch, seq), 0 for `[CLS]` question `[SEP]`, 1 for the context
            and its `[SEP]`.
        padding_mask: int or bool tensor (batch, seq), 1 for real tokens.
        start_offsets: int tensor (batch, seq), the preprocessor's `start_offsets`.
        end_offsets: int tensor (batch, seq), the preprocessor's `end_offsets` (exclusive).
        max_answer_length: int >= 1 (or an int scalar tensor). Most tokens in an answer.

    Returns:
        dict of tensors: `answer_start`, `answer_end` int32 (batch,), character offsets into
        the context, end exclusive (-1 without a candidate); `score` float32 (batch,),
        `start_logits[i] + end_logits[j]` (-inf without a candidate).

    Raises:
        ValueError: if `max_answer_length` is a Python int below 1 or a tensor has the wrong
            rank or dtype.

    Example:
    >>> outputs = answer_outputs(
    ...     start_logits=tf.constant([[0.0, 0.0, 0.0, 1.0, 3.0, 0.0]]),
    ...     end_logits=tf.constant([[0.0, 0.0, 0.0, 0.0, 2.0, 9.0]]),
    ...     segment_ids=tf.constant([[0, 0, 0, 1, 1, 1]]),
    ...     padding_mask=tf.constant([[1, 1, 1, 1, 1, 1]]),
    ...     start_offsets=tf.constant([[-1, 0, -1, 0, 4, -1]]),
    ...     end_offsets=tf.constant([[-1, 3, -1, 3, 8, -1]]),
    ...     max_answer_length=30)
    >>> [outputs[key].numpy().tolist() for key in ("answer_start", "answer_end", "score")]
    [[4], [8], [5.0]]
    """
    if isinstance(max_answer_length, bool) or (
        isinstance(max_answer_length, int) and max_answer_length < 1
    ):
        raise ValueError(f"max_answer_length must be an int >= 1; received {max_answer_length!r}")
    max_answer_length = tf.cast(max_answer_length, tf.int32)
    _check_rank(max_answer_length, 0, "max_answer_length")
    logits = {}
    for name, value in (("start_logits", start_logits), ("end_logits", end_logits)):
        value = tf.convert_to_tensor(value)
        if not value.dtype.is_floating:
            raise ValueError(f"{name} must be a float tensor; received dtype {value.dtype.name}")
        _check_rank(value, 2, name)
        logits[name] = tf.cast(value, tf.float32)
    ints = {}
    for name, value in (
        ("segment_ids", segment_ids),
        ("padding_mask", padding_mask),
        ("start_offsets", start_offsets),
        ("end_offsets", end_offsets),
    ):
        value = tf.convert_to_tensor(value)
        if not (value.dtype.is_integer or value.dtype == tf.bool):
            raise ValueError(f"{name} must be an int tensor; received dtype {value.dtype.name}")
        _check_rank(value, 2, name)
        ints[name] = tf.cast(value, tf.int32)

    # One never-valid column at the end keeps the (seq x seq) matrix non-empty (argmax needs a
    # column) even when seq is 0.
    def padded(value, fill):
        column = tf.fill([tf.shape(value)[0], 1], tf.constant(fill, value.dtype))
        return tf.concat([value, column], axis=1)  # (batch, seq + 1)

    start = padded(logits["start_logits"], 0.0)  # (batch, seq + 1)
    end = padded(logits["end_logits"], 0.0)  # (batch, seq + 1)
    start_offsets = padded(ints["start_offsets"], -1)  # (batch, seq + 1)
    end_offsets = padded(ints["end_offsets"], -1)  # (batch, seq + 1)
    candidate = (
        (padded(ints["segment_ids"], 0) == 1)
        & (padded(ints["padding_mask"], 0) == 1)
        & (start_offsets >= 0)
        & (end_offsets >= 0)
    )  # (batch, seq + 1)

    batch_size, length = tf.shape(start)[0], tf.shape(start)[1]
    position = tf.range(length)
    span = position[tf.newaxis, :] - position[:, tf.newaxis]  # (seq + 1, seq + 1): j - i
    allowed = (span >= 0) & (span < max_answer_length)  # (start i, end j)
    valid = candidate[:, :, tf.newaxis] & candidate[:, tf.newaxis, :] & allowed  # (b, i, j)
    pair_scores = start[:, :, tf.newaxis] + end[:, tf.newaxis, :]  # (batch, i, j)
    pair_scores = tf.where(valid, pair_scores, _NEGATIVE_INFINITY)
    flat = tf.reshape(pair_scores, tf.stack([batch_size, length * length]))  # (batch, i * j)
    best = tf.argmax(flat, axis=1, output_type=tf.int32)  # (batch,) first maximum: smallest i
    found = tf.reduce_any(valid, axis=[1, 2])  # (batch,)
    first_token, last_token = best // length, best % length  # (batch,) each
    return {
        "answer_start": tf.where(found, tf.gather(start_offsets, first_token, batch_dims=1), -1),
        "answer_end": tf.where(found, tf.gather(end_offsets, last_token, batch_dims=1), -1),
        "score": tf.where(found, tf.reduce_max(flat, axis=1), _NEGATIVE_INFINITY),
    }
