"""Attention maps: the softmax probabilities every head of every block computes, as numpy arrays.

Clark et al. (2019, "What does BERT look at?") read the attention probabilities of each head to
find heads that attend to [SEP], to the previous token, or from a verb to its object. This module
gets those probabilities without adding a flag to `TransformerBlock.call` (see STYLE.md: wrappers
and re-runs, not flags): it runs the encoder once, then calls each block's own `attention`
sublayer again on that block's input hidden state (after `attention_norm` for pre-LN blocks, as
the block itself does) with `return_attention_scores=True`. The weights, masks and causal setting
are the block's own, so the maps are the ones the block used (the tests check that block `i`
applied to `hidden_states[i]` reproduces `hidden_states[i + 1]`, and that a numpy recomputation
of softmax(QK^T / sqrt(head_dim) + mask) from the query/key kernels matches).

The maps are the probabilities before attention dropout (inference runs with `training=False`).
Rows are queries and columns keys: `maps[b, l, h, i, j]` is how much token `i` attends to token
`j` in head `h` of block `l` (block 0 is the first transformer block, above the embeddings).
Memory is `batch x layers x heads x seq x seq` float32 values: 30 MB for one 128-token sentence
through BERT-base, so batch long inputs yourself.
"""

import numpy as np

_INPUT_KEYS = ("token_ids", "segment_ids", "padding_mask")


def _blocks_of(encoder):
    blocks = getattr(encoder, "blocks", None)
    if not isinstance(blocks, (list, tuple)) or not blocks:
        raise ValueError(
            "encoder must be a kbert Encoder (a model with a non-empty `blocks` list of "
            f"TransformerBlocks and a `hidden_states` output); received {type(encoder).__name__} "
            f"with blocks={blocks!r}"
        )
    for index, block in enumerate(blocks):
        if not hasattr(block, "attention") or not hasattr(block, "norm_first"):
            raise ValueError(
                f"encoder.blocks[{index}] must be a TransformerBlock with `attention` and "
                f"`norm_first` attributes; received {type(block).__name__}"
            )
    return list(blocks)


def _checked_inputs(inputs):
    if not isinstance(inputs, dict):
        raise ValueError(
            f"inputs must be a dict with keys {list(_INPUT_KEYS)}; received {type(inputs).__name__}"
        )
    missing = [key for key in _INPUT_KEYS if key not in inputs]
    if missing:
        raise ValueError(
            f"inputs must have the keys {list(_INPUT_KEYS)}; received {sorted(inputs)}, missing "
            f"{missing}"
        )
    shapes = {key: tuple(np.shape(inputs[key])) for key in _INPUT_KEYS}
    if len(shapes["token_ids"]) != 2 or len(set(shapes.values())) != 1:
        raise ValueError(
            f"inputs must hold three int arrays of one shape (batch, seq); received shapes {shapes}"
        )
    return {key: inputs[key] for key in _INPUT_KEYS}


