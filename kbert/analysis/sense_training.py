"""Sense embeddings from an encoder: SemCor occurrences (J&M §11.3.1) and WordNet glosses (LMMS).

`corpus_sense_embeddings` runs an encoder once over every sentence of a sense-tagged corpus
(SemCor's 37,176 sentences for its 226,036 instances: one pass per sentence, not per instance),
sentences sorted by length so that batches carry little padding, and averages the vectors of each
sense's occurrences. `gloss_sense_embeddings` embeds each sense's WordNet definition and
examples, prefixed by its synset's lemmas ("bank, depository financial institution - a
financial institution that accepts deposits ..."), as the mean of the gloss's subword vectors
(Loureiro & Jorge 2019, LMMS-2048). Both cache their result on disk, keyed on the encoder's
weights, the vocabulary, the data and every option, so a second run reads it back.
"""

import hashlib
import json
from pathlib import Path

import numpy as np

from kbert.analysis.anisotropy import ZScorer
from kbert.analysis.contextual_embeddings import contextual_embeddings, model_fingerprint
from kbert.analysis.wsd import SenseEmbeddings, checked_sense_keys
from kbert.checks import check_positive_int

_CACHE_FORMAT = 3  # bump when the cached arrays change meaning
_MEAN, _STD = "#mean", "#std"  # cache rows holding the instance vectors' moments


def _cached(cache_dir, prefix, digest, compute):
    """Reads `SenseEmbeddings` from `cache_dir/prefix_digest.npz`, or computes and saves them."""
    if cache_dir is None:
        return compute()
    path = Path(cache_dir).expanduser() / f"{prefix}_{digest[:24]}.npz"
    if path.is_file():
        return SenseEmbeddings.load(path)
    result = compute()
    path.parent.mkdir(parents=True, exist_ok=True)
    result.save(path)
    return result


def _digest(encoder, tokenizer, *parts):
    digest = hashlib.sha256(model_fingerprint(encoder, tokenizer).encode())
    digest.update(json.dumps([_CACHE_FORMAT, *parts], default=str).encode())
    return digest.hexdigest()


def corpus_sense_embeddings(
    encoder,
    tokenizer,
    corpus,
    layers="last4_mean",
    subword_pooling="mean",
    batch_size=64,
    chunk_sentences=4096,
    inventory=None,
    cache_dir=None,
    progress=False,
    return_zscorer=False,
):
    """Averages an encoder's contextual vectors of each sense's occurrences in a tagged corpus.

    Every sentence that holds an instance runs through the encoder once (sentences without one
    are skipped), in order of length and in chunks of `chunk_sentences`, so memory stays at one
    chunk's word vectors. An instance with several gold keys counts toward each.

    With `return_zscorer`, it also returns a `kbert.analysis.ZScorer` holding the mean and
    standard deviation of every dimension over all instance vectors (one row per instance).
    Z-scoring is affine, so `zscorer.transform(senses.matrix)` equals averaging the z-scored
    occurrences: the sense embeddings of J&M §11.3.2's standardized space, where a few rogue
    dimensions no longer dominate the cosine.

    Args:
        encoder: `kbert.models.Encoder` (any model with its dict inputs and `hidden_states`).
        tokenizer: `kbert.text.WordPieceTokenizer`.
        corpus: `kbert.data.raganato.WsdCorpus` (e.g. `kbert.data.semcor.read_semcor(...)`).
        layers: default "last4_mean". See `kbert.analysis.contextual_embeddings`.
        subword_pooling: "first", "mean" (default) or "last".
        batch_size: int, default 64. Sentences per forward pass.
        chunk_sentences: int, default 4096. Sentences embedded per call.
        inventory: `kbert.data.wordnet.WordNet`, default None. When given, keys it lacks are
            dropped (`SenseEmbeddings.fit(on_unknown="skip")`).
        cache_dir: str or Path, default None. Folder for the cached result.
        progress: bool, default False. Print one line per chunk.
        return_zscorer: bool, default False. Also return the corpus's `ZScorer`.

    Returns:
        A `SenseEmbeddings` (`counts`: occurrences per sense); with `return_zscorer`,
        `(SenseEmbeddings, ZScorer)`.

    Raises:
        ValueError: a corpus without instances, or a bad option.

    Example:
    >>> semcor = read_semcor("../shared/data/semcor3.0")  # doctest: +SKIP
    >>> senses = corpus_sense_embeddings(encoder, tokenizer, semcor, cache_dir="cache")
    ... # doctest: +SKIP
    """
    check_positive_int("batch_size", batch_size)
    check_positive_int("chunk_sentences", chunk_sentences)
    if not corpus.instances:
        raise ValueError(f"corpus {corpus.name!r} has no instances; expected a sense-tagged corpus")
    by_sentence = {}
    for instance in corpus.instances:
        by_sentence.setdefault(instance.sentence_index, []).append(instance)
    used = sorted(by_sentence, key=lambda index: (len(corpus.sentences[index].words), index))
    digest = _digest(
        encoder,
        tokenizer,
        "corpus",
        layers,
        subword_pooling,
        [
            (
                corpus.sentences[index].words,
                [(i.word_index, i.gold_keys) for i in by_sentence[index]],
            )
            for index in used
        ],
    )

    def compute():
        vectors, keys = [], []
        for start in range(0, len(used), chunk_sentences):
            chunk = used[start : start + chunk_sentences]
            embeddings = contextual_embeddings(
                encoder,
                tokenizer,
                [corpus.sentences[index].words for index in chunk],
                layers=layers,
                subword_pooling=subword_pooling,
                batch_size=batch_size,
            )
            # Word units in (sentence, word) order: find each instance's row by that pair.
            units = embeddings.sentence_index.astype(np.int64) * (1 << 20) + embeddings.word_index
            wanted = [
                (local, instance)
                for local, index in enumerate(chunk)
                for instance in by_sentence[index]
            ]
            targets = np.asarray(
                [local * (1 << 20) + instance.word_index for local, instance in wanted],
                dtype=np.int64,
            )
            rows = np.minimum(np.searchsorted(units, targets), len(units) - 1)
            lost = np.flatnonzero(units[rows] != targets)
            if len(lost):
                instance = wanted[lost[0]][1]
                raise ValueError(
                    f"instance {instance.id!r} (word {instance.word_index} of "
                    f"sentence {corpus.sentences[instance.sentence_index].id!r}) "
                    "got no vector: expected every word to yield at least one "
                    "subword token"
                )
            vectors.append(embeddings.vectors[rows])
            keys.extend(instance.gold_keys for _, instance in wanted)
            if progress:
                print(
                    f"  {corpus.name}: {start + len(chunk):,} / {len(used):,} sentences", flush=True
                )
        vectors = np.concatenate(vectors)  # (instances, dim)
        senses = SenseEmbeddings.fit(
            vectors, keys, inventory=inventory, on_unknown="error" if inventory is None else "skip"
        )
        zscorer = ZScorer().fit(vectors)
        # The moments travel as two extra "senses" rows of the cache file.
        return SenseEmbeddings(
            senses.keys + (_MEAN, _STD),
            np.concatenate([senses.matrix, zscorer.mean[None], zscorer.std[None]]),
            np.concatenate([senses.counts, [0, 0]]),
        )

    stored = _cached(cache_dir, f"senses_{corpus.name}", digest, compute)
    senses = SenseEmbeddings(stored.keys[:-2], stored.matrix[:-2], stored.counts[:-2])
    if not return_zscorer:
        return senses
    zscorer = ZScorer()  # the statistics `ZScorer.fit` computed, as cached
    zscorer.mean, zscorer.std = (
        stored.matrix[-2].astype(np.float64),
        stored.matrix[-1].astype(np.float64),
    )
    return senses, zscorer


