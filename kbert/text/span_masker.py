"""Span masking for SpanBERT pretraining (Joshi et al. 2020; Jurafsky & Martin eq. 11.17-11.20).

SpanBERT masks contiguous spans of whole words instead of single tokens, and adds the span boundary
objective (SBO): each token x_i of a span (s, e) is predicted from the encoder outputs at the two
boundary tokens y_{s-1} and y_{e+1} plus a position embedding p_{i-s+1}. `SpanMasker` draws the
spans and returns, for every masked position, the targets and those three indices; the SBO head
only gathers.

How spans are drawn (each row independently, in a `tf.while_loop` over attempts that treats the
whole batch at once):

1. A length ℓ in words is drawn from a geometric distribution with parameter
   `geometric_probability` (0.2) restricted to 1..`max_span_length` (10) and renormalized,
   P(ℓ) ∝ p (1 - p)^(ℓ - 1). This is how the SpanBERT code "clips" ℓ, and gives the paper's mean
   span length of 3.8 words (min(ℓ, 10) would give 4.46 and put 11% of spans at exactly 10).
2. A start word is drawn uniformly among the words where ℓ whole words fit: none of them already
   in a span or next to one (so spans never overlap nor touch, and both boundary tokens are
   unmasked), no special token or padding inside (spans never cross `[SEP]`), and not at the very
   first or last position of the row (so both boundary positions exist). If ℓ fits nowhere, the
   attempt is repeated with a new ℓ.
3. Budget rule: with C tokens covered so far and a budget B = `selection_rate` × (number of
   non-special, non-padding tokens), a span of T tokens is added if C + T/2 <= B, i.e. when its
   midpoint is within the budget; the first span that fails ends the row. The coverage therefore
   misses B by at most half a span either way, and is B on average (stopping at the first C >= B
   would overshoot by half a span on average, about 2 tokens on 128-token rows). The one
   exception is a row's first span, added whenever B > 0, so that a short row still gets a span
   (SpanBERT rounds its budget up for the same reason); it may exceed B by up to a whole span.
   A row also ends when the next span would exceed `max_selections` tokens, when no word is
   free, or after a safety bound of 2 × max_selections + 4 × max_span_length attempts.
4. Per span, not per token, the span is replaced by `[MASK]` (80%), by random tokens (10%, one
   drawn per token from the unigram distribution) or kept (10%).

The random number generator is the one `MaskedLMMasker` uses (see its module docstring): each
call, in a `tf.data` map too, draws new spans.
"""

import numbers

import keras
import numpy as np
import tensorflow as tf

from kbert.checks import check_int
from kbert.text.masked_lm_masker import (
    OUTPUT_KEYS,
    MaskerBase,
    corrupt,
    gather_selected,
    per_token,
    prepare_inputs,
    sample_ids,
    word_table,
)

SPAN_OUTPUT_KEYS = OUTPUT_KEYS + (
    "mask_left_boundary",
    "mask_right_boundary",
    "mask_relative_positions",
)


def span_length_probabilities(geometric_probability, max_span_length):
    """P(ℓ) for ℓ = 1..max_span_length: the geometric distribution restricted and renormalized.

    Args:
        geometric_probability: float in (0, 1]. The geometric parameter p.
        max_span_length: int. The longest span, in words.

    Returns:
        A float64 numpy array of length `max_span_length`; entry ℓ - 1 is P(ℓ).

    Example:
    >>> probabilities = span_length_probabilities(0.2, 10)
    >>> round(float((np.arange(1, 11) * probabilities).sum()), 2)  # SpanBERT's mean span length
    3.8
    """
    lengths = np.arange(1, max_span_length + 1)
    weights = geometric_probability * (1.0 - geometric_probability) ** (lengths - 1)
    return weights / weights.sum()


def _shift(values, offset, fill):
    """values[:, w - offset] at column w (offset +1: from the left, -1: from the right)."""
    pad = tf.fill([tf.shape(values)[0], 1], fill)
    if offset == 1:
        return tf.concat([pad, values[:, :-1]], axis=1)
    return tf.concat([values[:, 1:], pad], axis=1)


