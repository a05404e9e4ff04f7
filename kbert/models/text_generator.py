"""Autoregressive generation from a causal encoder, with a key/value cache (tutorial §5.C)."""

import numpy as np
import tensorflow as tf
from keras import ops

STRATEGIES = ("greedy", "top_k", "top_p")


def filter_logits(logits, strategy="greedy", temperature=1.0, top_k=50, top_p=0.9):
    """Turns next-token logits into the logits of the distribution to sample from.

    Args:
        logits: float tensor `(batch, vocabulary)`.
        strategy: str, default "greedy". "greedy" keeps only the best token; "top_k" the `top_k`
            best (Fan et al. 2018); "top_p" the smallest set whose probability reaches `top_p`
            (nucleus sampling, Holtzman et al. 2020).
        temperature: float, default 1.0. Logits are divided by it first; below 1 sharpens.
        top_k: int, default 50.
        top_p: float, default 0.9.

    Returns:
        Float32 logits `(batch, vocabulary)`, -inf outside the kept set.

    Example:
    >>> filter_logits(np.array([[1.0, 3.0, 2.0]]), "top_k", top_k=2).numpy().tolist()
    [[-inf, 3.0, 2.0]]
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {STRATEGIES}; received {strategy!r}")
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0; received {temperature}")
    logits = tf.cast(logits, tf.float32) / temperature
    minus_inf = tf.fill(tf.shape(logits), -np.inf)
    if strategy == "greedy":
        top_k, strategy = 1, "top_k"
    if strategy == "top_k":
        if top_k < 1:
            raise ValueError(f"top_k must be >= 1; received {top_k}")
        k = tf.minimum(top_k, tf.shape(logits)[-1])
        threshold = tf.math.top_k(logits, k=k).values[:, -1:]  # (batch, 1)
        return tf.where(logits < threshold, minus_inf, logits)
    if not 0.0 < top_p <= 1.0:
        raise ValueError(f"top_p must be in (0, 1]; received {top_p}")
    sorted_logits = tf.sort(logits, direction="DESCENDING")
    cumulative = tf.cumsum(tf.nn.softmax(sorted_logits), axis=-1)
    # Keep a token while the probability before it is below top_p, so the best is always kept.
    keep = (cumulative - tf.nn.softmax(sorted_logits)) < top_p
    threshold = tf.reduce_min(tf.where(keep, sorted_logits, np.inf), axis=-1, keepdims=True)
    return tf.where(logits < threshold, minus_inf, logits)


class TextGenerator:
    """Generates continuations from a causal kbert `Encoder` and an output projection.

    The prompt runs once through the encoder, filling a key/value cache; each new token then
    runs alone against the cache (`Encoder.decode`), so it costs one position, not the prefix.
    The decoding step is a `tf.function`, traced once per batch shape.

    Args:
        encoder: a causal `Encoder` (config.causal=True).
        logits_fn: callable `(batch, hidden_dim) → (batch, vocabulary)`, default None: the tied
            projection `hidden @ token_embedding^T` (add a model's own head for bias or
            factorized embeddings).
        end_token_id: int, default None. Sequences stop at this token (it is kept; later
            positions repeat it).

    Example:
    >>> generator = TextGenerator(Encoder.from_preset("tiny", causal=True))  # doctest: +SKIP
    >>> generator.generate(np.array([[2, 7, 9]]), max_new_tokens=5).shape  # doctest: +SKIP
    (1, 8)
    """

    def __init__(self, encoder, logits_fn=None, end_token_id=None):
        if not encoder.config.causal:
            raise ValueError("TextGenerator needs a causal encoder (config.causal=True)")
        self.encoder = encoder
        self.logits_fn = logits_fn or self._tied_logits
        self.end_token_id = end_token_id
        self._step = tf.function(self._decode_step)

    def _tied_logits(self, hidden):
        embeddings = self.encoder.embeddings
        if embeddings.projection is not None:
            raise ValueError(
                "a factorized embedding needs a logits_fn that maps hidden states "
                "back to the embedding width"
            )
        table = embeddings.token_embedding.embeddings  # (vocabulary, hidden)
        return ops.matmul(hidden, ops.transpose(ops.cast(table, hidden.dtype)))

    def _decode_step(self, token_ids, cache, cache_index, segment_ids=None):
        hidden, cache = self.encoder.decode(token_ids, cache, cache_index, segment_ids)
        return self.logits_fn(hidden[:, -1, :]), cache

    def generate(
        self,
        prompt_ids,
        max_new_tokens,
        strategy="greedy",
        temperature=1.0,
        top_k=50,
        top_p=0.9,
        seed=None,
        prompt_segment_ids=None,
        segment_id=0,
    ):
        """Returns `(batch, prompt_length + max_new_tokens)` token ids: prompts and continuations.

        Args:
            prompt_ids: int array `(batch, prompt_length)`; every prompt has the same length
                (generate prompts of different lengths in separate calls).
            max_new_tokens: int. Tokens to add.
            strategy, temperature, top_k, top_p: see `filter_logits`.
            seed: int, default None. Makes sampling reproducible.
            prompt_segment_ids: int array like `prompt_ids`, default None. Segment (speaker)
                ids of the prompt, for an encoder with segment embeddings (a dialog model).
            segment_id: int, default 0. The segment of every generated token.
        """
        prompt_ids = np.asarray(prompt_ids, dtype="int32")
        if prompt_ids.ndim != 2 or prompt_ids.shape[1] == 0:
            raise ValueError(
                "prompt_ids must be a non-empty (batch, prompt_length) array; "
                f"received shape {prompt_ids.shape}"
            )
        if max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be >= 1; received {max_new_tokens}")
        batch, prompt_length = prompt_ids.shape
        total = prompt_length + max_new_tokens
        limit = self.encoder.config.max_sequence_length
        if total > limit:
            raise ValueError(
                f"prompt length {prompt_length} + max_new_tokens {max_new_tokens} = "
                f"{total} is above the model's max_sequence_length={limit}"
            )
        filter_logits(np.zeros((1, 2)), strategy, temperature, top_k, top_p)  # validate early
        rng = (
            tf.random.Generator.from_seed(seed)
            if seed is not None
            else tf.random.Generator.from_non_deterministic_state()
        )

        segments = None
        if self.encoder.config.num_segments:
            segments = (
                np.zeros_like(prompt_ids) if prompt_segment_ids is None else prompt_segment_ids
            )
            segments = np.asarray(segments, dtype="int32")
            if segments.shape != prompt_ids.shape:
                raise ValueError(
                    f"prompt_segment_ids must have the prompt's shape {prompt_ids.shape}; "
                    f"received {segments.shape}"
                )
            segments = tf.constant(segments)
        elif prompt_segment_ids is not None:
            raise ValueError("prompt_segment_ids needs an encoder with segment embeddings")
        new_segment = None if segments is None else tf.fill((batch, 1), int(segment_id))

        cache = self.encoder.init_cache(batch, total)
        logits, cache = self._step(tf.constant(prompt_ids), cache, tf.constant(0), segments)
        tokens = [prompt_ids]
        finished = np.zeros(batch, bool)
        for position in range(prompt_length, total):
            filtered = filter_logits(logits, strategy, temperature, top_k, top_p)
            if strategy == "greedy":
                next_ids = tf.argmax(filtered, axis=-1, output_type=tf.int32)
            else:
                next_ids = tf.random.stateless_categorical(
                    filtered, 1, seed=rng.make_seeds(1)[:, 0], dtype=tf.int32
                )[:, 0]
            next_ids = next_ids.numpy()
            if self.end_token_id is not None:
                next_ids = np.where(finished, self.end_token_id, next_ids)
                finished |= next_ids == self.end_token_id
            tokens.append(next_ids[:, None])
            if position + 1 == total or finished.all():
                break
            logits, cache = self._step(
                tf.constant(next_ids[:, None]), cache, tf.constant(position), new_segment
            )
        output = np.concatenate(tokens, axis=1)
        if output.shape[1] < total:  # every sequence ended early
            padding = np.full((batch, total - output.shape[1]), self.end_token_id, "int32")
            output = np.concatenate([output, padding], axis=1)
        return output
