"""Dynamic masking for masked language modeling (BERT; RoBERTa's dynamic masking).

BERT (Devlin et al. 2019; Jurafsky & Martin, *Speech and Language Processing*, 3rd ed., §11.2)
selects about 15% of the input tokens for prediction; of those, 80% are replaced by `[MASK]`, 10%
by a token sampled from the vocabulary according to unigram probability, and 10% are left
unchanged. RoBERTa (Liu et al. 2019) draws a new mask every time a sequence is seen instead of once
during preprocessing. `MaskedLMMasker` does the latter: it is meant to run as a `tf.data` map
function after packing, so every epoch sees new masks.

Why `tf.random.Generator`: the layer owns one generator (seeded from `seed`, or from
non-deterministic state) and captures it in every graph it is traced into. Its state is a variable,
so each call, inside `tf.function` or a `tf.data` map alike, advances it and draws new masks; a
second epoch of a dataset gets new masks too. Stateful ops with an op seed (`tf.random.uniform(...,
seed=s)`) would not do: tf.data instantiates the map function afresh for every iterator, which
resets their kernels, so every epoch would repeat the first epoch's masks exactly.

The module also holds what `SpanMasker` shares: argument checks, the word table built from
`word_ids`, sampling replacement tokens and gathering selected positions into fixed-size outputs.
"""

import numbers

import keras
import numpy as np
import tensorflow as tf

from kbert.checks import check_int

OUTPUT_KEYS = ("token_ids", "mask_positions", "mask_ids", "mask_weights")


# ---------------------------------------------------------------------------------- argument checks


