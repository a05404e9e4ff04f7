"""Texts longer than the encoder's window: head, head + tail, or sliding windows.

A classifier reads `sequence_length` tokens. The rest of a long document (an IMDb review runs to
3,000 tokens) must be dropped or read in pieces, and which one changes the answer. Sun et al.
(2019, "How to Fine-Tune BERT for Text Classification?") compare the choices on IMDb: keeping
the first 128 and the last 382 tokens ("head + tail") beat head-only, tail-only and
hierarchical pooling of 512-token pieces. The strategies here, all in core TensorFlow ops so
they run in `tf.data` and inside an exported serving graph:

- "head": the first `sequence_length - 2` tokens (what `BertPreprocessor` does).
- "head_tail": the first quarter of the budget from the start of the text and the rest from its
  end (Sun et al.'s 128 + 382 of 510).
- "window_mean" / "window_max": the whole text in windows of `sequence_length - 2` tokens that
  start every `stride` tokens (half a window by default, so every token but the first and last
  half window is seen twice); the classifier scores every window and a text's logits are the
  mean or the element-wise max of its windows' logits (`aggregate_window_logits`).

Every call also says, per text, how many tokens it had (with [CLS] and [SEP]) and how many the
model read, so truncation is never silent.
"""

import keras
import tensorflow as tf

from kbert.checks import check_int
from kbert.text.graph_tokenizers import packing_tokenizer
from kbert.text.wordpiece_tokenizer import WordPieceTokenizer, as_texts  # noqa: F401 (example)

LONG_INPUT_STRATEGIES = ("head", "head_tail", "window_mean", "window_max")
WINDOW_STRATEGIES = ("window_mean", "window_max")
_ENCODER_KEYS = ("token_ids", "segment_ids", "padding_mask")


def window_spans(lengths, window, stride, max_windows=None):
    """Where each text's windows start and end, in token positions.

    A text of `n <= window` tokens gets one window `[0, n)`. A longer one gets windows starting
    at 0, stride, 2·stride, … until one reaches its end (the last is shifted left to end
    exactly at `n`, so no window is short and none is wasted). `max_windows` keeps the first
    windows only.

    Args:
        lengths: int tensor `(batch,)`. Tokens per text (without special tokens).
        window: int. Tokens per window.
        stride: int, 1 ≤ stride ≤ window. Distance between window starts.
        max_windows: int or None, default None (no cap).

    Returns:
        `(text_index, starts, ends)`: int32 tensors `(windows,)`, windows in text order.

    Example:
    >>> text_index, starts, ends = window_spans(tf.constant([3, 10]), window=4, stride=2)
    >>> text_index.numpy().tolist(), starts.numpy().tolist(), ends.numpy().tolist()
    ([0, 1, 1, 1, 1], [0, 0, 2, 4, 6], [3, 4, 6, 8, 10])
    """
    lengths = tf.cast(lengths, tf.int32)
    beyond = tf.maximum(lengths - window, 0)  # tokens past the first window
    counts = 1 + (beyond + stride - 1) // stride  # (batch,)
    if max_windows is not None:
        counts = tf.minimum(counts, max_windows)
    text_index = tf.repeat(tf.range(tf.shape(lengths)[0]), counts)  # (windows,)
    within = tf.ragged.range(counts).flat_values  # window number inside its text
    length = tf.gather(lengths, text_index)
    starts = tf.minimum(within * stride, tf.maximum(length - window, 0))
    ends = tf.minimum(starts + window, length)
    return text_index, starts, ends


def aggregate_window_logits(logits, text_index, num_texts, mode="mean"):
    """Combines the logits of each text's windows into one row per text.

    Args:
        logits: float tensor `(windows, classes)`.
        text_index: int tensor `(windows,)`. The text each window belongs to.
        num_texts: int or scalar tensor. Number of texts (every index in `[0, num_texts)` must
            have at least one window).
        mode: "mean" (average the logits) or "max" (element-wise maximum), default "mean".

    Returns:
        Float tensor `(num_texts, classes)`.

    Example:
    >>> logits = tf.constant([[1.0, 0.0], [3.0, -2.0], [0.0, 5.0]])
    >>> aggregate_window_logits(logits, tf.constant([0, 0, 1]), 2, "max").numpy().tolist()
    [[3.0, 0.0], [0.0, 5.0]]
    """
    if mode not in ("mean", "max"):
        raise ValueError(f"mode must be 'mean' or 'max'; received {mode!r}")
    reduce = tf.math.unsorted_segment_mean if mode == "mean" else tf.math.unsorted_segment_max
    return reduce(logits, tf.cast(text_index, tf.int32), num_texts)


