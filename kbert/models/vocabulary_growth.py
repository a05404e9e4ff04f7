"""Adding new special tokens (e.g. a classification token) to a pretrained encoder."""

import numpy as np

from kbert.checks import check_int
from kbert.models.encoder import Encoder

_TOKEN_TABLE = "embeddings/token_embedding/embeddings"
_INITIALIZERS = ("mean", "normal")


def grow_vocabulary(encoder, tokenizer, new_tokens, initializer="mean", seed=0):
    """Returns copies of `encoder` and `tokenizer` whose vocabulary has `new_tokens` appended.

    The NAACL tutorial adapts its pretrained causal model with a new classification token
    appended to every input: the token did not exist during pretraining, so its embedding is a
    new, trainable row. Every existing weight is copied unchanged and existing token ids keep
    their meaning; only the token-embedding table gets new rows, initialised to the mean of the
    existing rows (a neutral start, Hewitt 2021) or drawn like the table's own initialiser.

    Args:
        encoder: `kbert.models.Encoder` (pretrained).
        tokenizer: `kbert.text.WordPieceTokenizer` matching the encoder's vocabulary.
        new_tokens: list of str, e.g. `["[CLF]"]`. Tokens already in the vocabulary are kept
            as they are (no new row).
        initializer: str, default "mean". "mean" or "normal" (std `initializer_range`).
        seed: int, default 0. For "normal".

    Returns:
        `(encoder, tokenizer)`: new objects; the inputs are not modified.

    Example:
    >>> from kbert.text import WordPieceTokenizer
    >>> tokenizer = WordPieceTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + list("ab"))
    >>> encoder = Encoder.from_preset("tiny", vocabulary_size=7)
    >>> encoder, tokenizer = grow_vocabulary(encoder, tokenizer, ["[CLF]"])
    >>> tokenizer.token_to_id("[CLF]"), encoder.config.vocabulary_size
    (7, 8)
    """
    if initializer not in _INITIALIZERS:
        raise ValueError(f"initializer must be one of {_INITIALIZERS}; received {initializer!r}")
    size = encoder.config.vocabulary_size
    if tokenizer.vocabulary_size() != size:
        raise ValueError(
            f"the tokenizer has {tokenizer.vocabulary_size()} tokens but the encoder's embedding "
            f"has {size} rows; they must describe the same vocabulary"
        )
    grown_tokenizer = tokenizer.with_added_special_tokens(list(new_tokens))
    grown_size = grown_tokenizer.vocabulary_size()
    config = encoder.get_config()
    config["vocabulary_size"] = grown_size
    grown = Encoder.from_config(config)
    old = {weight.path: weight for weight in encoder.weights}
    for weight in grown.weights:
        value = np.asarray(old[weight.path].numpy())
        if weight.path == _TOKEN_TABLE and grown_size > size:
            rows = grown_size - size
            if initializer == "mean":
                extra = np.repeat(value.mean(axis=0, keepdims=True), rows, axis=0)
            else:
                generator = np.random.default_rng(seed)
                extra = generator.normal(
                    0.0, encoder.config.initializer_range, (rows, value.shape[1])
                )
            value = np.concatenate([value, extra.astype(value.dtype)])
        weight.assign(value)
    return grown, grown_tokenizer


def add_segment_embeddings(encoder, num_segments=2):
    """Returns a copy of `encoder` with a segment (speaker) embedding table of `num_segments`
    rows, initialised to zeros, so the copy computes exactly what `encoder` did until the
    table trains.

    TransferTransfo (Wolf et al. 2019) adds dialog-state embeddings — whose turn each token is
    — to a GPT that was pretrained without any; a zero start keeps the pretrained function.

    Args:
        encoder: `kbert.models.Encoder` with `config.num_segments == 0` (a GPT-style encoder).
        num_segments: int >= 1, default 2.

    Returns:
        `kbert.models.Encoder`; the input is not modified.

    Raises:
        ValueError: the encoder already has segment embeddings, or a bad `num_segments`.

    Example:
    >>> encoder = Encoder.from_preset("tiny", causal=True, num_segments=0)
    >>> add_segment_embeddings(encoder).config.num_segments
    2
    """
    num_segments = check_int("num_segments", num_segments, minimum=1, expected="an integer >= 1")
    if encoder.config.num_segments:
        raise ValueError(
            f"the encoder already has {encoder.config.num_segments} segment embeddings; "
            "expected an encoder built with num_segments=0"
        )
    config = encoder.get_config()
    config["num_segments"] = num_segments
    grown = Encoder.from_config(config)
    old = {weight.path: weight for weight in encoder.weights}
    for weight in grown.weights:
        if weight.path in old:
            weight.assign(old[weight.path].numpy())
        else:  # the new segment table
            weight.assign(np.zeros(weight.shape, dtype=weight.dtype))
    return grown
