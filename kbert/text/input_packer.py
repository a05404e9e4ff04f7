"""Packs one or two segments of token ids into fixed-length BERT encoder inputs.

`[CLS] A [SEP]` or `[CLS] A [SEP] B [SEP]`, truncated to fit and padded, with segment ids and a
padding mask, exactly as Hugging Face `tokenizers`' BERT post-processor and truncation do.

Which ops the graph may hold: exported SavedModels must load in TF Serving, whose builds embed
tensorflow-text 2.12 (tensorflow/serving#4057, #2064), where newer tf-text ops such as
`RoundRobinTrim` are missing. tf-text's trimmers, `combine_segments` and `pad_model_inputs` are
therefore not used; truncation and packing are written with core ops (`tf.minimum`,
`tf.where`, `tf.gather`). Truncation decides how many tokens each
segment keeps from the segment lengths alone (`kept_lengths`), so the same decision also packs
per-token side tensors such as word ids and offsets, and stays available to a later windowing
(QA with a stride).
"""

import keras
import tensorflow as tf

from kbert.checks import check_int

TRUNCATION_STRATEGIES = ("longest_first", "round_robin", "only_first", "only_second")


def kept_pair_lengths(first, second, budget, truncation):
    """How many tokens of each of two segments fit in `budget` (int64 (batch,) tensors)."""
    fits = first + second <= budget
    if truncation == "longest_first":
        # Hugging Face `tokenizers` LongestFirst: if the shorter segment fits in half the budget
        # it stays whole and the longer one gets the rest; otherwise the budget is halved and the
        # longer segment gets the odd token; on a tie the second counts as the longer.
        shorter = tf.minimum(first, second)
        first_is_longer = first > second
        shorter_stays = 2 * shorter <= budget
        keep_shorter = tf.where(shorter_stays, shorter, budget // 2)
        keep_longer = tf.where(shorter_stays, budget - shorter, budget - budget // 2)
        keep_first = tf.where(first_is_longer, keep_longer, keep_shorter)
        keep_second = tf.where(first_is_longer, keep_shorter, keep_longer)
    elif truncation == "round_robin":
        # tf-text RoundRobinTrimmer: hand out the budget one token at a time, first, second,
        # first, ...; a segment that runs out leaves the rest to the other.
        keep_first = tf.minimum(first, tf.maximum(budget - budget // 2, budget - second))
        keep_second = tf.minimum(second, tf.maximum(budget // 2, budget - first))
    elif truncation == "only_first":
        keep_second = tf.minimum(second, budget)
        keep_first = tf.minimum(first, budget - keep_second)
    else:  # only_second
        keep_first = tf.minimum(first, budget)
        keep_second = tf.minimum(second, budget - keep_first)
    return (
        tf.where(fits, first, keep_first),
        tf.where(fits, second, keep_second),
    )


def _as_batch(segment, name):
    """Returns (ragged (batch, None) int tensor, was_unbatched)."""
    if isinstance(segment, (list, tuple)):
        segment = tf.ragged.constant(segment)
    elif not isinstance(segment, (tf.Tensor, tf.RaggedTensor)):
        segment = tf.convert_to_tensor(segment)
    if not segment.dtype.is_integer:
        raise ValueError(f"{name} must hold integer ids; received dtype {segment.dtype.name}")
    rank = segment.shape.rank
    if isinstance(segment, tf.RaggedTensor):
        if rank != 2:
            raise ValueError(
                f"{name} must be a (batch, None) ragged tensor; received shape {segment.shape}"
            )
        return segment.with_row_splits_dtype(tf.int64), False
    if rank == 1:
        return tf.RaggedTensor.from_tensor(segment[tf.newaxis]), True
    if rank == 2:
        return tf.RaggedTensor.from_tensor(segment), False
    raise ValueError(
        f"{name} must be 1-D (one sequence) or 2-D (a batch); received shape {segment.shape}"
    )


@keras.saving.register_keras_serializable(package="kbert")
class InputPacker(keras.layers.Layer):
    """Packs one or two segments of ids into `[CLS] A [SEP] (B [SEP])`, truncated and padded.

    Truncation matches Hugging Face `tokenizers` (`longest_first`) or tf-text's
    `RoundRobinTrimmer` (`round_robin`) with core ops only (see the module docstring). Segment ids
    are 0 for `[CLS]`, A and the first `[SEP]`, 1 for B and the last `[SEP]`, as in BERT.

    Args:
        sequence_length: int. Length of every packed row; at least 2 for single segments and 3 for
            pairs (the special tokens alone).
        start_token_id: int. Put first (`[CLS]`).
        end_token_id: int. Put after each segment (`[SEP]`).
        pad_token_id: int, default 0. Fills the rest of the row.
        truncation: str, default "longest_first". How a pair is cut to fit: "longest_first"
            (Hugging Face: the longer segment loses tokens first; when both are long the budget is
            split in halves, the odd token going to the longer, or to the second on a tie),
            "round_robin" (tokens handed out one at a time, first, second, first, ...),
            "only_first" or "only_second" (cut that segment; if the other alone is too long it is
            cut too, where Hugging Face would raise). A single segment keeps its first
            `sequence_length - 2` tokens under every strategy.
        **kwargs: passed to `keras.layers.Layer`.

    Example:
    >>> packer = InputPacker(sequence_length=8, start_token_id=101, end_token_id=102)
    >>> outputs = packer((tf.ragged.constant([[5, 6, 7]]), tf.ragged.constant([[8, 9]])))
    >>> outputs["token_ids"].numpy().tolist()
    [[101, 5, 6, 7, 102, 8, 9, 102]]
    >>> outputs["segment_ids"].numpy().tolist()
    [[0, 0, 0, 0, 0, 1, 1, 1]]
    """

    # String and ragged ops have no XLA kernels: jit_compile="auto" then leaves XLA off.
    supports_jit = False

    def __init__(
        self,
        sequence_length,
        start_token_id,
        end_token_id,
        pad_token_id=0,
        truncation="longest_first",
        **kwargs,
    ):
        kwargs.setdefault("trainable", False)
        kwargs.setdefault("dtype", "int32")
        super().__init__(**kwargs)
        # Ragged inputs and tuples of them pass through untouched (Keras would convert them).
        self._convert_input_args = False
        self._allow_non_tensor_positional_args = True
        sequence_length = check_int(
            "sequence_length",
            sequence_length,
            minimum=2,
            expected="an int of at least 2 ([CLS] and [SEP])",
        )
        for name, value in (
            ("start_token_id", start_token_id),
            ("end_token_id", end_token_id),
            ("pad_token_id", pad_token_id),
        ):
            check_int(name, value, minimum=0, expected="a non-negative int")
        if truncation not in TRUNCATION_STRATEGIES:
            raise ValueError(
                f"truncation must be one of {TRUNCATION_STRATEGIES}; received {truncation!r}"
            )
        self.sequence_length = sequence_length
        self.start_token_id = start_token_id
        self.end_token_id = end_token_id
        self.pad_token_id = pad_token_id
        self.truncation = truncation
        self.built = True

    def _budget(self, num_segments):
        if num_segments == 2 and self.sequence_length < 3:
            raise ValueError(
                "sequence_length must be at least 3 to pack a pair ([CLS] A [SEP] B [SEP]); "
                f"received sequence_length={self.sequence_length}"
            )
        return self.sequence_length - 1 - num_segments

    def kept_lengths(self, lengths):
        """How many tokens of each segment survive truncation.

        Args:
            lengths: list of one or two int tensors of shape (batch,), the segment lengths.

        Returns:
            A list of int64 tensors of the same shapes: the number of leading tokens each segment
            keeps (a window over a long context can start where the kept part ends).

        Example:
        >>> packer = InputPacker(sequence_length=10, start_token_id=2, end_token_id=3)
        >>> [int(x[0]) for x in packer.kept_lengths([tf.constant([12]), tf.constant([10])])]
        [4, 3]
        """
        lengths = [tf.cast(length, tf.int64) for length in lengths]
        if len(lengths) not in (1, 2):
            raise ValueError(f"expected lengths of one or two segments; received {len(lengths)}")
        budget = tf.constant(self._budget(len(lengths)), tf.int64)
        if len(lengths) == 1:
            return [tf.minimum(lengths[0], budget)]
        return list(kept_pair_lengths(lengths[0], lengths[1], budget, self.truncation))

    def _segments(self, inputs):
        # A tuple holds segments; a list is one segment (nested lists of ids), as in tf.data.
        segments = list(inputs) if isinstance(inputs, tuple) else [inputs]
        if len(segments) not in (1, 2):
            raise ValueError(
                f"expected one segment or a pair of segments; received {len(segments)} segments"
            )
        return segments

    @tf.autograph.experimental.do_not_convert  # no tensor-dependent Python control flow
    def call(self, inputs, alignments=None):
        """Packs segments (and tensors aligned with them) into fixed-length rows.

        Args:
            inputs: the ids of one segment, or a tuple of one or two segments (a pair must be a
                tuple; a list is read as one segment): each a ragged (batch, None) or dense
                (batch, length) int tensor or nested list, or 1-D for a single unbatched
                sequence.
            alignments: optional; for one segment a dict of tensors shaped like it (e.g.
                `word_ids`, `start_offsets`, `end_offsets` from
                `WordPieceTokenizer.tokenize_with_alignment`), for a pair a tuple of two such
                dicts with the same keys.

        Returns:
            A dict of int32 tensors shaped (batch, sequence_length), or (sequence_length,) for
            unbatched input: `token_ids`; `segment_ids`; `padding_mask`, 1 for real tokens
            (special tokens included) and 0 for padding (int32 rather than bool so every value
            of the dict has one dtype; the encoder casts); and each alignment key, packed with
            the same truncation and -1 at special and padding positions.
        """
        segments = self._segments(inputs)
        self._budget(len(segments))  # raises early when a pair cannot fit
        batched = [_as_batch(segment, f"segment {i}") for i, segment in enumerate(segments)]
        unbatched = {was_unbatched for _, was_unbatched in batched}
        if len(unbatched) != 1:
            raise ValueError(
                "segments of a pair must both be batched or both be single sequences; received "
                f"shapes {[segment.shape for segment in segments]}"
            )
        unbatched = unbatched.pop()
        segments = [segment for segment, _ in batched]
        if len(segments) == 2:
            first_rows, second_rows = segments[0].shape[0], segments[1].shape[0]
            if first_rows is not None and second_rows is not None and first_rows != second_rows:
                raise ValueError(
                    "the two segments of a pair must have the same batch size; received "
                    f"{first_rows} and {second_rows}"
                )
        alignments = self._alignments(alignments, len(segments))

        lengths = [segment.row_lengths() for segment in segments]
        if len(segments) == 2:
            tf.debugging.assert_equal(
                tf.shape(lengths[0]),
                tf.shape(lengths[1]),
                message="the two segments of a pair must have the same batch size",
            )
        kept = [keep[:, tf.newaxis] for keep in self.kept_lengths(lengths)]  # (batch, 1) each

        # Every output position says where its value comes from: row r is [start] A[:kept_a]
        # [end] (B[:kept_b] [end]), so position p holds A[p - 1] for 1 <= p <= kept_a, and so on.
        # Gathering by position replaces trimming, concatenating and padding ragged tensors.
        position = tf.range(self.sequence_length, dtype=tf.int64)[tf.newaxis, :]  # (1, length)
        segment_start = []  # (batch, 1) each: where each segment's tokens begin
        in_segment = []  # (batch, length) each: which positions hold that segment's tokens
        used = tf.ones_like(kept[0])  # (batch, 1) positions taken so far: the start token
        for keep in kept:
            segment_start.append(used)
            in_segment.append((position >= used) & (position < used + keep))
            used = used + keep + 1  # the segment and its end token
        real = position < used  # (batch, length) not padding

        def gather_rows(values, index):
            # values[row_start + p - segment_start] inside the segment, elsewhere a padding slot
            # that also keeps the gather valid when a segment holds no values at all.
            flat = tf.concat([values.flat_values, tf.zeros([1], values.flat_values.dtype)], 0)
            source = values.row_starts()[:, tf.newaxis] + position - segment_start[index]
            source = tf.where(in_segment[index], source, tf.size(flat, out_type=tf.int64) - 1)
            return tf.cast(tf.gather(flat, source), tf.int32)  # (batch, length)

        def fill(sources, special, padding):
            packed = tf.where(real, tf.constant(special, tf.int32), tf.constant(padding, tf.int32))
            for index, values in enumerate(sources):
                packed = tf.where(in_segment[index], gather_rows(values, index), packed)
            return packed  # (batch, length)

        token_ids = fill(segments, self.end_token_id, self.pad_token_id)
        token_ids = tf.where(position == 0, tf.constant(self.start_token_id, tf.int32), token_ids)
        # Segment 1 runs from B's first token through the last end token; the start token and
        # the first end token belong to segment 0.
        second = (
            real & (position >= segment_start[1]) if len(segments) == 2 else tf.zeros_like(real)
        )
        outputs = {
            "token_ids": token_ids,
            "segment_ids": tf.cast(second, tf.int32),
            "padding_mask": tf.cast(real, tf.int32),
        }
        for key in alignments[0] if alignments else ():
            values = []
            for alignment, segment in zip(alignments, segments, strict=True):
                value = _as_batch(alignment[key], key)[0]
                tf.debugging.assert_equal(
                    value.row_splits,
                    segment.row_splits,
                    message=f"alignment {key!r} must have the same row lengths as its segment",
                )
                values.append(value)
            outputs[key] = fill(values, -1, -1)
        if unbatched:
            outputs = {key: value[0] for key, value in outputs.items()}
        return outputs

    def _alignments(self, alignments, num_segments):
        if alignments is None:
            return None
        if isinstance(alignments, dict):
            alignments = (alignments,)
        alignments = tuple(alignments)
        if len(alignments) != num_segments or not all(isinstance(a, dict) for a in alignments):
            raise ValueError(
                f"alignments must be one dict per segment ({num_segments}); received "
                f"{type(alignments).__name__} of length {len(alignments)}"
            )
        keys = [sorted(alignment) for alignment in alignments]
        if any(k != keys[0] for k in keys):
            raise ValueError(
                f"the alignment dicts of a pair must have the same keys; received {keys}"
            )
        reserved = {"token_ids", "segment_ids", "padding_mask"}
        clashing = reserved.intersection(keys[0])
        if clashing:
            raise ValueError(
                f"alignment keys must not reuse the output names {sorted(reserved)}; received "
                f"{sorted(clashing)} (drop token_ids from a tokenize_with_alignment dict)"
            )
        return alignments

    def compute_output_spec(self, inputs, alignments=None):
        segments = self._segments(inputs)
        shape = segments[0].shape
        leading = () if len(shape) == 1 else (shape[0],)
        names = ["token_ids", "segment_ids", "padding_mask"]
        if alignments is not None:
            first = alignments if isinstance(alignments, dict) else alignments[0]
            names += list(first)
        return {
            name: keras.KerasTensor(leading + (self.sequence_length,), dtype="int32")
            for name in names
        }

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "sequence_length": self.sequence_length,
                "start_token_id": self.start_token_id,
                "end_token_id": self.end_token_id,
                "pad_token_id": self.pad_token_id,
                "truncation": self.truncation,
            }
        )
        return config
