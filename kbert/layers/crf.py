"""A linear-chain conditional random field over per-token tag scores, and its loss."""

import keras
from keras import ops

from kbert.checks import check_int


@keras.saving.register_keras_serializable(package="kbert")
class CRF(keras.layers.Layer):
    """A linear-chain CRF: learned tag-transition scores on top of per-token emission scores.

    The score of a tag path `y` over the scored positions `p_1 < ... < p_n` of a sequence is
    `start[y_1] + sum_k emissions[p_k, y_k] + sum_k transitions[y_{k-1}, y_k] + end[y_n]`,
    and `log p(y | emissions) = score(y) - log Z`, with `log Z` the log-sum-exp over all
    `num_tags ** n` paths (Lafferty et al. 2001; Lample et al. 2016 put one on a BiLSTM for NER).

    The mask need not be a contiguous prefix: positions where it is 0 are skipped, and the
    transition score joins consecutive *scored* positions even when unscored ones sit between
    them. So one CRF runs over the first subword of each word inside a subword sequence
    (mask `[0, 1, 0, 1, 1, 0, 0]` with `[CLS]` at 0). A row with no scored position has one,
    empty, path: `log_partition` and `log_likelihood` are 0 and `decode` returns all zeros with
    score 0.

    `call` is the identity (emissions cast to float32): it lets the layer sit at the end of a
    functional model so that its weights are tracked, trained and saved; `CRFLoss` and
    `decode` do the work. All CRF arithmetic runs in float32 whatever the emissions' dtype,
    and the layer's dtype policy defaults to `"float32"` (like a softmax head under mixed
    precision), since a long sum of scores is where bfloat16 loses most.

    Args:
        num_tags: int >= 2. Number of tags (the emissions' last dimension).
        **kwargs: passed to `keras.layers.Layer` (`dtype` defaults to `"float32"`).

    Weights:
        transitions: `(num_tags, num_tags)`; `transitions[i, j]` scores tag `i` followed by `j`.
        start_transitions: `(num_tags,)`, added at the first scored position.
        end_transitions: `(num_tags,)`, added at the last scored position.
        All start at zeros.

    Call args:
        emissions: float tensor `(batch, seq, num_tags)`.

    Returns:
        The emissions as float32, `(batch, seq, num_tags)`.

    Example:
    >>> crf = CRF(2)
    >>> emissions = ops.array([[[2.0, 0.0], [0.0, 1.0], [5.0, 5.0]]])  # (batch 1, seq 3, 2 tags)
    >>> mask = ops.array([[1, 1, 0]])  # the last position is not scored
    >>> tags, scores = crf.decode(emissions, mask)
    >>> ops.convert_to_numpy(tags).tolist(), ops.convert_to_numpy(scores).tolist()
    ([[0, 1, 0]], [3.0])
    >>> # zero transitions: p = softmax(2, 0)[0] * softmax(0, 1)[1]
    >>> ll = crf.log_likelihood(emissions, ops.array([[0, 1, 0]]), mask)
    >>> round(float(ops.convert_to_numpy(ll)[0]), 4)
    -0.4402
    """

    def __init__(self, num_tags, **kwargs):
        kwargs.setdefault("dtype", "float32")
        super().__init__(**kwargs)
        self.num_tags = check_int("num_tags", num_tags, minimum=2)

    def build(self, input_shape=None):
        if input_shape is not None:
            self._check_shape(input_shape)
        self.transitions = self.add_weight(
            shape=(self.num_tags, self.num_tags),
            initializer="zeros",
            dtype="float32",
            name="transitions",
        )
        self.start_transitions = self.add_weight(
            shape=(self.num_tags,), initializer="zeros", dtype="float32", name="start_transitions"
        )
        self.end_transitions = self.add_weight(
            shape=(self.num_tags,), initializer="zeros", dtype="float32", name="end_transitions"
        )
        self.built = True

    def _check_shape(self, shape):
        """Raises unless `shape` is `(batch, seq, num_tags)` where the dimensions are known."""
        shape = tuple(shape)
        if len(shape) != 3:
            raise ValueError(
                f"CRF expected emissions of shape (batch, seq, num_tags={self.num_tags}); "
                f"received shape {shape} of rank {len(shape)}"
            )
        if shape[-1] is not None and shape[-1] != self.num_tags:
            raise ValueError(
                f"CRF expected emissions whose last dimension is num_tags={self.num_tags}; "
                f"received shape {shape} with last dimension {shape[-1]}"
            )

    def _prepare(self, emissions, mask, tags=None):
        """Checks and builds; returns float32 weights, the scan's steps and a start flag.

        The steps pack, per time step, the emissions, the mask and (when given) the tags into
        one float32 tensor `(seq, batch, num_tags + 1 [+ 1])`: the TensorFlow backend's
        `scan` fails on several `xs` when the sequence length is unknown (None), and tag ids
        are exact in float32. `_unpack` splits a step again.
        """
        self._check_shape(emissions.shape)
        if not self.built:
            self.build(tuple(emissions.shape))
        emissions = ops.cast(emissions, "float32")  # (batch, seq, num_tags)
        mask = ops.cast(mask, "bool")  # (batch, seq)
        weights = (
            ops.cast(self.transitions, "float32"),  # (num_tags, num_tags)
            ops.cast(self.start_transitions, "float32"),  # (num_tags,)
            ops.cast(self.end_transitions, "float32"),
        )  # (num_tags,)
        columns = [emissions, ops.cast(mask, "float32")[:, :, None]]
        if tags is not None:
            # Unscored positions may hold any id (-100, say); gather at 0 there instead.
            tags = ops.where(mask, ops.cast(tags, "int32"), 0)  # (batch, seq)
            columns.append(ops.cast(tags, "float32")[:, :, None])
        steps = ops.transpose(ops.concatenate(columns, axis=-1), (1, 0, 2))  # (seq, batch, -)
        not_started = ops.zeros_like(mask[:, 0])  # (batch,) all False
        return weights, steps, not_started

    def _unpack(self, step):
        """Splits one packed step `(batch, num_tags + 1 [+ 1])` into emission, keep and tag."""
        emission = step[:, : self.num_tags]  # (batch, num_tags)
        keep = step[:, self.num_tags] > 0.5  # (batch,)
        tag = ops.cast(step[:, -1], "int32")  # (batch,), meaningful only when tags were packed
        return emission, keep, tag

    def call(self, emissions):
        self._check_shape(emissions.shape)
        return ops.cast(emissions, "float32")

    def log_partition(self, emissions, mask):
        """Returns `log Z`, the log-sum-exp of the scores of all tag paths (forward algorithm).

        Args:
            emissions: float tensor `(batch, seq, num_tags)`, any float dtype.
            mask: bool or 0/1 int tensor `(batch, seq)`; 1 marks a scored position.

        Returns:
            float32 tensor `(batch,)`; 0 for a row with no scored position.

        Example:
        >>> crf = CRF(2)
        >>> log_z = crf.log_partition(ops.zeros((1, 3, 2)), ops.array([[1, 0, 1]]))
        >>> round(float(ops.convert_to_numpy(log_z)[0]), 4)  # log(2 ** 2): two scored positions
        1.3863
        """
        (transitions, start, end), steps, not_started = self._prepare(emissions, mask)

        def step(carry, packed):
            alpha, started = carry  # (batch, num_tags), (batch,)
            emission, keep, _ = self._unpack(packed)  # (batch, num_tags), (batch,)
            # alpha[:, i, None] + transitions[i, j], summed out over the previous tag i.
            continued = (
                ops.logsumexp(alpha[:, :, None] + transitions[None], axis=1) + emission
            )  # (batch, num_tags)
            first = start[None, :] + emission  # (batch, num_tags)
            new_alpha = ops.where(started[:, None], continued, first)
            # An unscored position carries alpha through unchanged.
            alpha = ops.where(keep[:, None], new_alpha, alpha)
            started = ops.logical_or(started, keep)
            # The TensorFlow backend's scan wants the per-step output shaped like the carry.
            return (alpha, started), (alpha, started)

        init = (ops.zeros_like(steps[0, :, : self.num_tags]), not_started)
        (alpha, started), _ = ops.scan(step, init, steps)
        log_z = ops.logsumexp(alpha + end[None, :], axis=-1)  # (batch,)
        return ops.where(started, log_z, ops.zeros_like(log_z))

    def sequence_score(self, emissions, tags, mask):
        """Returns the unnormalised score of the given tag path.

        Args:
            emissions: float tensor `(batch, seq, num_tags)`, any float dtype.
            tags: int tensor `(batch, seq)`; read only where `mask` is 1.
            mask: bool or 0/1 int tensor `(batch, seq)`; 1 marks a scored position.

        Returns:
            float32 tensor `(batch,)`; 0 for a row with no scored position.

        Example:
        >>> crf = CRF(2)
        >>> crf.build()
        >>> _ = crf.transitions.assign([[0.0, 1.0], [0.0, 0.0]])  # tag 0 then tag 1 scores 1
        >>> emissions = ops.array([[[2.0, 0.0], [9.0, 9.0], [0.0, 3.0]]])
        >>> score = crf.sequence_score(emissions, ops.array([[0, -100, 1]]), ops.array([[1, 0, 1]]))
        >>> ops.convert_to_numpy(score).tolist()  # 2 + 3 + transitions[0, 1]
        [6.0]
        """
        (transitions, start, end), steps, not_started = self._prepare(emissions, mask, tags)
        flat_transitions = ops.reshape(transitions, (-1,))  # (num_tags * num_tags,)

        def step(carry, packed):
            score, previous, started = carry  # (batch,) each
            emission, keep, tag = self._unpack(packed)  # (batch, num_tags), (batch,), (batch,)
            emitted = ops.take_along_axis(emission, tag[:, None], axis=1)[:, 0]  # (batch,)
            moved = ops.take(flat_transitions, previous * self.num_tags + tag)  # (batch,)
            entered = ops.take(start, tag)  # (batch,)
            added = emitted + ops.where(started, moved, entered)
            score = score + ops.where(keep, added, ops.zeros_like(added))
            # `previous` is the last *scored* tag: unscored positions leave it alone.
            previous = ops.where(keep, tag, previous)
            started = ops.logical_or(started, keep)
            return (score, previous, started), (score, previous, started)

        init = (
            ops.zeros_like(steps[0, :, 0]),
            ops.zeros_like(steps[0, :, 0], dtype="int32"),
            not_started,
        )
        (score, last_tag, started), _ = ops.scan(step, init, steps)
        ended = ops.take(end, last_tag)  # (batch,)
        return score + ops.where(started, ended, ops.zeros_like(ended))

    def log_likelihood(self, emissions, tags, mask):
        """Returns `log p(tags | emissions) = sequence_score - log_partition`.

        Args:
            emissions: float tensor `(batch, seq, num_tags)`, any float dtype.
            tags: int tensor `(batch, seq)`; read only where `mask` is 1.
            mask: bool or 0/1 int tensor `(batch, seq)`; 1 marks a scored position.

        Returns:
            float32 tensor `(batch,)`, at most 0; 0 for a row with no scored position.

        Example:
        >>> crf = CRF(3)
        >>> ll = crf.log_likelihood(ops.zeros((1, 2, 3)), ops.array([[2, 1]]), ops.ones((1, 2)))
        >>> round(float(ops.convert_to_numpy(ll)[0]), 4)  # log(1 / 9): nine equal paths
        -2.1972
        """
        return self.sequence_score(emissions, tags, mask) - self.log_partition(emissions, mask)

    def decode(self, emissions, mask, constraints=None):
        """Finds the highest-scoring tag path with the Viterbi algorithm.

        Args:
            emissions: float tensor `(batch, seq, num_tags)`, any float dtype.
            mask: bool or 0/1 int tensor `(batch, seq)`; 1 marks a scored position.
            constraints: dict, default None. Penalties added to the learned scores while
                decoding only, e.g. `bio_constraints(tag_names)`: `transitions`
                `(num_tags, num_tags)` and `start` `(num_tags,)`, 0 where allowed and a large
                negative number where forbidden, so the path obeys the tagging scheme
                (AllenNLP's constrained CRF).

        Returns:
            A tuple `(tags, best_scores)`: int32 `(batch, seq)`, the best path at scored
            positions and 0 elsewhere, and float32 `(batch,)`, its score (0 for a row with no
            scored position).

        Example:
        >>> crf = CRF(2)
        >>> crf.build()
        >>> _ = crf.transitions.assign([[-10.0, 0.0], [0.0, -10.0]])  # tags must alternate
        >>> emissions = ops.array([[[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]]])
        >>> tags, score = crf.decode(emissions, ops.ones((1, 3)))
        >>> ops.convert_to_numpy(tags).tolist(), ops.convert_to_numpy(score).tolist()
        ([[0, 1, 0]], [2.0])
        """
        (transitions, start, end), steps, not_started = self._prepare(emissions, mask)
        if constraints is not None:
            transitions = transitions + ops.cast(constraints["transitions"], "float32")
            start = start + ops.cast(constraints["start"], "float32")
        identity = ops.arange(self.num_tags, dtype="int32")[None, :]  # (1, num_tags)

        def step(carry, packed):
            best, started, _ = carry  # (batch, num_tags), (batch,), (batch, num_tags)
            emission, keep, _ = self._unpack(packed)  # (batch, num_tags), (batch,)
            candidates = best[:, :, None] + transitions[None]  # (batch, from_tag, to_tag)
            continued = ops.max(candidates, axis=1) + emission  # (batch, num_tags)
            first = start[None, :] + emission  # (batch, num_tags)
            new_best = ops.where(started[:, None], continued, first)
            # Backpointer to the previous scored position's tag; the identity where nothing
            # was chosen (an unscored position, or the first scored one), so a backtrace
            # walks straight through.
            chosen = ops.cast(ops.argmax(candidates, axis=1), "int32")  # (batch, num_tags)
            pointer = ops.where(ops.logical_and(keep, started)[:, None], chosen, identity)
            best = ops.where(keep[:, None], new_best, best)
            started = ops.logical_or(started, keep)
            carry = (best, started, pointer)
            return carry, carry

        first_step = steps[0, :, : self.num_tags]  # (batch, num_tags)
        init = (ops.zeros_like(first_step), not_started, ops.zeros_like(first_step, dtype="int32"))
        (best, started, _), (_, _, pointers) = ops.scan(step, init, steps)
        final = best + end[None, :]  # (batch, num_tags)
        last_tag = ops.cast(ops.argmax(final, axis=-1), "int32")  # (batch,)
        best_score = ops.max(final, axis=-1)  # (batch,)

        def backtrack(tag, pointer):
            # tag: (batch,) at this position; pointer: (batch, num_tags) into the previous one.
            previous = ops.take_along_axis(pointer, tag[:, None], axis=1)[:, 0]  # (batch,)
            return previous, tag

        _, tags_t = ops.scan(backtrack, last_tag, pointers, reverse=True)  # (seq, batch)
        tags = ops.transpose(tags_t, (1, 0))  # (batch, seq)
        tags = ops.where(ops.cast(mask, "bool"), tags, ops.zeros_like(tags))
        best_score = ops.where(started, best_score, ops.zeros_like(best_score))
        return tags, best_score

    def get_config(self):
        return {**super().get_config(), "num_tags": self.num_tags}