@keras.saving.register_keras_serializable(package="kbert")
class LongTextPreprocessor(keras.layers.Layer):
    """Tokenizes single texts of any length into encoder windows by a long-input strategy.

    Args:
        tokenizer: `WordPieceTokenizer` or `SentencePieceTokenizer` (or its serialized form)
            with `cls_token`, `sep_token`
            and `pad_token`.
        sequence_length: int, default 128. Length of every packed row.
        strategy: one of `LONG_INPUT_STRATEGIES`, default "head".
        head_tokens: int or None, default None (a quarter of `sequence_length - 2`, Sun et
            al.'s 128 of 510). Tokens kept from the start by "head_tail"; the rest of the budget
            comes from the end.
        stride: int or None, default None (half a window). Distance between window starts.
        max_windows: int or None, default None (every window). Cap on windows per text; a text
            cut by it reports `tokens_kept < tokens`.
        **kwargs: passed to `keras.layers.Layer`.

    Call on a batch of texts (list of str or a rank-1 string tensor). Returns a dict:
    `token_ids`, `segment_ids`, `padding_mask` int32 `(windows, sequence_length)` (one row per
    text unless the strategy makes windows), `text_index` int32 `(windows,)` (the text of each
    row), `tokens` int32 `(batch,)` (the text's length with [CLS] and [SEP]) and `tokens_kept`
    int32 `(batch,)` (how many of those the model reads; less means the text was truncated).

    Example:
    >>> vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b", "c", "d", "e"]
    >>> tokenizer = WordPieceTokenizer(vocabulary)
    >>> head_tail = LongTextPreprocessor(tokenizer, sequence_length=6, strategy="head_tail",
    ...                                  head_tokens=1)
    >>> head_tail(["a b c d e"])["token_ids"].numpy().tolist()
    [[2, 5, 7, 8, 9, 3]]
    >>> windows = LongTextPreprocessor(tokenizer, sequence_length=5, strategy="window_mean",
    ...                                stride=2)
    >>> out = windows(["a b c d e", "a"])
    >>> out["token_ids"].numpy().tolist(), out["text_index"].numpy().tolist()
    ([[2, 5, 6, 7, 3], [2, 7, 8, 9, 3], [2, 5, 3, 0, 0]], [0, 0, 1])
    """

    # String and ragged ops have no XLA kernels.
    supports_jit = False

    def __init__(
        self,
        tokenizer,
        sequence_length=128,
        strategy="head",
        head_tokens=None,
        stride=None,
        max_windows=None,
        **kwargs,
    ):
        kwargs.setdefault("trainable", False)
        kwargs.setdefault("dtype", "int32")
        super().__init__(**kwargs)
        self._convert_input_args = False
        self._allow_non_tensor_positional_args = True
        tokenizer = packing_tokenizer(tokenizer)
        if strategy not in LONG_INPUT_STRATEGIES:
            raise ValueError(
                f"strategy must be one of {LONG_INPUT_STRATEGIES}; received {strategy!r}"
            )
        self.tokenizer = tokenizer
        self.sequence_length = check_int("sequence_length", sequence_length, 3)
        self.strategy = strategy
        budget = self.sequence_length - 2
        if head_tokens is not None:
            check_int("head_tokens", head_tokens, 0)
            if head_tokens > budget:
                raise ValueError(
                    f"head_tokens must be at most sequence_length - 2 = {budget}; "
                    f"received {head_tokens}"
                )
        if stride is not None:
            check_int("stride", stride, 1)
            if stride > budget:
                raise ValueError(
                    f"stride must be at most the window, sequence_length - 2 = "
                    f"{budget} (a larger stride skips tokens); received {stride}"
                )
        if max_windows is not None:
            check_int("max_windows", max_windows, 1)
        self.head_tokens = head_tokens
        self.stride = stride
        self.max_windows = max_windows
        self.built = True

    @property
    def budget(self):
        """Tokens of text per row: `sequence_length` minus [CLS] and [SEP]."""
        return self.sequence_length - 2

    @property
    def aggregation(self):
        """ "mean" or "max" for window strategies, None when there is one row per text."""
        return {"window_mean": "mean", "window_max": "max"}.get(self.strategy)

    def _pieces(self, ids):
        """Ragged `(windows, None)` ids to pack, `text_index` and tokens kept per text."""
        lengths = tf.cast(ids.row_lengths(), tf.int32)  # (batch,)
        batch = tf.shape(lengths)[0]
        budget = self.budget
        if self.strategy in ("head", "head_tail"):
            head = (
                budget
                if self.strategy == "head"
                else (budget // 4 if self.head_tokens is None else self.head_tokens)
            )
            tail = budget - head
            position = tf.ragged.range(lengths)  # (batch, None)
            length = tf.expand_dims(lengths, 1)
            keep = (position < head) | (position >= length - tail)
            return (tf.ragged.boolean_mask(ids, keep), tf.range(batch), tf.minimum(lengths, budget))
        stride = self.stride or max(budget // 2, 1)
        text_index, starts, ends = window_spans(lengths, budget, stride, self.max_windows)
        offsets = tf.gather(tf.cast(ids.row_starts(), tf.int32), text_index)
        flat = tf.ragged.range(offsets + starts, offsets + ends)  # (windows, None)
        pieces = tf.gather(ids.flat_values, flat)
        kept = tf.math.unsorted_segment_max(ends, text_index, batch)  # covered prefix
        return pieces, text_index, tf.minimum(kept, lengths)

    @tf.autograph.experimental.do_not_convert
    def call(self, texts):
        texts = as_texts(texts)
        if texts.shape.rank != 1:
            raise ValueError(
                "LongTextPreprocessor takes a batch of texts (a list or a rank-1 "
                f"string tensor); received rank {texts.shape.rank}"
            )
        ids = self.tokenizer(texts)  # (batch, None) ragged
        pieces, text_index, kept = self._pieces(ids)
        tokenizer = self.tokenizer
        rows = tf.shape(text_index)[0]
        start = tf.fill([rows, 1], tf.cast(tokenizer.cls_token_id, pieces.dtype))
        end = tf.fill([rows, 1], tf.cast(tokenizer.sep_token_id, pieces.dtype))
        packed = tf.concat([start, pieces, end], axis=1)  # (windows, None) ragged
        token_ids = packed.to_tensor(
            default_value=tokenizer.pad_token_id, shape=[None, self.sequence_length]
        )
        padding_mask = tf.sequence_mask(packed.row_lengths(), self.sequence_length, tf.int32)
        lengths = tf.cast(ids.row_lengths(), tf.int32)
        return {
            "token_ids": tf.cast(token_ids, tf.int32),
            "segment_ids": tf.zeros_like(padding_mask),
            "padding_mask": padding_mask,
            "text_index": tf.cast(text_index, tf.int32),
            "tokens": lengths + 2,
            "tokens_kept": kept + 2,
        }

    def encoder_inputs(self, packed):
        """The `token_ids`, `segment_ids` and `padding_mask` of a `call` result."""
        return {key: packed[key] for key in _ENCODER_KEYS}

    def aggregate(self, logits, packed):
        """One row of logits per text from the rows of `call(texts)` (identity for head/tail).

        Args:
            logits: float tensor `(windows, classes)` for `packed`'s rows.
            packed: the dict `call` returned.

        Returns:
            Float tensor `(batch, classes)`.
        """
        if self.aggregation is None:
            return logits
        return aggregate_window_logits(
            logits, packed["text_index"], tf.shape(packed["tokens"])[0], self.aggregation
        )

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "tokenizer": keras.saving.serialize_keras_object(self.tokenizer),
                "sequence_length": self.sequence_length,
                "strategy": self.strategy,
                "head_tokens": self.head_tokens,
                "stride": self.stride,
                "max_windows": self.max_windows,
            }
        )
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["tokenizer"] = keras.saving.deserialize_keras_object(config["tokenizer"])
        return cls(**config)
