"""Contextual embeddings: one vector per word (or subword) in context, from any encoder layers.

A static embedding gives "bank" one vector; a pretrained encoder gives it one per occurrence
(J&M §11.3). Which vector depends on two choices this module makes explicit:

- which layers: the top one, the average of the last four (J&M; Devlin et al. 2019 report it
  among the best feature-based choices), their sum, one given layer, several layers averaged, all
  layers kept apart (for per-layer studies such as probing), or a learned scalar mix (ELMo);
- how a word made of several subwords gets one vector: its first subword (what BERT's tagging
  head reads), the mean of its subwords, or its last subword.

Sentences are lists of words (whitespace-split when given as strings). Long sentences run in
overlapping windows; each word's vector comes from the window where it has the most context, so
every word gets exactly one vector. The result is cached on disk when `cache_dir` is given: the
key covers the encoder's weights, the vocabulary, the sentences and every option.
"""

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import keras
import numpy as np
import tensorflow as tf
from keras import ops

from kbert.checks import check_positive_int
from kbert.data.token_classification_features import token_classification_features
from kbert.files import atomic_path
from kbert.layers.scalar_mix import ScalarMix
from kbert.text.feature_batches import feature_batches

LAYER_COMBINATIONS = ("last", "last4_mean", "last4_sum", "all")
SUBWORD_POOLING = ("first", "mean", "last")
LEVELS = ("word", "subword")
_INPUT_KEYS = ("token_ids", "segment_ids", "padding_mask")
_CACHE_FORMAT = 1  # bump when the cached arrays change meaning


@dataclass
class ContextualEmbeddings:
    """Vectors of every word (or subword) of a corpus, flat, with their positions.

    Attributes:
        vectors: float32 array `(units, dim)`, or `(units, num_layers + 1, dim)` for
            `layers="all"` (axis 1: the embedding output, then each block). A unit is a word
            (`level="word"`) or a subword token (`level="subword"`).
        sentence_offsets: int64 array `(num_sentences + 1,)`: sentence `i`'s units are
            `vectors[sentence_offsets[i]:sentence_offsets[i + 1]]`.
        word_index: int32 array `(units,)`, each unit's word in its sentence.
        token_ids: int32 array `(units,)` of the subword ids (`level="subword"`), else None.
        level: "word" or "subword".
        layers: str, how the layers were combined (a description, for reports).
        from_cache: bool, whether the vectors were read from the disk cache.
    """

    vectors: np.ndarray
    sentence_offsets: np.ndarray
    word_index: np.ndarray
    token_ids: np.ndarray | None
    level: str
    layers: str
    from_cache: bool = False

    def __len__(self):
        return len(self.vectors)

    @property
    def num_sentences(self):
        return len(self.sentence_offsets) - 1

    @property
    def sentence_index(self):
        """int32 array `(units,)`: each unit's sentence."""
        counts = np.diff(self.sentence_offsets)
        return np.repeat(np.arange(self.num_sentences, dtype=np.int32), counts)

    def sentence(self, index):
        """The vectors of sentence `index`: `(units_in_sentence, ...)`."""
        self._check_sentence(index)
        return self.vectors[self.sentence_offsets[index] : self.sentence_offsets[index + 1]]

    def word(self, sentence_index, word_index):
        """The vector of one word (`level="word"`), or its subwords' vectors (`"subword"`).

        Raises:
            ValueError: a sentence or word index out of range.
        """
        self._check_sentence(sentence_index)
        start, end = (
            self.sentence_offsets[sentence_index],
            self.sentence_offsets[sentence_index + 1],
        )
        rows = start + np.flatnonzero(self.word_index[start:end] == word_index)
        if not len(rows):
            num_words = int(self.word_index[start:end].max()) + 1 if end > start else 0
            raise ValueError(
                f"word_index {word_index} is out of range: sentence {sentence_index} "
                f"has {num_words} words"
            )
        return self.vectors[rows[0]] if self.level == "word" else self.vectors[rows]

    def _check_sentence(self, index):
        if not 0 <= index < self.num_sentences:
            raise ValueError(f"sentence index {index} is out of range [0, {self.num_sentences})")