def gloss_text(wordnet, key):
    """The text LMMS embeds for a sense: its synset's lemmas (its own first), " - ", its gloss.

    Args:
        wordnet: `kbert.data.wordnet.WordNet`.
        key: str. A sense key.

    Returns:
        A str.

    Example:
    >>> gloss_text(load_wordnet(), "bank%1:17:01::")[:40]  # doctest: +SKIP
    'bank - sloping land (especially the slope'
    """
    own = wordnet.lemma_of(key)
    lemmas = [own] + [
        wordnet.lemma_of(other)
        for other in wordnet.synset_keys(wordnet.synset(key))
        if wordnet.lemma_of(other) != own
    ]
    names = ", ".join(dict.fromkeys(lemma.replace("_", " ") for lemma in lemmas))
    return f"{names} - {wordnet.gloss(key)}"


def gloss_sense_embeddings(
    encoder,
    tokenizer,
    wordnet,
    keys,
    layers="last4_mean",
    batch_size=64,
    cache_dir=None,
    progress=False,
):
    """Embeds each sense's gloss: the mean of the subword vectors of `gloss_text(key)`.

    Args:
        encoder: `kbert.models.Encoder`.
        tokenizer: `kbert.text.WordPieceTokenizer`.
        wordnet: `kbert.data.wordnet.WordNet`.
        keys: iterable of str. The senses to embed (e.g. every sense of the test lemmas).
        layers: default "last4_mean". See `kbert.analysis.contextual_embeddings`.
        batch_size: int, default 64.
        cache_dir: str or Path, default None. Folder for the cached result.
        progress: bool, default False. Show a progress bar.

    Returns:
        A `SenseEmbeddings` over `keys` (sorted; `counts` all 1).

    Raises:
        ValueError: no keys, or a key not in `wordnet`.

    Example:
    >>> glosses = gloss_sense_embeddings(encoder, tokenizer, load_wordnet(),
    ...                                  ["bank%1:17:01::", "bank%1:14:00::"])  # doctest: +SKIP
    """
    check_positive_int("batch_size", batch_size)
    keys = checked_sense_keys(keys, wordnet, "to embed")
    if not keys:
        raise ValueError("keys is empty; expected at least one sense key to embed")
    texts = [gloss_text(wordnet, key) for key in keys]
    digest = _digest(encoder, tokenizer, "gloss", layers, texts)

    def compute():
        order = sorted(range(len(texts)), key=lambda i: (len(texts[i]), i))
        embeddings = contextual_embeddings(
            encoder,
            tokenizer,
            [texts[i] for i in order],
            layers=layers,
            level="subword",
            batch_size=batch_size,
            progress=progress,
        )
        offsets = embeddings.sentence_offsets
        sums = np.add.reduceat(embeddings.vectors.astype(np.float64), offsets[:-1], axis=0)
        means = sums / np.diff(offsets)[:, None]  # (glosses in `order`, dim)
        matrix = np.empty_like(means)
        matrix[order] = means
        return SenseEmbeddings(keys, matrix, np.ones(len(keys), dtype=np.int64))

    return _cached(cache_dir, "glosses", digest, compute)
