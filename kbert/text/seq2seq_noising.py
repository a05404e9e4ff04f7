"""Denoising objectives for encoder-decoder pretraining: T5's span corruption, BART's text
infilling and sentence permutation (textbook §20.10, §20.12.3; J&M §11.4.1).

An encoder-decoder is pretrained by corrupting text for the encoder and asking the decoder for
what was lost:

- **Span corruption** (Raffel et al. 2020, T5): 15% of the tokens, in spans of mean length 3,
  each span replaced in the input by one sentinel (`<extra_id_0>`, `<extra_id_1>`, …); the
  target lists each sentinel followed by the tokens it hid. Exactly round(length × density)
  tokens are noise, cut into round(noise / mean span length) spans, with noise and kept spans
  both split at random (T5's `random_spans_noise_mask`), so every draw has the same rate.
- **Text infilling** (Lewis et al. 2020, BART): span lengths drawn from Poisson(λ = 3) until
  30% of the tokens are covered; each span becomes a single `<mask>` (a length-0 span inserts
  one), so the model must also tell how many tokens are missing; the target is the whole text.
- **Sentence permutation** (BART): the sentences of a document shuffled; the target is the
  original order.

These work on one example's token ids (numpy), for `tf.data` through `tf.numpy_function`.
"""

import numpy as np

from kbert.checks import check_int

SENTINEL_FORMAT = "<extra_id_{}>"  # T5's sentinel tokens


def sentinel_tokens(count):
    """T5's sentinel tokens `<extra_id_0>` … `<extra_id_{count - 1}>`, to add to a vocabulary.

    Example:
    >>> sentinel_tokens(2)
    ['<extra_id_0>', '<extra_id_1>']
    """
    count = check_int("count", count, minimum=1, expected="an integer >= 1")
    return [SENTINEL_FORMAT.format(i) for i in range(count)]


def _check_rate(name, value, upper=1.0):
    if not isinstance(value, (int, float)) or not 0 < value < upper:
        raise ValueError(f"{name} must be in (0, {upper:g}); received {value!r}")


def _random_segmentation(total, segments, rng):
    """`segments` positive lengths summing to `total`, uniformly among such compositions."""
    cuts = np.sort(rng.choice(np.arange(1, total), segments - 1, replace=False))
    return np.diff(np.concatenate([[0], cuts, [total]]))


def random_spans_noise_mask(length, noise_density=0.15, mean_noise_span_length=3.0, rng=None):
    """T5's noise mask: a bool array of `length`, True on round(length × density) tokens in
    round(noise / mean span length) spans, the first span of the row kept (not noise).

    Example:
    >>> mask = random_spans_noise_mask(20, 0.15, 3.0, np.random.default_rng(0))
    >>> int(mask.sum()), bool(mask[0])
    (3, False)
    """
    _check_rate("noise_density", noise_density)
    if mean_noise_span_length < 1:
        raise ValueError(
            f"mean_noise_span_length must be >= 1; received {mean_noise_span_length!r}"
        )
    length = check_int("length", length, minimum=2, expected="an integer >= 2")
    rng = rng or np.random.default_rng()
    noise = min(max(int(round(length * noise_density)), 1), length - 1)
    spans = max(int(round(noise / mean_noise_span_length)), 1)
    spans = min(spans, noise, length - noise)
    noise_lengths = _random_segmentation(noise, spans, rng)
    kept_lengths = _random_segmentation(length - noise, spans, rng)
    mask = np.zeros(length, bool)
    position = 0
    for kept, noisy in zip(kept_lengths, noise_lengths, strict=True):
        position += kept
        mask[position : position + noisy] = True
        position += noisy
    return mask