def layer_selection(layers, num_states):
    """Checks a layer specification and returns what to combine.

    Args:
        layers: "last", "last4_mean", "last4_sum", "all", an int (a layer: 0 is the embedding
            output, `num_states - 1` the top block; negative counts from the top), a list of
            ints (their mean), or a `kbert.layers.ScalarMix` over all `num_states` layers.
        num_states: int, the encoder's `num_layers + 1`.

    Returns:
        `(indices, reduction, description)`: the hidden-state indices, one of "single", "mean",
        "sum", "stack", "mix", and a str for reports.

    Raises:
        ValueError: an unknown name, an index out of range, an empty list, a scalar mix of
            another size, or fewer than 4 layers for "last4_*".

    Example:
    >>> layer_selection("last4_mean", 7)
    ((3, 4, 5, 6), 'mean', 'last4_mean')
    >>> layer_selection(-1, 7)
    ((6,), 'single', 'layer 6')
    """
    valid = f"[{-num_states}, {num_states - 1}] (0 = embeddings, {num_states - 1} = top block)"

    def index_of(value):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise ValueError(f"layer indices must be ints; received {value!r}")
        if not -num_states <= value < num_states:
            raise ValueError(f"layer index {value} is out of range {valid}")
        return int(value) % num_states

    if isinstance(layers, ScalarMix):
        if layers.num_inputs != num_states:
            raise ValueError(
                f"the ScalarMix mixes {layers.num_inputs} layers but the encoder has "
                f"{num_states} hidden states"
            )
        return tuple(range(num_states)), "mix", "scalar mix"
    if isinstance(layers, str):
        if layers == "last":
            return (num_states - 1,), "single", "last"
        if layers == "all":
            return tuple(range(num_states)), "stack", "all"
        if layers in ("last4_mean", "last4_sum"):
            if num_states < 4:
                raise ValueError(
                    f"layers={layers!r} needs at least 4 hidden states; the encoder "
                    f"has {num_states}"
                )
            return tuple(range(num_states - 4, num_states)), layers[6:], layers
        raise ValueError(
            f"layers must be one of {LAYER_COMBINATIONS}, an int, a list of ints or "
            f"a ScalarMix; received {layers!r}"
        )
    if isinstance(layers, (list, tuple)):
        if not layers:
            raise ValueError("layers must not be an empty list")
        indices = tuple(index_of(value) for value in layers)
        return indices, "mean", f"mean of layers {list(indices)}"
    index = index_of(layers)
    return (index,), "single", f"layer {index}"