def attention_maps(encoder, inputs):
    """Returns the attention probabilities of every head of every block of an encoder.

    Runs the encoder once (`training=False`), then re-runs each block's `attention` sublayer on
    that block's input (normalized first when the block is pre-LN) with
    `return_attention_scores=True`. Works for post-LN (BERT) and pre-LN (GPT-2) blocks, causal
    encoders (the upper triangle is 0) and ALBERT-style shared blocks (one set of weights, a
    different input, so a different map, at each layer).

    Args:
        encoder: a `kbert.models.Encoder` (anything with a `blocks` list of `TransformerBlock`s
            whose call returns a dict holding `hidden_states`, the embedding output then each
            block's output).
        inputs: dict with `token_ids`, `segment_ids` and `padding_mask`, int arrays or tensors of
            shape `(batch, seq)`, as `kbert.text.BertPreprocessor` returns them (other keys are
            ignored).

    Returns:
        float32 numpy array `(batch, num_layers, num_heads, seq, seq)`: query positions on axis 3,
        key positions on axis 4; every row sums to 1 and padded keys get 0.

    Raises:
        ValueError: `encoder` has no `blocks` or no `hidden_states` output, or `inputs` lacks a
            key or has inconsistent shapes.

    Example:
    >>> from kbert.models import Encoder
    >>> encoder = Encoder.from_preset("tiny")
    >>> inputs = {"token_ids": np.array([[2, 5, 3, 0]], "int32"),
    ...           "segment_ids": np.zeros((1, 4), "int32"),
    ...           "padding_mask": np.array([[1, 1, 1, 0]], "int32")}
    >>> attention_maps(encoder, inputs).shape
    (1, 2, 2, 4, 4)
    """
    blocks = _blocks_of(encoder)
    inputs = _checked_inputs(inputs)
    outputs = encoder(inputs, training=False)
    hidden_states = outputs.get("hidden_states") if isinstance(outputs, dict) else None
    if not isinstance(hidden_states, (list, tuple)) or len(hidden_states) != len(blocks) + 1:
        received = (
            f"{len(hidden_states)} hidden states"
            if isinstance(hidden_states, (list, tuple))
            else f"outputs of type {type(outputs).__name__} without `hidden_states`"
        )
        raise ValueError(
            f"encoder must return a dict whose `hidden_states` list holds the embedding output and "
            f"each of its {len(blocks)} blocks' outputs ({len(blocks) + 1} tensors); received "
            f"{received}"
        )
    padding_mask = inputs["padding_mask"]
    maps = []
    for index, block in enumerate(blocks):
        # hidden_states[index] is block `index`'s input; only the last entry is changed by a
        # pre-LN encoder's final_norm, and no block reads it.
        x = hidden_states[index]  # (batch, seq, hidden_dim)
        if block.norm_first:
            x = block.attention_norm(x)
        try:
            _, probabilities = block.attention(
                x, padding_mask=padding_mask, training=False, return_attention_scores=True
            )
        except TypeError as error:
            raise ValueError(
                f"encoder.blocks[{index}].attention must accept return_attention_scores=True (as "
                f"kbert.layers.MultiHeadAttention does); received {type(block.attention).__name__}"
                f" ({error})"
            ) from None
        maps.append(np.asarray(probabilities, dtype=np.float32))  # (batch, heads, seq, keys)
    return np.stack(maps, axis=1)  # (batch, layers, heads, seq, keys)


def sentence_attention(encoder, preprocessor, tokenizer, text):
    """Returns the attention maps of one sentence, trimmed to its real tokens, and those tokens.

    Args:
        encoder: a `kbert.models.Encoder`.
        preprocessor: a `kbert.text.BertPreprocessor` (or any callable that maps a list of one
            str to a dict of `(1, seq)` encoder inputs). A text longer than its `sequence_length`
            is truncated, and only the kept tokens are returned.
        tokenizer: the `kbert.text.WordPieceTokenizer` whose ids the preprocessor writes (it
            turns ids back into token strings with `id_to_token`).
        text: str, one sentence.

    Returns:
        Pair `(maps, tokens)`: `maps` a float32 numpy array `(num_layers, num_heads, n, n)` (rows
        are queries, columns keys, over the `n` real tokens) and `tokens` the list of `n` token
        strings, [CLS] and [SEP] included, e.g. `["[CLS]", "the", "bank", ..., "[SEP]"]`.

    Raises:
        ValueError: `text` is not a non-empty str, `tokenizer` has no `id_to_token`, or the
            encoder is not a kbert Encoder (see `attention_maps`).

    Example:
    >>> from kbert.models import Encoder
    >>> from kbert.text import BertPreprocessor, WordPieceTokenizer
    >>> tokenizer = WordPieceTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hi", "!"])
    >>> preprocessor = BertPreprocessor(tokenizer, sequence_length=8)
    >>> maps, tokens = sentence_attention(Encoder.from_preset("tiny"), preprocessor, tokenizer,
    ...                                   "Hi!")
    >>> maps.shape, tokens
    ((2, 2, 4, 4), ['[CLS]', 'hi', '!', '[SEP]'])
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"text must be a non-empty str (one sentence); received {text!r}")
    if not callable(getattr(tokenizer, "id_to_token", None)):
        raise ValueError(
            "tokenizer must have an id_to_token method (a kbert.text.WordPieceTokenizer); "
            f"received {type(tokenizer).__name__}"
        )
    inputs = preprocessor([text])
    if not isinstance(inputs, dict) or "padding_mask" not in inputs:
        raise ValueError(
            "preprocessor must return a dict of encoder inputs with a padding_mask; received "
            f"{type(inputs).__name__}"
        )
    inputs = {key: inputs[key] for key in _INPUT_KEYS if key in inputs}
    maps = attention_maps(encoder, inputs)[0]  # (layers, heads, seq, seq)
    real = np.flatnonzero(np.asarray(inputs["padding_mask"])[0])  # (n,) positions of real tokens
    tokens = [tokenizer.id_to_token(int(i)) for i in np.asarray(inputs["token_ids"])[0, real]]
    return maps[:, :, real][:, :, :, real], tokens  # (layers, heads, n, n)