def span_corruption(
    token_ids, sentinel_ids, noise_density=0.15, mean_noise_span_length=3.0, eos_id=None, rng=None
):
    """T5's inputs and targets for one example.

    Args:
        token_ids: 1-D int array (no padding).
        sentinel_ids: sequence of int. The sentinels, in order (`<extra_id_0>` first); there
            must be at least as many as spans.
        noise_density: float in (0, 1), default 0.15.
        mean_noise_span_length: float >= 1, default 3.
        eos_id: int or None. Appended to both inputs and targets when given.
        rng: `numpy.random.Generator` or None.

    Returns:
        `(inputs, targets)`, 1-D int32 arrays: each noise span replaced by the next sentinel,
        and each sentinel followed by the span it replaced.

    Example:
    >>> inputs, targets = span_corruption(np.arange(10, 30), [99, 98, 97], 0.15, 3.0,
    ...                                   rng=np.random.default_rng(0))
    >>> len(inputs) + len(targets) == 20 + 2 * 1  # one span: one sentinel in each
    True
    """
    token_ids = np.asarray(token_ids, dtype=np.int32)
    if token_ids.ndim != 1:
        raise ValueError(f"token_ids must be 1-D; received shape {token_ids.shape}")
    mask = random_spans_noise_mask(len(token_ids), noise_density, mean_noise_span_length, rng)
    starts = np.flatnonzero(mask & ~np.concatenate([[False], mask[:-1]]))
    if len(starts) > len(sentinel_ids):
        raise ValueError(
            f"{len(starts)} noise spans need as many sentinels; received {len(sentinel_ids)}"
        )
    inputs, targets, span = [], [], -1
    for position, token in enumerate(token_ids):
        if mask[position]:
            if position in starts:
                span += 1
                inputs.append(sentinel_ids[span])
                targets.append(sentinel_ids[span])
            targets.append(token)
        else:
            inputs.append(token)
    if eos_id is not None:
        inputs.append(eos_id)
        targets.append(eos_id)
    return np.array(inputs, np.int32), np.array(targets, np.int32)


def text_infilling(token_ids, mask_id, mask_rate=0.3, poisson_lambda=3.0, rng=None):
    """BART's text infilling: spans with Poisson(λ) lengths, each replaced by one `mask_id`.

    Spans are drawn until `mask_rate` of the tokens are covered (the last span cut to the
    budget); a length-0 span inserts a `mask_id` before its position. Spans do not overlap.

    Returns:
        `(inputs, targets)`: the corrupted ids and the original ids (int32).
    """
    _check_rate("mask_rate", mask_rate)
    if poisson_lambda <= 0:
        raise ValueError(f"poisson_lambda must be > 0; received {poisson_lambda!r}")
    token_ids = np.asarray(token_ids, dtype=np.int32)
    rng = rng or np.random.default_rng()
    length = len(token_ids)
    budget = int(round(length * mask_rate))
    covered = np.zeros(length, bool)
    inserts = set()
    span_starts = {}
    attempts = 0
    while covered.sum() < budget and attempts < 10 * length + 10:
        attempts += 1
        span = min(int(rng.poisson(poisson_lambda)), budget - int(covered.sum()))
        start = int(rng.integers(0, length))
        if span == 0:
            if not covered[start] and start not in inserts:
                inserts.add(start)
            continue
        end = min(start + span, length)
        # Not overlapping nor touching another span, so each stays one mask.
        lo, hi = max(start - 1, 0), min(end + 1, length)
        if covered[lo:hi].any() or any(lo <= i < hi for i in inserts):
            continue
        covered[start:end] = True
        span_starts[start] = end
    inputs, position = [], 0
    while position < length:
        if position in inserts:
            inputs.append(mask_id)
        if position in span_starts:
            inputs.append(mask_id)
            position = span_starts[position]
            continue
        inputs.append(int(token_ids[position]))
        position += 1
    return np.array(inputs, np.int32), token_ids.copy()


def sentence_permutation(sentences, rng=None):
    """BART's sentence permutation: `(shuffled, original)` lists of sentences.

    Example:
    >>> sentence_permutation(["a.", "b.", "c."], np.random.default_rng(1))[1]
    ['a.', 'b.', 'c.']
    """
    rng = rng or np.random.default_rng()
    order = rng.permutation(len(sentences))
    return [sentences[i] for i in order], list(sentences)