def bio_constraints(tag_names, penalty=-1e4):
    """Decoding penalties that forbid the transitions IOB2 forbids.

    `I-X` may only follow `B-X` or `I-X`, and may not start a sentence; everything else is
    allowed. Pass the result to `CRF.decode(..., constraints=...)`.

    Args:
        tag_names: sequence of str, IOB2 tags in id order ("O", "B-PER", "I-PER", ...).
        penalty: float, default -1e4. Added to a forbidden transition's score.

    Returns:
        dict with float32 numpy arrays `transitions` (num_tags, num_tags) and `start`
        (num_tags,).

    Example:
    >>> bio_constraints(["O", "B-PER", "I-PER"])["transitions"].tolist()
    [[0.0, 0.0, -10000.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
    """
    import numpy as np

    tag_names = list(tag_names)
    for tag in tag_names:
        if tag != "O" and not (tag[:2] in ("B-", "I-") and len(tag) > 2):
            raise ValueError(
                f"bio_constraints needs IOB2 tags ('O', 'B-X', 'I-X'); received {tag!r}"
            )
    size = len(tag_names)
    transitions = np.zeros((size, size), np.float32)
    start = np.zeros(size, np.float32)
    for j, tag in enumerate(tag_names):
        if not tag.startswith("I-"):
            continue
        start[j] = penalty
        for i, previous in enumerate(tag_names):
            if previous[2:] != tag[2:] or previous == "O":
                transitions[i, j] = penalty
    return {"transitions": transitions, "start": start}


