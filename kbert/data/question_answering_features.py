"""Extractive question answering features: `[CLS] question [SEP] context window [SEP]` rows.

A SQuAD context is often longer than the model's input, so every example becomes one or more
rows, each holding the question and one window of the context's subwords (BERT's "doc spans",
Devlin et al. 2019 §4.2). Each row keeps, for its context tokens, the character span in the
original context, so that `kbert.models.decode_answers` can turn predicted token positions back
into the exact original text (casing and accents included).
"""

import numpy as np

from kbert.data.batched_tokenization import tokenize_with_offsets


def _window_starts(num_tokens, capacity, stride):
    """Start of each window over `num_tokens` context tokens: a step of `capacity - stride`."""
    starts = [0]
    while starts[-1] + capacity < num_tokens:
        starts.append(starts[-1] + capacity - stride)
    return starts


def _max_context(num_tokens, starts, capacity):
    """(windows, num_tokens) bool: True in the window giving each token the most context.

    BERT's `_check_is_max_context`: in a window [s, e], token p scores
    min(p - s, e - p) + 0.01 * (e - s + 1); the best-scoring window wins, the first on a tie.
    """
    positions = np.arange(num_tokens)[None, :]  # (1, tokens)
    begin = np.asarray(starts)[:, None]  # (windows, 1)
    end = np.minimum(begin + capacity, num_tokens)  # (windows, 1), exclusive
    inside = (positions >= begin) & (positions < end)  # (windows, tokens)
    score = np.minimum(positions - begin, end - 1 - positions) + 0.01 * (end - begin)
    score = np.where(inside, score, -np.inf)  # (windows, tokens)
    best = np.argmax(score, axis=0)  # (tokens,) first maximum on ties
    return np.arange(len(starts))[:, None] == best[None, :]


def _answer_tokens(example, context_starts, context_ends):
    """Validates the first gold answer; returns its first and last context token (inclusive)."""
    if not example.answers:
        raise ValueError(f"example {example.id!r} has no answer; training needs one per example")
    text, start_char = example.answers[0]
    end_char = start_char + len(text)
    if start_char < 0 or end_char > len(example.context):
        raise ValueError(
            f"example {example.id!r}: answer offsets fall outside the context; expected "
            f"0 <= start and start + len(text) <= {len(example.context)}, received start "
            f"{start_char} and text of length {len(text)}"
        )
    if example.context[start_char:end_char] != text:
        raise ValueError(
            f"example {example.id!r}: the context does not contain the answer at its offset; "
            f"expected {text!r} at {start_char}, received "
            f"{example.context[start_char:end_char]!r}"
        )
    covered = np.flatnonzero((context_starts < end_char) & (context_ends > start_char))
    if not len(covered):
        raise ValueError(
            f"example {example.id!r}: the answer {text!r} at {start_char} covers no context token"
        )
    return covered[0], covered[-1]