def contextual_embeddings(
    encoder,
    tokenizer,
    sentences,
    layers="last4_mean",
    level="word",
    subword_pooling="mean",
    batch_size=32,
    sequence_length=None,
    stride=None,
    cache_dir=None,
    progress=False,
):
    """Runs an encoder over sentences and returns a vector per word (or subword).

    Args:
        encoder: `kbert.models.Encoder` (or any model with its dict inputs and a
            `hidden_states` output). Runs in inference mode; not modified.
        tokenizer: `kbert.text.WordPieceTokenizer` with [CLS], [SEP], [PAD] and [UNK].
        sentences: list of sentences, each a list of words or a str (split on whitespace).
        layers: default "last4_mean". See `layer_selection`.
        level: "word" (default) or "subword".
        subword_pooling: "first", "mean" (default) or "last": a word's vector from its
            subwords' (`level="word"` only).
        batch_size: int, default 32. Windows per forward pass.
        sequence_length: int, default None: 128, or the encoder's position table when that is
            shorter (`encoder.config.max_sequence_length`). Window length with [CLS] and [SEP];
            longer sentences run in overlapping windows.
        stride: int, default None. Tokens consecutive windows share (see
            `kbert.data.token_classification_features`).
        cache_dir: str or Path, default None. Folder for a disk cache of the result.
        progress: bool, default False. Show a progress bar over batches.

    Returns:
        A `ContextualEmbeddings`.

    Raises:
        ValueError: no sentences, an empty sentence, or a bad option (each named).

    Example:
    >>> from kbert.models import Encoder
    >>> from kbert.text import WordPieceTokenizer
    >>> tokenizer = WordPieceTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "river",
    ...                                 "bank", "##s"])
    >>> embeddings = contextual_embeddings(Encoder.from_preset("tiny"), tokenizer,
    ...                                    ["river banks", "bank"], layers="last")
    >>> embeddings.vectors.shape, embeddings.sentence_offsets.tolist()
    ((3, 16), [0, 2, 3])
    """
    sentences = _as_word_lists(sentences)
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}; received {level!r}")
    if subword_pooling not in SUBWORD_POOLING:
        raise ValueError(
            f"subword_pooling must be one of {SUBWORD_POOLING}; received {subword_pooling!r}"
        )
    batch_size = check_positive_int("batch_size", batch_size)
    num_states = len(encoder.output["hidden_states"]) if isinstance(encoder.output, dict) else None
    if num_states is None:
        raise ValueError(
            "encoder must be a model with a dict output holding 'hidden_states' "
            "(a kbert.models.Encoder)"
        )
    indices, reduction, description = layer_selection(layers, num_states)
    if reduction == "mix" and not layers.built:  # variables must exist before tracing
        layers.build((None, num_states, None, encoder.output["sequence_output"].shape[-1]))
    if sequence_length is None:
        config = getattr(encoder, "config", None)
        sequence_length = min(128, getattr(config, "max_sequence_length", 128))
    if level == "subword":
        subword_pooling = None  # not used: every subword is a unit

    cache_path = None
    if cache_dir is not None:
        key = _cache_key(
            encoder, tokenizer, sentences, layers, level, subword_pooling, sequence_length, stride
        )
        cache_path = Path(cache_dir).expanduser() / f"contextual_embeddings_{key}.npz"
        if cache_path.is_file():
            with np.load(cache_path) as cached:
                token_ids = cached["token_ids"] if level == "subword" else None
                return ContextualEmbeddings(
                    cached["vectors"],
                    cached["sentence_offsets"],
                    cached["word_index"],
                    token_ids,
                    level,
                    description,
                    from_cache=True,
                )

    features = token_classification_features(
        sentences, tokenizer, sequence_length=sequence_length, stride=stride
    )
    combine = _combiner(indices, reduction, layers)
    signature = {key: tf.TensorSpec((None, None), tf.int32, name=key) for key in _INPUT_KEYS}

    @tf.function(input_signature=[signature])  # one trace for every batch shape
    def token_vectors(inputs):
        states = encoder(inputs, training=False)["hidden_states"]
        return ops.cast(combine(states), "float32")  # (batch, seq, dim) or (batch, seq, S, dim)

    owned = (
        features["owned"]
        if level == "subword" or subword_pooling != "first"
        else features["first_subword"]
    )
    batches = feature_batches(features, batch_size=batch_size, input_keys=_INPUT_KEYS)
    num_batches = -(-len(features["sentence_index"]) // batch_size)
    bar = keras.utils.Progbar(num_batches, unit_name="batch") if progress else None
    parts, row = [], 0
    for step, inputs in enumerate(batches):
        vectors = token_vectors(inputs).numpy()
        rows = slice(row, row + len(vectors))
        pick = owned[rows, : vectors.shape[1]]  # padding past the batch's width is never owned
        batch_rows, positions = np.nonzero(pick)
        parts.append(vectors[batch_rows, positions])
        row += len(vectors)
        if bar is not None:
            bar.update(step + 1)
    token_rows, token_positions = np.nonzero(owned)  # row-major: the same order as `parts`
    unit_vectors = np.concatenate(parts)
    unit_sentences = features["sentence_index"][token_rows]
    unit_words = features["word_index"][token_rows, token_positions]
    unit_tokens = features["token_ids"][token_rows, token_positions]
    # Windows of one sentence follow each other and own increasing words, but sort to be sure.
    order = np.lexsort((np.arange(len(unit_words)), unit_words, unit_sentences))
    unit_vectors, unit_sentences = unit_vectors[order], unit_sentences[order]
    unit_words, unit_tokens = unit_words[order], unit_tokens[order]
    if level == "word" and subword_pooling != "first":
        unit_vectors, unit_sentences, unit_words = _pool_words(
            unit_vectors, unit_sentences, unit_words, subword_pooling
        )
    offsets = np.zeros(len(sentences) + 1, dtype=np.int64)
    np.add.at(offsets, unit_sentences + 1, 1)
    offsets = np.cumsum(offsets)
    result = ContextualEmbeddings(
        unit_vectors.astype(np.float32),
        offsets,
        unit_words.astype(np.int32),
        unit_tokens.astype(np.int32) if level == "subword" else None,
        level,
        description,
    )
    if cache_path is not None:
        _save_atomically(cache_path, result)
    return result


def find_word(words, target, occurrence=0):
    """The index of `target` in a sentence's words (case-insensitive), or a clear error.

    Args:
        words: list of str, or a str (split on whitespace).
        target: str, the word to find.
        occurrence: int, default 0. Which occurrence, when the word appears several times.

    Returns:
        int, the word's index.

    Raises:
        ValueError: `target` does not occur (`occurrence + 1` times) in the sentence.

    Example:
    >>> find_word("We sat on the bank of the river", "bank")
    4
    """
    words = words.split() if isinstance(words, str) else list(words)
    matches = [i for i, word in enumerate(words) if word.lower() == target.lower()]
    if len(matches) <= occurrence:
        found = f"occurs {len(matches)} time(s)" if matches else "does not occur"
        raise ValueError(
            f"target word {target!r} {found} in the sentence "
            f"{' '.join(words)!r} (wanted occurrence {occurrence}); words are "
            "compared whole and case-insensitively, after whitespace splitting"
        )
    return matches[occurrence]


def embed_word_in_context(
    encoder, tokenizer, sentence, target, layers="last4_mean", subword_pooling="mean", occurrence=0
):
    """The contextual vector of `target` in one sentence (J&M §11.3's "bank" example).

    Args:
        encoder, tokenizer, layers, subword_pooling: see `contextual_embeddings`.
        sentence: str or list of words.
        target: str, a whole word of the sentence.
        occurrence: int, default 0. Which occurrence of `target`.

    Returns:
        float32 array `(dim,)` (`(num_layers + 1, dim)` for `layers="all"`).

    Raises:
        ValueError: `target` is not in the sentence (see `find_word`).
    """
    words = _as_word_lists([sentence])[0]
    index = find_word(words, target, occurrence)
    embeddings = contextual_embeddings(
        encoder, tokenizer, [words], layers=layers, subword_pooling=subword_pooling
    )
    return embeddings.word(0, index)


def _as_word_lists(sentences):
    if isinstance(sentences, (str, bytes)):
        raise ValueError(
            "sentences must be a list of sentences (each a str or a list of words); "
            "received one string"
        )
    word_lists = []
    for index, sentence in enumerate(sentences):
        words = sentence.split() if isinstance(sentence, str) else list(sentence)
        if not words:
            raise ValueError(f"sentence {index} is empty; every sentence needs at least one word")
        word_lists.append(words)
    if not word_lists:
        raise ValueError("sentences must hold at least one sentence; received 0")
    return word_lists


def _combiner(indices, reduction, layers):
    """A function from the list of hidden states to the combined per-token vectors."""

    def combine(states):
        chosen = [states[i] for i in indices]
        if reduction == "single":
            return chosen[0]
        if reduction == "mix":
            return layers(ops.stack(chosen, axis=1))  # ScalarMix over (batch, S, seq, dim)
        stacked = ops.stack(chosen, axis=2)  # (batch, seq, k, dim)
        if reduction == "stack":
            return stacked
        return ops.mean(stacked, axis=2) if reduction == "mean" else ops.sum(stacked, axis=2)

    return combine


def _pool_words(vectors, sentences, words, pooling):
    """Pools the consecutive subword rows of each (sentence, word) into one row."""
    starts = np.flatnonzero(
        np.concatenate([[True], (sentences[1:] != sentences[:-1]) | (words[1:] != words[:-1])])
    )
    if pooling == "mean":
        sizes = np.diff(np.concatenate([starts, [len(vectors)]]))
        pooled = np.add.reduceat(vectors.astype(np.float64), starts, axis=0)
        pooled /= sizes.reshape((-1,) + (1,) * (vectors.ndim - 1))
    else:  # "last"
        pooled = vectors[np.concatenate([starts[1:], [len(vectors)]]) - 1]
    return pooled, sentences[starts], words[starts]


def model_fingerprint(encoder, tokenizer):
    """A hex digest of an encoder's config and weights and a tokenizer's vocabulary.

    Disk caches of anything computed from the encoder key on it, so that changed weights or a
    changed vocabulary never read a stale cache.

    Args:
        encoder: a Keras model (e.g. `kbert.models.Encoder`).
        tokenizer: anything with `get_vocabulary()`.

    Returns:
        A str of 64 hex digits.
    """
    digest = hashlib.sha256()
    digest.update(json.dumps(encoder.get_config(), sort_keys=True, default=str).encode())
    for weight in encoder.weights:
        digest.update(weight.path.encode())
        digest.update(np.ascontiguousarray(keras.ops.convert_to_numpy(weight)).tobytes())
    digest.update("\n".join(tokenizer.get_vocabulary()).encode())
    return digest.hexdigest()


def _cache_key(encoder, tokenizer, sentences, layers, level, pooling, sequence_length, stride):
    digest = hashlib.sha256()
    digest.update(model_fingerprint(encoder, tokenizer).encode())
    digest.update(json.dumps(sentences).encode())
    if isinstance(layers, ScalarMix):
        layers = ["scalar_mix"] + [np.asarray(w).tolist() for w in layers.get_weights()]
    digest.update(
        json.dumps(
            [_CACHE_FORMAT, layers, level, pooling, sequence_length, stride], default=str
        ).encode()
    )
    return digest.hexdigest()[:24]


def _save_atomically(path, embeddings):
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays = {
        "vectors": embeddings.vectors,
        "sentence_offsets": embeddings.sentence_offsets,
        "word_index": embeddings.word_index,
    }
    if embeddings.token_ids is not None:
        arrays["token_ids"] = embeddings.token_ids
    with atomic_path(path) as temporary, open(temporary, "xb") as file:
        np.savez(file, **arrays)