def _check_rate(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be a number in [0, 1]; received {value!r}")
    return float(value)


def _check_rates(selection_rate, mask_token_rate, random_token_rate):
    rates = (
        _check_rate("selection_rate", selection_rate),
        _check_rate("mask_token_rate", mask_token_rate),
        _check_rate("random_token_rate", random_token_rate),
    )
    # A small tolerance so that 0.9 + 0.1 (not exactly 1.0 in binary) is accepted.
    if rates[1] + rates[2] > 1.0 + 1e-9:
        raise ValueError(
            "mask_token_rate + random_token_rate must be at most 1 (the rest is left unchanged); "
            f"received {mask_token_rate!r} + {random_token_rate!r} = {rates[1] + rates[2]!r}"
        )
    return rates


def _check_special_token_ids(special_token_ids, vocabulary_size):
    if isinstance(special_token_ids, (str, bytes, numbers.Number)) or not hasattr(
        special_token_ids, "__iter__"
    ):
        raise ValueError(
            "special_token_ids must be a list of ints (e.g. the ids of [PAD], [CLS], [SEP]); "
            f"received {special_token_ids!r}"
        )
    return [
        check_int("every special token id", value, 0, vocabulary_size - 1)
        for value in special_token_ids
    ]


def _check_seed(seed):
    return None if seed is None else check_int("seed", seed, expected="an int or None")


def _replacement_cdf(vocabulary_size, excluded_ids, unigram_probabilities):
    """The cumulative distribution of replacement tokens, float64 (vocabulary_size,).

    Excluded (special) ids get probability 0. Sampling is `searchsorted(cdf, u, side="right")`
    with u uniform in [0, 1): an id of probability 0 has an empty interval and is never drawn.
    """
    if unigram_probabilities is None:
        probabilities = np.ones(vocabulary_size, np.float64)
    else:
        probabilities = np.asarray(unigram_probabilities, dtype=np.float64)
        if probabilities.shape != (vocabulary_size,):
            raise ValueError(
                f"unigram_probabilities must hold one probability per id (length vocabulary_size="
                f"{vocabulary_size}); received shape {probabilities.shape}"
            )
        if not np.all(np.isfinite(probabilities)) or np.any(probabilities < 0):
            raise ValueError(
                "unigram_probabilities must be finite and non-negative; received minimum "
                f"{probabilities.min()!r}"
            )
        probabilities = probabilities.copy()
    probabilities[list(excluded_ids)] = 0.0
    total = probabilities.sum()
    if total <= 0:
        raise ValueError(
            "no id may be drawn as a random replacement: every id is special or has unigram "
            f"probability 0 (vocabulary_size={vocabulary_size}, special ids "
            f"{sorted(excluded_ids)})"
        )
    cdf = np.cumsum(probabilities / total)
    # Exactly 1.0 from the last possible id on, so that every u < 1 finds an id below it.
    cdf[np.flatnonzero(probabilities)[-1] :] = 1.0
    return cdf


def unigram_probabilities_from_counts(source, vocabulary_size, special_token_ids=()):
    """Estimates unigram probabilities of token ids, for `MaskedLMMasker`'s random replacements.

    Args:
        source: either a `tf.data.Dataset` whose elements are integer token-id tensors of any
            shape (dense or ragged, batched or not) or dicts holding them under "token_ids"; or
            a sequence of per-id counts of length `vocabulary_size`.
        vocabulary_size: int. Number of ids.
        special_token_ids: list of int, default (). Ids whose probability is set to 0 (padding
            and special tokens inflate the counts of a packed dataset).

    Returns:
        A float64 numpy array of length `vocabulary_size` that sums to 1: each id's relative
        frequency among the non-special tokens.

    Example:
    >>> dataset = tf.data.Dataset.from_tensor_slices([[2, 5, 5, 6, 3]])
    >>> unigram_probabilities_from_counts(dataset, 7, special_token_ids=[2, 3]).round(3).tolist()
    [0.0, 0.0, 0.0, 0.0, 0.0, 0.667, 0.333]
    """
    vocabulary_size = check_int("vocabulary_size", vocabulary_size, 1)
    special_token_ids = _check_special_token_ids(special_token_ids, vocabulary_size)
    if isinstance(source, tf.data.Dataset):
        counts = _count_dataset(source, vocabulary_size)
    else:
        counts = np.asarray(source, dtype=np.float64)
        if counts.shape != (vocabulary_size,):
            raise ValueError(
                f"token id counts must have length vocabulary_size={vocabulary_size}; received "
                f"shape {counts.shape}"
            )
        if not np.all(np.isfinite(counts)) or np.any(counts < 0):
            raise ValueError("token id counts must be finite and non-negative")
    counts = counts.astype(np.float64)
    counts[special_token_ids] = 0.0
    total = counts.sum()
    if total <= 0:
        raise ValueError(
            "no non-special token was counted: cannot estimate unigram probabilities "
            f"(special ids {special_token_ids})"
        )
    return counts / total


def _count_dataset(dataset, vocabulary_size):
    spec = dataset.element_spec
    if isinstance(spec, dict):
        if "token_ids" not in spec:
            raise ValueError(
                "a dataset of dicts must hold the ids under 'token_ids'; received keys "
                f"{sorted(spec)}"
            )
        spec = spec["token_ids"]
    if not isinstance(spec, (tf.TensorSpec, tf.RaggedTensorSpec)) or not spec.dtype.is_integer:
        raise ValueError(
            f"the dataset must hold integer token-id tensors; received element_spec {spec}"
        )

    def add(state, element):
        counts, outside = state
        ids = element["token_ids"] if isinstance(element, dict) else element
        if isinstance(ids, tf.RaggedTensor):
            ids = ids.flat_values
        ids = tf.reshape(tf.cast(ids, tf.int64), [-1])
        inside = (ids >= 0) & (ids < vocabulary_size)
        counts += tf.math.bincount(
            tf.cast(tf.boolean_mask(ids, inside), tf.int32),
            minlength=vocabulary_size,
            maxlength=vocabulary_size,
            dtype=tf.int64,
        )
        return counts, outside + tf.reduce_sum(tf.cast(~inside, tf.int64))

    counts, outside = dataset.reduce(
        (tf.zeros([vocabulary_size], tf.int64), tf.constant(0, tf.int64)), add
    )
    if int(outside) > 0:
        raise ValueError(
            f"the dataset holds {int(outside)} token ids outside [0, vocabulary_size="
            f"{vocabulary_size})"
        )
    return counts.numpy()


# ---------------------------------------------------------------------------------- graph helpers


def _as_id_matrix(value, name):
    """Returns (int32 (batch, length) tensor, was_unbatched)."""
    if isinstance(value, tf.RaggedTensor):
        raise ValueError(
            f"{name} must be a dense (batch, sequence_length) tensor (pack it first, e.g. with "
            f"InputPacker); received a RaggedTensor of shape {value.shape}"
        )
    value = tf.convert_to_tensor(value)
    if not (value.dtype.is_integer or value.dtype == tf.bool):
        raise ValueError(f"{name} must hold integers; received dtype {value.dtype.name}")
    rank = value.shape.rank
    if rank not in (1, 2):
        raise ValueError(
            f"{name} must be 2-D (batch, sequence_length) or 1-D (one sequence); received shape "
            f"{value.shape}"
        )
    value = tf.cast(value, tf.int32)
    return (value[tf.newaxis], True) if rank == 1 else (value, False)


def _check_same_shape(reference, value, name):
    if not value.shape.is_compatible_with(reference.shape):
        raise ValueError(
            f"{name} must have the shape of token_ids {reference.shape}; received {value.shape}"
        )
    tf.debugging.assert_equal(
        tf.shape(value), tf.shape(reference), message=f"{name} must have the shape of token_ids"
    )


def prepare_inputs(token_ids, padding_mask, word_ids, special_token_ids):
    """Checks and converts call inputs.

    Returns:
        A dict with `token_ids`, `word_ids` (or None) as int32 (batch, length) tensors,
        `eligible` (bool, (batch, length): real tokens that are not special) and `unbatched`.
    """
    if padding_mask is None:
        raise ValueError(
            "padding_mask is required (1 for real tokens, 0 for padding); received None"
        )
    token_ids, unbatched = _as_id_matrix(token_ids, "token_ids")
    padding_mask, mask_unbatched = _as_id_matrix(padding_mask, "padding_mask")
    if mask_unbatched != unbatched:
        raise ValueError(
            f"padding_mask must have the shape of token_ids; received ranks "
            f"{padding_mask.shape.rank - mask_unbatched} and {token_ids.shape.rank - unbatched}"
        )
    _check_same_shape(token_ids, padding_mask, "padding_mask")
    if word_ids is not None:
        word_ids, words_unbatched = _as_id_matrix(word_ids, "word_ids")
        if words_unbatched != unbatched:
            raise ValueError("word_ids must have the shape of token_ids (one batched, one not)")
        _check_same_shape(token_ids, word_ids, "word_ids")
    special = tf.constant(sorted(set(special_token_ids)), tf.int32)  # (num_special,)
    is_special = tf.reduce_any(token_ids[..., tf.newaxis] == special, axis=-1)
    eligible = (padding_mask != 0) & ~is_special  # (batch, length)
    return {
        "token_ids": token_ids,
        "word_ids": word_ids,
        "eligible": eligible,
        "unbatched": unbatched,
    }


def word_table(eligible, word_ids):
    """Groups eligible tokens into words, and describes the words as (batch, length) arrays.

    A word is a maximal run of adjacent eligible tokens with the same word id (a special token or
    padding always ends a word, so the word 0 of segment A and the word 0 of segment B stay
    apart). Without `word_ids` every eligible token is a word. Word arrays are indexed by the
    word's number within its row and padded to `length` (a row has at most `length` words).

    Args:
        eligible: bool (batch, length).
        word_ids: int32 (batch, length) or None.

    Returns:
        A dict: `word_number` int32 (batch, length), the word of each token (-1 where not
        eligible); `first` and `size` int32 (batch, length), each word's first token position and
        token count (`length` and 0 for words that do not exist); `exists` bool (batch, length).
    """
    batch, length = tf.shape(eligible)[0], tf.shape(eligible)[1]
    if word_ids is None:
        is_start = eligible
    else:
        previous_eligible = tf.concat([tf.zeros_like(eligible[:, :1]), eligible[:, :-1]], axis=1)
        previous_word = tf.concat([tf.fill([batch, 1], -1), word_ids[:, :-1]], axis=1)
        is_start = eligible & (
            ~previous_eligible | (word_ids != previous_word) | (word_ids < 0)
        )  # (batch, length)
    word_number = tf.cumsum(tf.cast(is_start, tf.int32), axis=1) - 1
    word_number = tf.where(eligible, word_number, -1)  # (batch, length)
    position = tf.range(length)[tf.newaxis, :]  # (1, length)
    # Starts sorted by position are the words in order; `length` marks "no such word".
    first = tf.sort(tf.where(is_start, position, length), axis=1)  # (batch, length)
    # Token counts per (row, word), with one extra segment that absorbs the ineligible tokens.
    segment = tf.where(eligible, tf.range(batch)[:, tf.newaxis] * length + word_number, -1)
    segment = tf.where(segment < 0, batch * length, segment)
    segment = tf.reshape(segment, [-1])  # (batch * length,)
    size = tf.math.unsorted_segment_sum(tf.ones_like(segment), segment, batch * length + 1)[:-1]
    size = tf.reshape(size, [batch, length])  # (batch, length)
    exists = first < length
    return {"word_number": word_number, "first": first, "size": size, "exists": exists}


def per_token(word_values, word_number):
    """Gathers a (batch, length) per-word array to tokens (values at ineligible tokens are junk)."""
    return tf.gather(word_values, tf.maximum(word_number, 0), batch_dims=1)


def sample_ids(generator, cdf, shape):
    """Draws int32 ids of the given shape from the cumulative distribution `cdf` (float64)."""
    uniform = generator.uniform([tf.reduce_prod(shape)], dtype=tf.float64)  # (n,)
    ids = tf.searchsorted(
        cdf[tf.newaxis, :], uniform[tf.newaxis, :], side="right", out_type=tf.int32
    )
    return tf.reshape(ids, shape)


def corrupt(
    token_ids, selected, treatment, random_ids, mask_token_id, mask_token_rate, random_token_rate
):
    """Replaces selected tokens: `[MASK]` where treatment < mask_token_rate, a random id where
    treatment < mask_token_rate + random_token_rate, else unchanged (treatment uniform in [0, 1))."""
    masked = selected & (treatment < mask_token_rate)
    randomized = selected & ~masked & (treatment < mask_token_rate + random_token_rate)
    corrupted = tf.where(masked, tf.constant(mask_token_id, tf.int32), token_ids)
    return tf.where(randomized, random_ids, corrupted)  # (batch, length)


def gather_selected(selected, max_selections, per_position):
    """Packs selected positions into fixed-size, sorted (batch, max_selections) outputs.

    Args:
        selected: bool (batch, length), at most `max_selections` True per row.
        max_selections: int.
        per_position: dict of int32 (batch, length) tensors to gather at the positions.

    Returns:
        A dict: `mask_positions` int32, `mask_weights` float32 (1.0 for used slots), and every key
        of `per_position` gathered; unused slots hold 0.
    """
    batch, length = tf.shape(selected)[0], tf.shape(selected)[1]
    position = tf.range(length)[tf.newaxis, :]  # (1, length)
    # top_k of -position finds the smallest positions, in order; the extra columns make k valid
    # when the row is shorter than max_selections.
    unused = -length - 1
    score = tf.where(selected, -position, unused)  # (batch, length)
    score = tf.concat([score, tf.fill([batch, max_selections], unused)], axis=1)
    values, _ = tf.math.top_k(score, k=max_selections, sorted=True)  # (batch, max_selections)
    used = values > unused
    positions = tf.where(used, -values, 0)  # (batch, max_selections)
    outputs = {
        "mask_positions": positions,
        "mask_weights": tf.cast(used, tf.float32),
    }
    for key, value in per_position.items():
        outputs[key] = tf.where(used, tf.gather(value, positions, batch_dims=1), 0)
    return outputs


def _make_generator(seed):
    if seed is None:
        return tf.random.Generator.from_non_deterministic_state()
    return tf.random.Generator.from_seed(seed)


# ---------------------------------------------------------------------------------- the layer


class MaskerBase(keras.layers.Layer):
    """What both maskers share: validated ids and rates, the replacement sampler, the RNG."""

    # Meant for tf.data: stateful random ops gain nothing from XLA, so jit_compile="auto" skips it.
    supports_jit = False

    def __init__(
        self,
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
    ):
        kwargs.setdefault("trainable", False)
        kwargs.setdefault("dtype", "int32")
        super().__init__(**kwargs)
        # Integer ids pass through untouched (Keras would cast positional inputs to floats).
        self._convert_input_args = False
        self._allow_non_tensor_positional_args = True
        self.vocabulary_size = check_int("vocabulary_size", vocabulary_size, 1)
        self.mask_token_id = check_int("mask_token_id", mask_token_id, 0, self.vocabulary_size - 1)
        self.special_token_ids = _check_special_token_ids(special_token_ids, self.vocabulary_size)
        self.max_selections = check_int("max_selections", max_selections, 1)
        self.selection_rate, self.mask_token_rate, self.random_token_rate = _check_rates(
            selection_rate, mask_token_rate, random_token_rate
        )
        self.seed = _check_seed(seed)
        # [MASK] is never selected (it carries no target) nor drawn (it would be a mask).
        self._excluded_ids = sorted(set(self.special_token_ids) | {self.mask_token_id})
        self._replacement_cdf = _replacement_cdf(
            self.vocabulary_size, self._excluded_ids, unigram_probabilities
        )
        self.unigram_probabilities = (
            None
            if unigram_probabilities is None
            else np.asarray(unigram_probabilities, np.float64).tolist()
        )
        self._generator = _make_generator(self.seed)
        self.built = True

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "vocabulary_size": self.vocabulary_size,
                "mask_token_id": self.mask_token_id,
                "special_token_ids": list(self.special_token_ids),
                "max_selections": self.max_selections,
                "selection_rate": self.selection_rate,
                "mask_token_rate": self.mask_token_rate,
                "random_token_rate": self.random_token_rate,
                "unigram_probabilities": self.unigram_probabilities,
                "seed": self.seed,
            }
        )
        return config