@keras.saving.register_keras_serializable(package="kbert")
class SpanMasker(MaskerBase):
    """Masks contiguous spans of whole words for SpanBERT (masked LM plus span boundary objective).

    Span lengths follow a geometric distribution over words restricted to 1..`max_span_length`;
    spans are added at random start words until about `selection_rate` of the eligible tokens are
    covered; each span as a whole is masked, randomized or kept. Spans never overlap, touch, or
    cross special tokens. The module docstring gives the exact sampling and budget rules.

    Create the layer once, outside the function given to `Dataset.map` or `tf.function`: it owns
    the generator's state variable, which such functions may not create. tf.data treats that
    variable as external state: checkpointing an iterator does not save it.

    Args:
        vocabulary_size: int. Number of token ids.
        mask_token_id: int. Id of `[MASK]`; never in a span, never a random replacement.
        special_token_ids: list of int. Ids never in a span nor drawn as replacements (`[PAD]`,
            `[CLS]`, `[SEP]`, ...). Padding positions are never in a span whatever their id.
        max_selections: int. Most masked tokens per sequence: the size of the mask outputs. Leave
            room above `selection_rate` × sequence_length (a span's worth of tokens): a row stops
            growing at the first span that would not fit.
        selection_rate: float, default 0.15. Share of eligible tokens to cover with spans.
        mask_token_rate: float, default 0.8. Share of spans replaced by `[MASK]` tokens.
        random_token_rate: float, default 0.1. Share of spans replaced by random tokens; the rest
            are kept unchanged (but still predicted).
        geometric_probability: float, default 0.2. Parameter p of the span length distribution,
            in (0, 1]; larger means shorter spans (1 gives single words).
        max_span_length: int, default 10. Longest span, in words.
        unigram_probabilities: list or array of `vocabulary_size` floats, or None (default).
            Distribution of random replacement tokens; see `MaskedLMMasker`.
        whole_words: bool, default True. Count span lengths in words given by `word_ids` at call;
            False counts tokens (and ignores `word_ids`).
        seed: int or None, default None. Seeds the generator; None seeds it non-deterministically.
        **kwargs: passed to `keras.layers.Layer`.

    Example:
    >>> masker = SpanMasker(10, mask_token_id=4, special_token_ids=[0, 2, 3], max_selections=3,
    ...                     selection_rate=1.0, mask_token_rate=1.0, random_token_rate=0.0)
    >>> outputs = masker(tf.constant([[2, 5, 6, 3, 0]]), tf.constant([[1, 1, 1, 1, 0]]),
    ...                  word_ids=tf.constant([[-1, 0, 0, -1, -1]]))
    >>> outputs["token_ids"].numpy().tolist(), outputs["mask_positions"].numpy().tolist()
    ([[2, 4, 4, 3, 0]], [[1, 2, 0]])
    >>> outputs["mask_left_boundary"].numpy().tolist(), outputs["mask_right_boundary"].numpy().tolist()
    ([[0, 0, 0]], [[3, 3, 0]])
    >>> outputs["mask_relative_positions"].numpy().tolist()
    [[1, 2, 0]]
    """

    def __init__(
        self,
        vocabulary_size,
        mask_token_id,
        special_token_ids,
        max_selections,
        selection_rate=0.15,
        mask_token_rate=0.8,
        random_token_rate=0.1,
        geometric_probability=0.2,
        max_span_length=10,
        unigram_probabilities=None,
        whole_words=True,
        seed=None,
        **kwargs,
    ):
        super().__init__(
            vocabulary_size,
            mask_token_id,
            special_token_ids,
            max_selections,
            selection_rate,
            mask_token_rate,
            random_token_rate,
            unigram_probabilities,
            seed,
            **kwargs,
        )
        if (
            isinstance(geometric_probability, bool)
            or not isinstance(geometric_probability, numbers.Real)
            or not 0.0 < geometric_probability <= 1.0
        ):
            raise ValueError(
                f"geometric_probability must be a number in (0, 1]; received "
                f"{geometric_probability!r}"
            )
        self.geometric_probability = float(geometric_probability)
        self.max_span_length = check_int("max_span_length", max_span_length, 1)
        if not isinstance(whole_words, bool):
            raise ValueError(f"whole_words must be a bool; received {whole_words!r}")
        self.whole_words = whole_words
        span_cdf = np.cumsum(
            span_length_probabilities(self.geometric_probability, self.max_span_length)
        )
        span_cdf[-1] = 1.0  # every u < 1 finds a length
        self._span_length_cdf = span_cdf
        self._max_attempts = 2 * self.max_selections + 4 * self.max_span_length

    def sample_span_lengths(self, count):
        """Draws span lengths in words, as the layer does for each attempt.

        Args:
            count: int. How many lengths.

        Returns:
            An int32 tensor of shape (count,), values in 1..max_span_length.

        Example:
        >>> masker = SpanMasker(10, 4, [0, 2, 3], max_selections=4, max_span_length=3)
        >>> sorted(set(masker.sample_span_lengths(100).numpy().tolist())) <= [1, 2, 3]
        True
        """
        return sample_ids(self._generator, tf.constant(self._span_length_cdf), [count]) + 1

    def _sample_spans(self, words, eligible):
        """Runs the attempts; returns per-word (batch, length) covered, span first/last token
        positions and span treatment draws."""
        generator = self._generator
        first, size, exists = words["first"], words["size"], words["exists"]
        batch, length = tf.shape(first)[0], tf.shape(first)[1]
        word_index = tf.range(length)[tf.newaxis, :]  # (1, length) word numbers
        last = first + size - 1  # (batch, length) last token of each word
        next_first = _shift(first, -1, length)
        # Word w + 1 starts right after word w: no special token or padding in between.
        joined_to_next = exists & (next_first < length) & (next_first == last + 1)
        # Both boundary positions s - 1 and e + 1 must lie inside the row.
        usable = exists & (first > 0) & (last < length - 1)
        breaks_before = tf.cumsum(tf.cast(~joined_to_next, tf.int32), axis=1, exclusive=True)
        budget = self.selection_rate * tf.reduce_sum(tf.cast(eligible, tf.float32), axis=1)
        span_cdf = tf.constant(self._span_length_cdf)

        def attempt(step, done, covered, covered_tokens, span_first, span_last, treatment):
            # A word next to a span is not free either: spans must not touch.
            covered_before = _shift(covered & joined_to_next, 1, False)
            covered_after = _shift(covered, -1, False) & joined_to_next
            available = usable & ~covered & ~covered_before & ~covered_after  # (batch, length)
            blocked = tf.cast(~available, tf.int32)
            blocked_through = tf.cumsum(blocked, axis=1)  # (batch, length) inclusive
            blocked_before = blocked_through - blocked

            span_words = sample_ids(generator, span_cdf, [batch]) + 1  # (batch,)
            end_word = word_index + span_words[:, tf.newaxis] - 1  # (batch, length)
            clipped_end = tf.minimum(end_word, length - 1)
            # Words w..end all free (no blocked word) and joined (no break before end).
            valid = (
                available
                & (end_word < length)
                & (tf.gather(blocked_through, clipped_end, batch_dims=1) == blocked_before)
                & (tf.gather(breaks_before, clipped_end, batch_dims=1) == breaks_before)
            )
            has_valid = tf.reduce_any(valid, axis=1)  # (batch,)
            start_word = tf.argmax(
                tf.where(valid, generator.uniform([batch, length]), -1.0),
                axis=1,
                output_type=tf.int32,
            )  # (batch,) uniform among the valid starts
            stop_word = tf.minimum(start_word + span_words - 1, length - 1)
            start = tf.gather(first, start_word, batch_dims=1)  # (batch,) token positions
            end = tf.gather(last, stop_word, batch_dims=1)
            tokens = end - start + 1

            # The midpoint rule, except that a row's first span only needs a positive budget, so
            # that a short row whose first draw is long still gets a span.
            within_budget = tf.where(
                covered_tokens == 0,
                budget > 0,
                tf.cast(covered_tokens, tf.float32) + 0.5 * tf.cast(tokens, tf.float32) <= budget,
            )
            fits = covered_tokens + tokens <= self.max_selections
            active = ~done
            accept = active & has_valid & within_budget & fits
            no_room = ~tf.reduce_any(available, axis=1)
            done |= active & (no_room | (has_valid & ~(within_budget & fits)))

            in_span = (
                accept[:, tf.newaxis]
                & (word_index >= start_word[:, tf.newaxis])
                & (word_index <= stop_word[:, tf.newaxis])
            )  # (batch, length)
            draw = generator.uniform([batch])  # one treatment per span
            return (
                step + 1,
                done,
                covered | in_span,
                covered_tokens + tf.where(accept, tokens, 0),
                tf.where(in_span, start[:, tf.newaxis], span_first),
                tf.where(in_span, end[:, tf.newaxis], span_last),
                tf.where(in_span, draw[:, tf.newaxis], treatment),
            )

        def keep_going(step, done, *_):
            return (step < self._max_attempts) & ~tf.reduce_all(done)

        zeros = tf.zeros([batch, length], tf.int32)
        _, _, covered, _, span_first, span_last, treatment = tf.while_loop(
            keep_going,
            attempt,
            (
                tf.constant(0),
                tf.zeros([batch], tf.bool),
                tf.zeros([batch, length], tf.bool),
                tf.zeros([batch], tf.int32),
                zeros,
                zeros,
                tf.zeros([batch, length], tf.float32),
            ),
            # Static sizes (a batch of 1 from an unbatched row) are not kept through the body.
            shape_invariants=(
                tf.TensorShape([]),
                tf.TensorShape([None]),
                tf.TensorShape([None, None]),
                tf.TensorShape([None]),
                tf.TensorShape([None, None]),
                tf.TensorShape([None, None]),
                tf.TensorShape([None, None]),
            ),
        )
        return covered, span_first, span_last, treatment

    @tf.autograph.experimental.do_not_convert  # explicit tf.while_loop; nothing to convert
    def call(self, token_ids, padding_mask=None, word_ids=None):
        """Draws new spans and corrupts them.

        Args:
            token_ids: int tensor (batch, sequence_length), or (sequence_length,) for one
                sequence: packed ids, e.g. `InputPacker`'s `token_ids`.
            padding_mask: int or bool tensor of the same shape, 1 for real tokens, 0 for padding.
            word_ids: int tensor of the same shape: the word of each token, -1 at special and
                padding positions (`InputPacker`'s packed `word_ids`). Required with
                `whole_words` (the default); ignored otherwise.

        Returns:
            A dict of tensors, each (batch, ...) or without the batch axis for one sequence:
            `token_ids` int32 (batch, sequence_length), the corrupted input; and, all
            (batch, max_selections) with unused slots 0: `mask_positions` int32, the masked
            positions in increasing order; `mask_ids` int32, the original ids there;
            `mask_weights` float32, 1.0 for used slots; `mask_left_boundary` int32, s - 1 for the
            span (s, e) holding the position; `mask_right_boundary` int32, e + 1;
            `mask_relative_positions` int32, i - s + 1 (1 for the first token of a span), the
            index of the SBO position embedding.
        """
        if self.whole_words and word_ids is None:
            raise ValueError(
                "whole_words=True needs word_ids (InputPacker's packed word_ids, -1 at special "
                "and padding positions) to count span lengths in words; received word_ids=None "
                "(pass whole_words=False to count tokens)"
            )
        inputs = prepare_inputs(token_ids, padding_mask, word_ids, self._excluded_ids)
        token_ids, eligible = inputs["token_ids"], inputs["eligible"]
        shape = tf.shape(token_ids)
        words = word_table(eligible, inputs["word_ids"] if self.whole_words else None)
        covered, span_first, span_last, treatment = self._sample_spans(words, eligible)

        word_number = words["word_number"]
        selected = eligible & per_token(covered, word_number)  # (batch, length)
        start = per_token(span_first, word_number)  # (batch, length) s of each token's span
        end = per_token(span_last, word_number)
        corrupted = corrupt(
            token_ids,
            selected,
            per_token(treatment, word_number),
            sample_ids(self._generator, tf.constant(self._replacement_cdf), shape),
            self.mask_token_id,
            self.mask_token_rate,
            self.random_token_rate,
        )
        position = tf.range(shape[1])[tf.newaxis, :]  # (1, length)
        outputs = gather_selected(
            selected,
            self.max_selections,
            {
                "mask_ids": token_ids,
                "mask_left_boundary": start - 1,
                "mask_right_boundary": end + 1,
                "mask_relative_positions": position - start + 1,
            },
        )
        outputs["token_ids"] = corrupted
        outputs = {key: outputs[key] for key in SPAN_OUTPUT_KEYS}
        if inputs["unbatched"]:
            outputs = {key: value[0] for key, value in outputs.items()}
        return outputs

    def compute_output_spec(self, token_ids, padding_mask=None, word_ids=None):
        shape = tuple(token_ids.shape)
        selections = shape[:-1] + (self.max_selections,)
        outputs = {"token_ids": keras.KerasTensor(shape, dtype="int32")}
        for key in SPAN_OUTPUT_KEYS[1:]:
            dtype = "float32" if key == "mask_weights" else "int32"
            outputs[key] = keras.KerasTensor(selections, dtype=dtype)
        return outputs

    def get_config(self):
        return {
            **super().get_config(),
            "geometric_probability": self.geometric_probability,
            "max_span_length": self.max_span_length,
            "whole_words": self.whole_words,
        }