def question_answering_features(
    examples, tokenizer, sequence_length=384, stride=128, max_question_length=64, training=False
):
    """Turns extractive QA examples into fixed-length model rows, one per context window.

    Each row is `[CLS] question [SEP] context window [SEP]`, padded with the pad id to
    `sequence_length`; the question (truncated to its first `max_question_length` subwords) is
    segment 0, the context window segment 1. A window holds at most
    `capacity = sequence_length - question_tokens - 3` context subwords; `stride` is the OVERLAP
    in subwords between consecutive windows (Hugging Face's `stride`, as `doc_stride` is used
    in its `run_qa.py`; original BERT's `doc_stride` is instead the step between window
    starts, here `capacity - stride`). Windows start at 0, `capacity - stride`, ... and stop at
    the first one that reaches the context's end, so that last window ends exactly there and no
    context subword is ever dropped. A token seen in several windows is "max context" in one
    of them only (BERT's `_check_is_max_context`: the window where min(left, right) context +
    0.01 * window length is largest, the first on a tie), so decoding counts each start once.

    When `training`, the first gold answer of each example gives the labels: its tokens are the
    context tokens whose character spans overlap [start_char, start_char + len(text)); a window
    that does not hold all of them gets start = end = 0, the [CLS] position (BERT's SQuAD v1.1
    convention). Answers are only read when `training`.

    Args:
        examples: sequence of objects with attributes `id`, `context` and `question` (str) and
            `answers` (sequence of `(text, start_char)` pairs), e.g. `kbert.data` SQuAD
            examples or any namedtuple with those fields.
        tokenizer: `kbert.text.WordPieceTokenizer` (or any object with
            `tokenize_with_alignment` and `cls_token_id`, `sep_token_id`, `pad_token_id`).
        sequence_length: int, default 384. Tokens per row.
        stride: int, default 128. Overlap in context subwords between consecutive windows; must
            be below the smallest window capacity, `sequence_length - max_question_length - 3`.
        max_question_length: int, default 64. Longer questions keep their first subwords.
        training: bool, default False. Also return `start_positions` and `end_positions`.

    Returns:
        A dict of numpy arrays with one row per window:
        `token_ids`, `segment_ids`, `padding_mask`: int32 `(rows, sequence_length)`;
        `example_index`: int32 `(rows,)`, the index into `examples`;
        `context_start_offsets`, `context_end_offsets`: int32 `(rows, sequence_length)`, each
        context token's character span in its context (end exclusive), -1 for [CLS], the
        question, [SEP] and padding;
        `max_context`: bool `(rows, sequence_length)`, True where this window gives the token
        its most context (False outside the context);
        with `training`, `start_positions` and `end_positions`: int32 `(rows,)`.

    Raises:
        ValueError: on bad sizes, a tokenizer without [CLS]/[SEP]/pad ids, an empty question or
            context, or (when training) a missing or misplaced answer; the message names the
            example's id.

    Example:
    >>> import collections
    >>> from kbert.text import WordPieceTokenizer
    >>> Example = collections.namedtuple("Example", "id title context question answers")
    >>> tokenizer = WordPieceTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "who",
    ...                                 "ran", "bob", ".", "?"])
    >>> example = Example("q1", "", "Bob ran.", "Who ran?", (("Bob", 0),))
    >>> features = question_answering_features([example], tokenizer, sequence_length=10,
    ...                                        stride=0, max_question_length=4, training=True)
    >>> features["token_ids"].tolist(), features["start_positions"].tolist()
    ([[2, 5, 6, 9, 3, 7, 6, 8, 3, 0]], [5])
    """
    for name, value in (
        ("sequence_length", sequence_length),
        ("stride", stride),
        ("max_question_length", max_question_length),
    ):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise ValueError(f"{name} must be an int; received {value!r}")
    if max_question_length < 1:
        raise ValueError(f"max_question_length must be >= 1; received {max_question_length}")
    if sequence_length < max_question_length + 4:
        raise ValueError(
            "sequence_length must leave room for [CLS], the question, [SEP], one context token "
            f"and [SEP]: expected sequence_length >= max_question_length + 4 = "
            f"{max_question_length + 4}; received sequence_length {sequence_length}"
        )
    capacity_floor = sequence_length - max_question_length - 3
    if not 0 <= stride < capacity_floor:
        raise ValueError(
            f"stride (the overlap between windows) must be in [0, window capacity); the smallest "
            f"capacity is sequence_length - max_question_length - 3 = {capacity_floor}; received "
            f"stride {stride}"
        )
    special = {name: getattr(tokenizer, f"{name}_token_id", None) for name in ("cls", "sep", "pad")}
    missing = [name for name, value in special.items() if value is None]
    if missing:
        raise ValueError(f"the tokenizer needs cls, sep and pad tokens; it has no {missing}")
    examples = list(examples)
    if not examples:
        raise ValueError("examples must hold at least one example; received none")
    for example in examples:
        for field in ("question", "context"):
            if not getattr(example, field).strip():
                raise ValueError(f"example {example.id!r} has an empty {field}")

    questions = tokenize_with_offsets(tokenizer, [example.question for example in examples])
    # SQuAD asks about five questions per paragraph: tokenize each distinct context once.
    distinct = list(dict.fromkeys(example.context for example in examples))
    context_tokens = dict(zip(distinct, tokenize_with_offsets(tokenizer, distinct), strict=True))

    rows = {
        key: []
        for key in (
            "token_ids",
            "segment_ids",
            "context_start_offsets",
            "context_end_offsets",
            "max_context",
        )
    }
    example_index, lengths, start_positions, end_positions = [], [], [], []
    for index, example in enumerate(examples):
        question_ids = questions[index][0][:max_question_length]
        context_ids, context_starts, context_ends = context_tokens[example.context]
        for field, ids in (("question", question_ids), ("context", context_ids)):
            if not len(ids):
                raise ValueError(f"example {example.id!r} has an empty {field} (no tokens)")
        if training:
            answer_first, answer_last = _answer_tokens(example, context_starts, context_ends)
        offset = len(question_ids) + 2  # row position of the window's first context token
        capacity = sequence_length - offset - 1
        starts = _window_starts(len(context_ids), capacity, stride)
        best = _max_context(len(context_ids), starts, capacity)  # (windows, context tokens)
        for window, begin in enumerate(starts):
            end = min(begin + capacity, len(context_ids))
            length = offset + end - begin + 1
            token_ids = np.full(sequence_length, special["pad"], np.int32)
            token_ids[:length] = np.concatenate(
                [
                    [special["cls"]],
                    question_ids,
                    [special["sep"]],
                    context_ids[begin:end],
                    [special["sep"]],
                ]
            )
            segment_ids = np.zeros(sequence_length, np.int32)
            segment_ids[offset:length] = 1
            starts_row = np.full(sequence_length, -1, np.int32)
            ends_row = np.full(sequence_length, -1, np.int32)
            max_context = np.zeros(sequence_length, bool)
            starts_row[offset : offset + end - begin] = context_starts[begin:end]
            ends_row[offset : offset + end - begin] = context_ends[begin:end]
            max_context[offset : offset + end - begin] = best[window, begin:end]
            for key, value in (
                ("token_ids", token_ids),
                ("segment_ids", segment_ids),
                ("context_start_offsets", starts_row),
                ("context_end_offsets", ends_row),
                ("max_context", max_context),
            ):
                rows[key].append(value)
            example_index.append(index)
            lengths.append(length)
            if training:
                inside = begin <= answer_first and answer_last < end
                start_positions.append(offset + answer_first - begin if inside else 0)
                end_positions.append(offset + answer_last - begin if inside else 0)

    features = {key: np.stack(value) for key, value in rows.items()}
    features["padding_mask"] = (
        np.arange(sequence_length)[None, :] < np.asarray(lengths)[:, None]
    ).astype(np.int32)  # (rows, seq)
    features["example_index"] = np.asarray(example_index, np.int32)
    if training:
        features["start_positions"] = np.asarray(start_positions, np.int32)
        features["end_positions"] = np.asarray(end_positions, np.int32)
    return features