@keras.saving.register_keras_serializable(package="kbert")
class MaskedLMMasker(MaskerBase):
    """Selects tokens for masked language modeling and corrupts them, with new masks every call.

    Each eligible token (not padding, not one of `special_token_ids` or `mask_token_id`) is
    selected with probability `selection_rate`, independently (with `whole_word_masking`, each
    word is, and a selected word brings all its subwords). A selected token becomes `[MASK]` with
    probability `mask_token_rate`, a random token with probability `random_token_rate` (drawn from
    `unigram_probabilities`, never a special id nor `[MASK]`), and stays unchanged otherwise.

    Outputs have a fixed size `max_selections` so that batches stack and XLA sees static shapes.
    When more tokens are selected, a random subset is kept: the selected words are put in random
    order and kept while their tokens fit in `max_selections`; the first word that does not fit
    and every later one are dropped (so a word longer than `max_selections` is never selected).
    BERT selected exactly 15% (max 20 of 128 tokens); here the count is binomial, so leave room:
    with 126 eligible tokens, `max_selections` 20 lowers the expected rate to 14.1%, 28 to
    14.98% (computed, not-measured).

    See the module docstring for the random number generator and why it suits `tf.data`.

    Create the layer once, outside the function given to `Dataset.map` or `tf.function`: it owns
    the generator's state variable, which such functions may not create. tf.data treats that
    variable as external state: checkpointing an iterator does not save it.

    Args:
        vocabulary_size: int. Number of token ids.
        mask_token_id: int. Id of `[MASK]`; never selected itself and never a random replacement.
        special_token_ids: list of int. Ids never selected nor drawn as replacements (`[PAD]`,
            `[CLS]`, `[SEP]`, and `[UNK]` if it should not be predicted). Padding positions
            (`padding_mask` 0) are never selected whatever their id.
        max_selections: int. Most selected tokens per sequence: the size of the mask outputs.
        selection_rate: float, default 0.15. Probability that an eligible token (or word) is
            selected.
        mask_token_rate: float, default 0.8. Share of selected tokens replaced by `[MASK]`.
        random_token_rate: float, default 0.1. Share replaced by a random token; the remaining
            `1 - mask_token_rate - random_token_rate` stay unchanged.
        unigram_probabilities: list or array of `vocabulary_size` non-negative floats, or None
            (default). Relative frequencies of replacement tokens (see
            `unigram_probabilities_from_counts`); normalized after the special ids are set to 0.
            None draws uniformly among the non-special ids.
        whole_word_masking: bool, default False. Select whole words, using `word_ids` at call.
        seed: int or None, default None. Seeds the generator; None seeds it non-deterministically.
        **kwargs: passed to `keras.layers.Layer`.

    Example:
    >>> masker = MaskedLMMasker(10, mask_token_id=4, special_token_ids=[0, 2, 3],
    ...                         max_selections=3, selection_rate=1.0, mask_token_rate=1.0,
    ...                         random_token_rate=0.0)
    >>> outputs = masker(tf.constant([[2, 5, 6, 3, 0]]), padding_mask=tf.constant([[1, 1, 1, 1, 0]]))
    >>> outputs["token_ids"].numpy().tolist(), outputs["mask_positions"].numpy().tolist()
    ([[2, 4, 4, 3, 0]], [[1, 2, 0]])
    >>> outputs["mask_ids"].numpy().tolist(), outputs["mask_weights"].numpy().tolist()
    ([[5, 6, 0]], [[1.0, 1.0, 0.0]])
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
        unigram_probabilities=None,
        whole_word_masking=False,
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
        if not isinstance(whole_word_masking, bool):
            raise ValueError(f"whole_word_masking must be a bool; received {whole_word_masking!r}")
        self.whole_word_masking = whole_word_masking

    @tf.autograph.experimental.do_not_convert  # no tensor-dependent Python control flow
    def call(self, token_ids, padding_mask=None, word_ids=None):
        """Draws a new mask and corrupts the selected tokens.

        Args:
            token_ids: int tensor (batch, sequence_length), or (sequence_length,) for one
                sequence: packed ids, e.g. `InputPacker`'s `token_ids`.
            padding_mask: int or bool tensor of the same shape, 1 for real tokens, 0 for padding.
            word_ids: int tensor of the same shape or None (default): the word of each token,
                -1 at special and padding positions (`InputPacker`'s packed `word_ids`).
                Required with `whole_word_masking`; otherwise ignored.

        Returns:
            A dict of tensors, each (batch, ...) or without the batch axis for one sequence:
            `token_ids` int32 (batch, sequence_length), the corrupted input;
            `mask_positions` int32 (batch, max_selections), the selected positions in increasing
            order; `mask_ids` int32 (batch, max_selections), the original ids there (the
            targets); `mask_weights` float32 (batch, max_selections), 1.0 for used slots. Unused
            slots hold 0.
        """
        if self.whole_word_masking and word_ids is None:
            raise ValueError(
                "whole_word_masking=True needs word_ids (InputPacker's packed word_ids, -1 at "
                "special and padding positions); received word_ids=None"
            )
        inputs = prepare_inputs(token_ids, padding_mask, word_ids, self._excluded_ids)
        token_ids, eligible = inputs["token_ids"], inputs["eligible"]
        shape = tf.shape(token_ids)
        words = word_table(eligible, inputs["word_ids"] if self.whole_word_masking else None)
        generator = self._generator

        # Words are drawn independently; arrays below are per word, (batch, length).
        draw = generator.uniform(shape)
        candidate = words["exists"] & (draw < self.selection_rate)
        candidate &= words["size"] <= self.max_selections
        # Too many: keep the longest prefix of a random order of the candidates that fits.
        priority = tf.where(candidate, generator.uniform(shape), 2.0)
        order = tf.argsort(priority, axis=1)  # candidates first, in random order
        sizes_in_order = tf.gather(tf.where(candidate, words["size"], 0), order, batch_dims=1)
        fits_in_order = tf.cumsum(sizes_in_order, axis=1) <= self.max_selections
        fits = tf.gather(fits_in_order, tf.argsort(order, axis=1), batch_dims=1)  # back in place
        selected = eligible & per_token(candidate & fits, words["word_number"])  # per token

        corrupted = corrupt(
            token_ids,
            selected,
            generator.uniform(shape),
            sample_ids(generator, tf.constant(self._replacement_cdf), shape),
            self.mask_token_id,
            self.mask_token_rate,
            self.random_token_rate,
        )
        outputs = gather_selected(selected, self.max_selections, {"mask_ids": token_ids})
        outputs["token_ids"] = corrupted
        outputs = {key: outputs[key] for key in OUTPUT_KEYS}
        if inputs["unbatched"]:
            outputs = {key: value[0] for key, value in outputs.items()}
        return outputs

    def compute_output_spec(self, token_ids, padding_mask=None, word_ids=None):
        shape = tuple(token_ids.shape)
        leading = shape[:-1]
        selections = leading + (self.max_selections,)
        return {
            "token_ids": keras.KerasTensor(shape, dtype="int32"),
            "mask_positions": keras.KerasTensor(selections, dtype="int32"),
            "mask_ids": keras.KerasTensor(selections, dtype="int32"),
            "mask_weights": keras.KerasTensor(selections, dtype="float32"),
        }

    def get_config(self):
        return {**super().get_config(), "whole_word_masking": self.whole_word_masking}
