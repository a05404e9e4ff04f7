"""The one place where padding, attention and causal masks become an additive attention bias."""

from keras import ops

# Large enough to zero a softmax entry in float32 and bfloat16, small enough not to overflow
# either when added to a score (bfloat16 shares float32's exponent range).
MASK_VALUE = -1e9


def attention_bias(
    padding_mask=None, attention_mask=None, causal=False, sequence_length=None, dtype="float32"
):
    """Combines masks into one additive bias for attention scores.

    A broadcastable bias (not a full `(batch, seq, seq)` mask) keeps the padding-only case cheap:
    `(batch, 1, 1, seq)` is added to `(batch, heads, seq, seq)` scores.

    Args:
        padding_mask: int or bool tensor `(batch, seq)`, default None. 1/True for real tokens.
        attention_mask: int or bool tensor `(batch, seq, seq)`, default None. 1/True where query
            position i may attend to key position j.
        causal: bool, default False. Forbid attending to later positions.
        sequence_length: int or scalar tensor, default None. Needed when `causal` and no other
            mask gives the length.
        dtype: str, default "float32". Dtype of the returned bias.

    Returns:
        None when there is nothing to mask, else a tensor broadcastable to
        `(batch, heads, seq, seq)` holding 0 where attention is allowed and `MASK_VALUE` elsewhere.

    Example:
    >>> bias = attention_bias(padding_mask=ops.array([[1, 1, 0]]))
    >>> tuple(bias.shape)
    (1, 1, 1, 3)
    """
    allowed = None  # bool, broadcastable to (batch, 1, seq, seq)
    if padding_mask is not None:
        padding_mask = ops.cast(padding_mask, "bool")
        allowed = padding_mask[:, None, None, :]  # (batch, 1, 1, seq)
    if attention_mask is not None:
        attention_mask = ops.cast(attention_mask, "bool")[:, None, :, :]  # (batch, 1, seq, seq)
        allowed = attention_mask if allowed is None else ops.logical_and(allowed, attention_mask)
    if causal:
        if sequence_length is None:
            if padding_mask is None and attention_mask is None:
                raise ValueError("attention_bias(causal=True) needs `sequence_length` or a mask")
            sequence_length = ops.shape(
                padding_mask if padding_mask is not None else attention_mask
            )[-1]
        positions = ops.arange(sequence_length)
        lower = ops.greater_equal(positions[:, None], positions[None, :])  # (seq, seq)
        lower = lower[None, None, :, :]
        allowed = lower if allowed is None else ops.logical_and(allowed, lower)
    if allowed is None:
        return None
    return ops.where(allowed, ops.cast(0.0, dtype), ops.cast(MASK_VALUE, dtype))