@keras.saving.register_keras_serializable(package="kbert")
class CRFLoss(keras.losses.Loss):
    """Negative log-likelihood of gold tags under a `CRF`, averaged over the batch.

    Holds the model's `CRF` layer, so the gradient reaches its transition weights (they are
    trained because the layer sits in the model; see `CRF`). `y_true` marks an unscored
    position ([CLS]/[SEP], padding, a word's later subwords) with a negative id such as -100:
    `mask = y_true >= 0`, and the negative ids are read as 0 (never used).

    A config cannot hold a layer instance, so `get_config` records the CRF's name and
    `from_config` raises: load a model saved after `compile(loss=CRFLoss(crf))` with
    `keras.models.load_model(path, compile=False)` and compile it again with
    `CRFLoss(model.get_layer(name))`. (Rebuilding a new CRF here would train and score with
    weights that are not the model's, silently.)

    Args:
        crf: `CRF`. The layer whose weights score the tag paths.
        name: str, default "crf_loss".
        **kwargs: passed to `keras.losses.Loss` (`reduction`, `dtype`).

    Call args:
        y_true: int tensor `(batch, seq)` of tag ids, negative where not scored.
        y_pred: float tensor `(batch, seq, num_tags)`, the emissions.

    Returns:
        The mean over the batch of `-log p(y_true | y_pred)` (with the default reduction).

    Example:
    >>> crf = CRF(3)
    >>> loss = CRFLoss(crf)
    >>> y_true = ops.array([[-100, 2, 1, -100]])  # [CLS] w1 w2 [SEP]
    >>> round(float(loss(y_true, ops.zeros((1, 4, 3)))), 4)  # -log(1 / 9)
    2.1972
    """

    def __init__(self, crf, name="crf_loss", **kwargs):
        if not isinstance(crf, CRF):
            raise ValueError(f"CRFLoss expected crf to be a CRF layer; received {crf!r}")
        super().__init__(name=name, **kwargs)
        self.crf = crf

    def call(self, y_true, y_pred):
        mask = ops.greater_equal(y_true, 0)  # (batch, seq)
        tags = ops.where(mask, ops.cast(y_true, "int32"), 0)  # (batch, seq)
        return -self.crf.log_likelihood(y_pred, tags, mask)  # (batch,)

    def get_config(self):
        return {**super().get_config(), "crf": self.crf.name}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        crf = config.pop("crf")
        if not isinstance(crf, CRF):
            raise ValueError(
                "CRFLoss cannot be rebuilt from a config: it must hold the model's own CRF "
                f"layer; received crf={crf!r} (the saved layer's name). Load the model with "
                "keras.models.load_model(path, compile=False) and compile it again with "
                f"loss=CRFLoss(model.get_layer({crf!r}))"
            )
        return cls(crf, **config)
