"""Cached features of a frozen encoder: one pooled vector per layer per example, computed once.

Feature extraction (J&M §11.3; the NAACL 2019 tutorial's §4.2.A; Peters et al. 2018) keeps the
pretrained encoder frozen and trains only a classifier on its representations. Since the encoder
never changes, its forward pass need not run every epoch: run it once, keep each layer's pooled
vector, and train any number of classifiers (top layer, last four, a scalar mix) on the cache.
"""

import numpy as np
import tensorflow as tf
from keras import ops

from kbert.checks import check_positive_int
from kbert.layers.sequence_pooling import POOLING_MODES, SequencePooling

_INPUT_KEYS = ("token_ids", "segment_ids", "padding_mask")
_PREPROCESS_CHUNK = 1024  # texts tokenized per call: bounds the string ops' memory


def pool_hidden_states(hidden_states, padding_mask, pooling="cls"):
    """Pools every layer's hidden state and stacks the results on axis 1.

    The one place both the cached path (`extract_layer_features`) and the uncached one
    (`kbert.models.frozen_encoder_classifier`) compute their features, so the two agree.

    Args:
        hidden_states: list of `num_layers + 1` float tensors `(batch, seq, hidden)` (an
            `Encoder`'s `hidden_states`), symbolic or eager.
        padding_mask: int tensor `(batch, seq)`, 1 at real tokens.
        pooling: str, default "cls". A `kbert.layers.SequencePooling` mode.

    Returns:
        Float tensor `(batch, num_layers + 1, hidden)` (`3 * hidden` for "concat").

    Example:
    >>> states = [ops.ones((2, 5, 4)), 2 * ops.ones((2, 5, 4))]
    >>> tuple(pool_hidden_states(states, ops.ones((2, 5), "int32"), "mean").shape)
    (2, 2, 4)
    """
    pool = SequencePooling(pooling)
    return ops.stack(
        [pool(state, padding_mask=padding_mask) for state in hidden_states], axis=1
    )  # (batch, layers, hidden)


def extract_layer_features(
    encoder, preprocessor, texts, text_pairs=None, pooling="cls", batch_size=64
):
    """Runs a frozen encoder once over texts and returns every layer's pooled vector.

    The encoder runs in inference mode (no dropout), batch by batch through one traced
    `tf.function`. Examples are sorted by length and each batch is padded only to its own
    longest example (short questions then cost a fraction of `sequence_length`); the rows come
    back in the order of `texts`. Padding changes nothing else: attention and pooling skip it.

    Why pooling before mixing is exact: the classifiers on these features combine layers with
    fixed weights ("last4": the mean of the last four) or learned ones (ELMo's scalar mix,
    `sum_k s_k h_k`), and "cls" (taking position 0) and "mean" (a masked average) are linear
    maps of a hidden state, so pooling each layer and then mixing equals mixing the hidden states
    and then pooling: `pool(sum_k s_k h_k) = sum_k s_k pool(h_k)`. "max" is not linear: with
    max pooling (or "concat", which contains it) a cached mix is a mix of pooled layers, not
    the pool of the mixed layer, a different (still usable) feature. "last" is linear too.

    Args:
        encoder: `kbert.models.Encoder` (or any model with its dict inputs and a
            `hidden_states` output). Not modified.
        preprocessor: `kbert.text.BertPreprocessor` (texts to the encoder's input dict). Its
            `sequence_length` caps (truncates) every example.
        texts: list of str, the (first) texts.
        text_pairs: list of str, default None. Second texts of pairs, as long as `texts`.
        pooling: str, default "cls". A `kbert.layers.SequencePooling` mode.
        batch_size: int, default 64. Examples per forward pass.

    Returns:
        float32 numpy array `(len(texts), num_layers + 1, hidden)` (`3 * hidden` for
        "concat"): axis 1 is the embedding output, then each block, bottom to top.

    Raises:
        ValueError: empty `texts`, `text_pairs` of another length, an unknown `pooling` or a
            non-positive `batch_size`.

    Example:
    >>> from kbert.models import Encoder
    >>> from kbert.text import BertPreprocessor, WordPieceTokenizer
    >>> vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world"]
    >>> preprocessor = BertPreprocessor(WordPieceTokenizer(vocabulary), sequence_length=8)
    >>> features = extract_layer_features(Encoder.from_preset("tiny"), preprocessor,
    ...                                   ["hello world", "hello"])
    >>> features.shape  # 2 texts, embeddings + 2 blocks, hidden 16
    (2, 3, 16)
    """
    texts = _as_text_list(texts, "texts")
    if not texts:
        raise ValueError("texts must hold at least one text; received 0 texts")
    if text_pairs is not None:
        text_pairs = _as_text_list(text_pairs, "text_pairs")
        if len(text_pairs) != len(texts):
            raise ValueError(
                f"text_pairs must have one text per entry of texts ({len(texts)}); "
                f"received {len(text_pairs)}"
            )
    if pooling not in POOLING_MODES:
        raise ValueError(f"pooling must be one of {POOLING_MODES}; received {pooling!r}")
    batch_size = check_positive_int("batch_size", batch_size)

    # Tokenize and pack everything once, then sort by length.
    packed = {key: [] for key in _INPUT_KEYS}
    for start in range(0, len(texts), _PREPROCESS_CHUNK):
        chunk = texts[start : start + _PREPROCESS_CHUNK]
        if text_pairs is not None:
            chunk = (chunk, text_pairs[start : start + _PREPROCESS_CHUNK])
        inputs = preprocessor(chunk)
        for key in _INPUT_KEYS:
            packed[key].append(np.asarray(inputs[key], "int32"))
    packed = {key: np.concatenate(parts) for key, parts in packed.items()}  # (n, seq_len) each
    lengths = packed["padding_mask"].sum(axis=1)  # (n,)
    order = np.argsort(-lengths, kind="stable")  # longest first: the largest batch fails first

    signature = {key: tf.TensorSpec((None, None), tf.int32, name=key) for key in _INPUT_KEYS}

    @tf.function(input_signature=[signature])  # one trace for every batch shape
    def layer_features(inputs):
        states = encoder(inputs, training=False)["hidden_states"]
        return ops.cast(pool_hidden_states(states, inputs["padding_mask"], pooling), "float32")

    features = None
    for start in range(0, len(texts), batch_size):
        rows = order[start : start + batch_size]
        width = max(int(lengths[rows].max()), 1)  # right padding: real tokens come first
        batch = {key: tf.constant(value[rows, :width]) for key, value in packed.items()}
        pooled = layer_features(batch).numpy()  # (batch, layers, hidden)
        if features is None:
            features = np.empty((len(texts),) + pooled.shape[1:], "float32")
        features[rows] = pooled
    return features


def _as_text_list(values, name):
    if isinstance(values, (str, bytes)):
        raise ValueError(f"{name} must be a list of strings; received one {type(values).__name__}")
    return [value.decode("utf-8") if isinstance(value, bytes) else value for value in values]
