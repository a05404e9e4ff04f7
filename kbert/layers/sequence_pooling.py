"""Pooling a sequence of token vectors into one vector per example, respecting padding."""

import keras
from keras import ops

POOLING_MODES = ("cls", "mean", "max", "last", "concat")


@keras.saving.register_keras_serializable(package="kbert")
class SequencePooling(keras.layers.Layer):
    """Reduces `(batch, seq, hidden)` to `(batch, hidden)` (or `3 * hidden` for "concat").

    Modes:
        "cls": the first position (BERT's [CLS]; J&M §11.4.1).
        "mean": the average over real tokens (padding excluded).
        "max": the element-wise maximum over real tokens.
        "last": the last real token: with a classification token appended at the end, the only
            position a causal model lets see the whole text (the NAACL tutorial's adaptation).
        "concat": [last; max; mean] (ULMFiT's concat pooling, Howard & Ruder 2018).

    Args:
        mode: str, default "cls". One of `POOLING_MODES`.
        **kwargs: passed to `keras.layers.Layer`.

    Call args:
        sequence: float tensor `(batch, seq, hidden)`.
        padding_mask: int or bool tensor `(batch, seq)`, 1 at real tokens, default None (all
            real). Real tokens must come first (right padding), as kbert's packer produces.

    Example:
    >>> pooling = SequencePooling("mean")
    >>> x = ops.array([[[1.0], [3.0], [100.0]]])
    >>> ops.convert_to_numpy(pooling(x, padding_mask=ops.array([[1, 1, 0]]))).tolist()
    [[2.0]]
    """

    def __init__(self, mode="cls", **kwargs):
        super().__init__(**kwargs)
        if mode not in POOLING_MODES:
            raise ValueError(f"pooling mode must be one of {POOLING_MODES}; received {mode!r}")
        self.mode = mode
        self.supports_masking = False

    def call(self, sequence, padding_mask=None):
        if self.mode == "cls":
            return sequence[:, 0, :]
        if padding_mask is None:
            padding_mask = ops.ones(ops.shape(sequence)[:2], "int32")
        mask = ops.cast(padding_mask, sequence.dtype)[:, :, None]  # (batch, seq, 1)
        pooled = {}
        if self.mode in ("mean", "concat"):
            count = ops.maximum(ops.sum(mask, axis=1), 1.0)  # (batch, 1)
            pooled["mean"] = ops.sum(sequence * mask, axis=1) / count
        if self.mode in ("max", "concat"):
            lowest = ops.cast(-1e4 if sequence.dtype == "float16" else -1e9, sequence.dtype)
            pooled["max"] = ops.max(ops.where(mask > 0, sequence, lowest), axis=1)
        if self.mode in ("last", "concat"):
            last = ops.maximum(ops.sum(ops.cast(padding_mask, "int32"), axis=1) - 1, 0)  # (batch,)
            pooled["last"] = ops.take_along_axis(sequence, last[:, None, None], axis=1)[:, 0, :]
        if self.mode == "concat":
            return ops.concatenate([pooled["last"], pooled["max"], pooled["mean"]], axis=-1)
        return pooled[self.mode]

    def compute_output_shape(self, sequence_shape, padding_mask_shape=None):
        width = sequence_shape[-1]
        if self.mode == "concat" and width is not None:
            width = 3 * width
        return (sequence_shape[0], width)

    def get_config(self):
        return {**super().get_config(), "mode": self.mode}
