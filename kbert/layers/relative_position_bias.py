"""T5's relative position bias: one learned scalar per head and distance bucket."""

import math

import keras
import numpy as np
from keras import ops

from kbert.checks import check_int


def relative_position_buckets(
    query_length, key_length, bidirectional=True, num_buckets=32, max_distance=128
):
    """The bucket of every (query, key) distance, as T5 computes it (numpy int32).

    Half the buckets (per direction, when bidirectional) hold exact small distances; the rest
    grow logarithmically up to `max_distance`, beyond which distances share the last bucket. A
    causal (decoder) bias is one-directional: keys after the query all fall in bucket 0.

    Returns:
        int32 array `(query_length, key_length)`.

    Example:
    >>> relative_position_buckets(5, 5, bidirectional=False)[4].tolist()  # the last query
    [4, 3, 2, 1, 0]
    """
    memory = np.arange(key_length)[None, :]
    context = np.arange(query_length)[:, None]
    relative = memory - context  # (query, key): key position minus query position
    buckets = np.zeros_like(relative)
    if bidirectional:
        num_buckets //= 2
        buckets += (relative > 0).astype(np.int64) * num_buckets
        distance = np.abs(relative)
    else:
        distance = np.maximum(-relative, 0)
    exact = num_buckets // 2
    is_small = distance < exact
    with np.errstate(divide="ignore"):
        large = exact + (
            np.log(np.maximum(distance, 1) / exact)
            / math.log(max_distance / exact)
            * (num_buckets - exact)
        ).astype(np.int64)
    large = np.minimum(large, num_buckets - 1)
    return (buckets + np.where(is_small, distance, large)).astype(np.int32)


@keras.saving.register_keras_serializable(package="kbert")
class RelativePositionBias(keras.layers.Layer):
    """Attention-logit biases `(1, heads, query, key)` from bucketed relative distances.

    T5 has no position embeddings: each attention logit gets a learned bias for the distance
    between query and key, one table per stack, shared by all its layers (compute it once per
    forward pass and pass it to every block).

    Args:
        num_heads: int.
        bidirectional: bool, default True (the encoder; False for the decoder's self-attention).
        num_buckets: int, default 32.
        max_distance: int, default 128.
        **kwargs: `name`, `dtype`, `trainable`.

    Example:
    >>> bias = RelativePositionBias(num_heads=4)
    >>> tuple(bias(query_length=3, key_length=5).shape)
    (1, 4, 3, 5)
    """

    def __init__(self, num_heads, bidirectional=True, num_buckets=32, max_distance=128, **kwargs):
        super().__init__(**kwargs)
        for name, value in (("num_heads", num_heads), ("num_buckets", num_buckets)):
            check_int(name, value, minimum=1, expected="an integer >= 1")
        if not isinstance(max_distance, int) or max_distance <= num_buckets // 2:
            raise ValueError(
                f"max_distance must be an integer above num_buckets // 2 = {num_buckets // 2}; "
                f"received {max_distance!r}"
            )
        self.num_heads = num_heads
        self.bidirectional = bool(bidirectional)
        self.num_buckets = num_buckets
        self.max_distance = max_distance
        self.table = self.add_weight(
            name="table",
            shape=(num_buckets, num_heads),
            initializer=keras.initializers.RandomNormal(stddev=num_heads**-0.5),
        )

    def buckets(self, query_length, key_length, query_offset=0):
        """`relative_position_buckets` as tensor ops: lengths and offset may be tensors known
        only when the graph runs (batches padded to their longest row, traced decoding).

        Returns:
            int32 tensor `(query_length, key_length)` for queries at positions
            `query_offset` … `query_offset + query_length - 1`.
        """
        memory = ops.expand_dims(ops.arange(key_length, dtype="int32"), 0)
        context = ops.expand_dims(
            ops.arange(query_length, dtype="int32") + ops.cast(query_offset, "int32"), 1
        )
        relative = memory - context  # (query, key): key position minus query position
        num_buckets = self.num_buckets
        buckets = ops.zeros_like(relative)
        if self.bidirectional:
            num_buckets //= 2
            buckets = buckets + ops.cast(relative > 0, "int32") * num_buckets
            distance = ops.abs(relative)
        else:
            distance = ops.maximum(-relative, 0)
        exact = num_buckets // 2
        # float64, as the numpy reference: float32 logs can land on the other side of a bucket
        # boundary.
        scaled = ops.log(ops.cast(ops.maximum(distance, 1), "float64") / exact) / math.log(
            self.max_distance / exact
        )
        large = exact + ops.cast(scaled * (num_buckets - exact), "int32")
        large = ops.minimum(large, num_buckets - 1)
        return buckets + ops.where(distance < exact, distance, large)

    def call(self, query_length, key_length, query_offset=0):
        """Biases for `query_length` queries (starting at `query_offset`, for cached decoding)
        against `key_length` keys."""
        buckets = self.buckets(query_length, key_length, query_offset)
        values = ops.take(self.table, buckets, axis=0)  # (q, k, heads)
        return ops.expand_dims(ops.transpose(values, (2, 0, 1)), 0)  # (1, heads, q, k)

    def get_config(self):
        return {
            **super().get_config(),
            "num_heads": self.num_heads,
            "bidirectional": self.bidirectional,
            "num_buckets": self.num_buckets,
            "max_distance": self.max_distance,
        }
