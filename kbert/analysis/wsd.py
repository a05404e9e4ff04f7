"""Word-sense disambiguation with sense embeddings: the nearest-sense algorithm of J&M §11.3.1.

Training: average the contextual embeddings of the words tagged with each sense, giving one
vector per sense key (`SenseEmbeddings.fit`). Testing: embed the target word in its context and
choose, among its WordNet senses that have a vector, the one with the highest cosine
(`NearestSenseWSD`); a word none of whose senses was seen in training gets WordNet's first
sense, the most-frequent-sense (MFS) baseline of `mfs_predictions`.

Full coverage (Loureiro & Jorge 2019, "LMMS"): `propagate_sense_embeddings` gives every sense an
embedding from its WordNet neighbours' (its synset, then its hypernyms, then its lexicographer
class), and `concatenate_sense_embeddings` joins those with gloss embeddings, so that no test
word falls back to MFS.

Numpy only: the embeddings arrive as arrays, computed elsewhere (e.g. by an encoder; see
`kbert.analysis.sense_training`).
"""

import dataclasses

import numpy as np

from kbert.files import atomic_path

PREDICTION_SOURCES = ("nearest", "mfs", "unknown_lemma")
# Where a propagated sense embedding came from, most specific first.
COVERAGE_SOURCES = ("corpus", "synset", "hypernym", "lexname")
_ON_UNKNOWN = ("error", "skip")


def _checked_vectors(vectors, name="vectors"):
    try:
        array = np.asarray(vectors, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"{name} must be a 2-D array of numbers (rows x dimensions); "
            f"received {type(vectors).__name__}"
        ) from None
    if array.ndim != 2:
        raise ValueError(
            f"{name} must be a 2-D array (rows x dimensions); received shape {array.shape}"
        )
    if not np.all(np.isfinite(array)):
        row = int(np.argwhere(~np.isfinite(array))[0, 0])
        raise ValueError(f"{name} must be finite; row {row} has NaN or infinite entries")
    return array


@dataclasses.dataclass(frozen=True)
class WsdPrediction:
    """One disambiguation decision and how it was reached.

    Args:
        key: str or None. The chosen WordNet sense key; None when the lemma is unknown.
        source: str. "nearest" (the closest sense embedding), "mfs" (no candidate sense has an
            embedding: WordNet's first sense) or "unknown_lemma" (WordNet has no sense for the
            lemma and POS: unanswered).

    Example:
    >>> WsdPrediction("bank%1:17:01::", "nearest").key
    'bank%1:17:01::'
    """

    key: str | None
    source: str


class SenseEmbeddings:
    """One vector per WordNet sense key: the mean of its training occurrences' embeddings.

    Build it with `SenseEmbeddings.fit`, or from saved arrays with `SenseEmbeddings.load`.

    Args:
        keys: sequence of str, unique. The sense keys, one per row of `matrix`.
        matrix: array of shape (senses, dimensions).
        counts: array of shape (senses,). How many training rows each vector averages.

    Raises:
        ValueError: mismatched lengths, duplicate keys or a matrix that is not 2-D.

    Example:
    >>> senses = SenseEmbeddings.fit([[1.0, 0.0], [3.0, 0.0], [0.0, 1.0]],
    ...                              [("bank%1:17:01::",), ("bank%1:17:01::",),
    ...                               ("bank%1:14:00::",)])
    >>> senses.keys, senses.vector("bank%1:17:01::").tolist(), senses.counts.tolist()
    (('bank%1:14:00::', 'bank%1:17:01::'), [2.0, 0.0], [1, 2])
    """

    def __init__(self, keys, matrix, counts):
        self.keys = tuple(str(key) for key in keys)
        self.matrix = np.asarray(matrix, dtype=np.float32)  # (senses, dimensions)
        self.counts = np.asarray(counts, dtype=np.int64)  # (senses,)
        if self.matrix.ndim != 2:
            raise ValueError(
                f"matrix must be 2-D (senses x dimensions); received shape {self.matrix.shape}"
            )
        if (
            not len(self.keys) == self.matrix.shape[0] == self.counts.shape[0]
            or self.counts.ndim != 1
        ):
            raise ValueError(
                f"keys, matrix rows and counts must match: expected one row and one "
                f"count per key; received {len(self.keys)} keys, matrix shape "
                f"{self.matrix.shape}, counts shape {self.counts.shape}"
            )
        self._index = {key: row for row, key in enumerate(self.keys)}
        if len(self._index) != len(self.keys):
            raise ValueError("keys must be unique; received a repeated sense key")

    @classmethod
    def fit(cls, vectors, sense_keys, inventory=None, on_unknown="error"):
        """Averages the embeddings of each sense's occurrences.

        An occurrence with several gold keys (the corpora allow any one of them) counts toward
        each of its keys.

        Args:
            vectors: array of shape (occurrences, dimensions). One contextual embedding per
                sense-tagged word.
            sense_keys: sequence of tuples of str, one per row of `vectors` (a single str is
                read as a one-key tuple).
            inventory: `WordNet` or any container of keys, default None. When given, every key
                must be in it.
            on_unknown: str, default "error". What to do with keys not in `inventory`: "error"
                raises, "skip" drops them (a row left with no key then adds nothing).

        Returns:
            A `SenseEmbeddings`, its keys sorted.

        Raises:
            ValueError: `vectors` not a finite 2-D array, a row count that differs from
                `len(sense_keys)`, a row with no key, an unknown `on_unknown`, or with
                `on_unknown="error"`, keys not in `inventory` (the count and up to 5 named).

        Example:
        >>> SenseEmbeddings.fit([[0.0, 2.0]], [("bank%1:14:00::",)]).matrix.tolist()
        [[0.0, 2.0]]
        """
        if on_unknown not in _ON_UNKNOWN:
            raise ValueError(f"on_unknown must be one of {_ON_UNKNOWN}; received {on_unknown!r}")
        vectors = _checked_vectors(vectors)
        if len(sense_keys) != vectors.shape[0]:
            raise ValueError(
                f"sense_keys must have one entry per row of vectors: expected "
                f"{vectors.shape[0]}; received {len(sense_keys)}"
            )
        rows = []
        for row, keys in enumerate(sense_keys):
            keys = (keys,) if isinstance(keys, str) else tuple(keys)
            if not keys:
                raise ValueError(
                    f"sense_keys[{row}] is empty; expected at least one sense key per row"
                )
            rows.append(keys)
        if inventory is not None:
            unknown = sorted({key for keys in rows for key in keys if key not in inventory})
            if unknown and on_unknown == "error":
                raise ValueError(
                    f"{len(unknown)} sense key(s) are not in the inventory, e.g. "
                    f"{unknown[:5]}; expected WordNet sense keys (or pass "
                    "on_unknown='skip' to drop them)"
                )
            unknown = set(unknown)
            rows = [tuple(key for key in keys if key not in unknown) for keys in rows]
        keys = sorted({key for keys in rows for key in keys})
        index = {key: position for position, key in enumerate(keys)}
        row_ids = [row for row, row_keys in enumerate(rows) for _ in row_keys]
        sense_ids = [index[key] for row_keys in rows for key in row_keys]
        sums = np.zeros((len(keys), vectors.shape[1]))  # (senses, dimensions)
        np.add.at(
            sums,
            np.asarray(sense_ids, dtype=np.int64),
            vectors[np.asarray(row_ids, dtype=np.int64)],
        )
        counts = np.bincount(np.asarray(sense_ids, dtype=np.int64), minlength=len(keys))
        return cls(keys, sums / np.maximum(counts, 1)[:, None], counts)

    def __len__(self):
        return len(self.keys)

    def __contains__(self, key):
        return key in self._index

    def __repr__(self):
        return f"SenseEmbeddings({len(self)} senses, dimension {self.matrix.shape[1]})"

    def row(self, key):
        """Returns the index of a sense's row in `matrix` and `counts`.

        Raises:
            ValueError: a key with no vector.
        """
        if key not in self._index:
            raise ValueError(
                f"sense key {key!r} has no embedding; expected one of the {len(self)} fitted keys"
            )
        return self._index[key]

    def vector(self, key):
        """Returns a sense's vector, shape (dimensions,).

        Raises:
            ValueError: a key with no vector.
        """
        return self.matrix[self.row(key)]

    def save(self, path):
        """Writes keys, matrix and counts to a `.npz` file, atomically.

        The arrays go to a temporary file in the same folder, then replace `path` in one step,
        so an interrupted save never leaves a half-written file behind.

        Args:
            path: str or Path. The file, written exactly there (no suffix is added).

        Example:
        >>> SenseEmbeddings.fit([[1.0]], ["a%1:00:00::"]).save("/tmp/senses.npz")  # doctest: +SKIP
        """
        with atomic_path(path) as temporary, open(temporary, "xb") as file:
            np.savez(
                file,
                keys=np.asarray(self.keys, dtype=str).reshape(-1),
                matrix=self.matrix,
                counts=self.counts,
            )

    @classmethod
    def load(cls, path):
        """Reads a file written by `save`.

        Args:
            path: str or Path.

        Returns:
            A `SenseEmbeddings`.

        Raises:
            ValueError: a file without the arrays "keys", "matrix" and "counts".

        Example:
        >>> senses = SenseEmbeddings.load("/tmp/senses.npz")  # doctest: +SKIP
        """
        with np.load(path, allow_pickle=False) as arrays:
            missing = [name for name in ("keys", "matrix", "counts") if name not in arrays]
            if missing:
                raise ValueError(
                    f"{path}: expected the arrays 'keys', 'matrix' and 'counts' "
                    f"written by SenseEmbeddings.save; missing {missing}"
                )
            return cls(arrays["keys"].tolist(), arrays["matrix"], arrays["counts"])


class NearestSenseWSD:
    """Chooses the sense whose embedding is nearest (cosine) to the word's, among its senses.

    For each word: its candidates are WordNet's senses of (lemma, pos); among those with an
    embedding the highest cosine wins ("nearest"; ties go to the lower sense number). With
    candidates but none embedded, WordNet's first sense ("mfs"); with no candidates, no answer
    ("unknown_lemma", key None), which the scorer counts as unanswered.

    Args:
        sense_embeddings: `SenseEmbeddings`.
        wordnet: `kbert.data.wordnet.WordNet` (anything with `senses(lemma, pos)`).

    Example:
    >>> wsd = NearestSenseWSD(senses, load_wordnet())  # doctest: +SKIP
    >>> wsd.predict(vectors, ["bank"], ["NOUN"])  # doctest: +SKIP
    [WsdPrediction(key='bank%1:17:01::', source='nearest')]
    """

    def __init__(self, sense_embeddings, wordnet):
        self.sense_embeddings = sense_embeddings
        self.wordnet = wordnet
        matrix = sense_embeddings.matrix.astype(np.float64)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)  # (senses, 1)
        # A zero vector has cosine 0 with everything rather than NaN.
        self._unit = matrix / np.maximum(norms, 1e-12)  # (senses, dimensions)
        self._index = {key: row for row, key in enumerate(sense_embeddings.keys)}

    def predict(self, vectors, lemmas, pos):
        """Disambiguates words from their contextual embeddings.

        Args:
            vectors: array of shape (words, dimensions), the same dimension as the sense
                embeddings.
            lemmas: sequence of str, one per row.
            pos: sequence of str, one per row ("NOUN", "VERB", "ADJ", "ADV" or n/v/a/r), or
                one str for every row.

        Returns:
            A list of `WsdPrediction`, one per row.

        Raises:
            ValueError: `vectors` not a finite 2-D array of the sense embeddings' dimension,
                `lemmas` or `pos` of another length than the rows, or an unknown POS.

        Example:
        >>> [p.source for p in wsd.predict(vectors, lemmas, pos)]  # doctest: +SKIP
        ['nearest', 'mfs', 'unknown_lemma']
        """
        vectors = _checked_vectors(vectors)
        dimension = self._unit.shape[1]
        if vectors.shape[1] != dimension:
            raise ValueError(
                f"vectors must have the sense embeddings' dimension {dimension}; "
                f"received shape {vectors.shape}"
            )
        pos = [pos] * len(vectors) if isinstance(pos, str) else list(pos)
        if not len(lemmas) == len(pos) == len(vectors):
            raise ValueError(
                f"lemmas and pos must have one entry per row of vectors: expected "
                f"{len(vectors)}; received {len(lemmas)} lemmas and {len(pos)} pos"
            )
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)  # (words, 1)
        units = vectors / np.maximum(norms, 1e-12)  # (words, dimensions)
        predictions = []
        for unit, lemma, tag in zip(units, lemmas, pos, strict=True):
            candidates = self.wordnet.senses(lemma, tag)
            embedded = [key for key in candidates if key in self._index]
            if embedded:
                cosines = self._unit[[self._index[key] for key in embedded]] @ unit  # (embedded,)
                predictions.append(WsdPrediction(embedded[int(np.argmax(cosines))], "nearest"))
            elif candidates:
                predictions.append(WsdPrediction(candidates[0], "mfs"))
            else:
                predictions.append(WsdPrediction(None, "unknown_lemma"))
        return predictions


def unit_rows(vectors):
    """Returns `vectors` with each row scaled to unit length (zero rows stay zero).

    Example:
    >>> unit_rows([[3.0, 4.0], [0.0, 0.0]]).tolist()
    [[0.6, 0.8], [0.0, 0.0]]
    """
    vectors = _checked_vectors(vectors)
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


def checked_sense_keys(keys, wordnet, purpose):
    """Returns `keys` sorted without repeats, or raises ValueError naming those not in `wordnet`.

    Example:
    >>> checked_sense_keys(["b%1:00:00::", "a%1:00:00::", "b%1:00:00::"], {"a%1:00:00::",
    ...                    "b%1:00:00::"}, "to embed")
    ['a%1:00:00::', 'b%1:00:00::']
    """
    keys = sorted(dict.fromkeys(keys))
    unknown = [key for key in keys if key not in wordnet]
    if unknown:
        raise ValueError(
            f"{len(unknown)} key(s) {purpose} are not in the WordNet, e.g. "
            f"{unknown[:5]}; expected WordNet sense keys"
        )
    return keys


def propagate_sense_embeddings(sense_embeddings, wordnet, keys):
    """Gives every sense in `keys` an embedding, from its WordNet neighbours when it has none.

    LMMS's propagation (Loureiro & Jorge 2019, §3.2), most specific source first:

    1. "corpus": the sense's own embedding (from a sense-tagged corpus such as SemCor);
    2. "synset": the mean of the embedded senses of its synset (its synonyms);
    3. "hypernym": the mean of the synset embeddings of its direct hypernyms (`@`, `@i`); when
       none of them has one, the next level up, and so on to the root;
    4. "lexname": the mean of every embedded sense in its lexicographer class
       ("noun.artifact", "verb.motion", ...; 45 classes).

    A sense whose lexicographer class has no embedded sense at all gets none (and is left out).

    Args:
        sense_embeddings: `SenseEmbeddings` (e.g. from `SenseEmbeddings.fit` on SemCor).
        wordnet: `kbert.data.wordnet.WordNet` (anything with `synset`, `synset_keys`,
            `hypernyms` and `lexname`).
        keys: iterable of str. The senses to cover, e.g. every WordNet sense of the test
            lemmas; each must be a key of `wordnet`.

    Returns:
        `(SenseEmbeddings, sources)`: the embeddings of the covered keys (sorted; `counts` holds
        the number of corpus vectors behind each), and `{key: source}` with a source from
        `COVERAGE_SOURCES`.

    Raises:
        ValueError: a key that is not in `wordnet`.

    Example:
    >>> full, sources = propagate_sense_embeddings(senses, load_wordnet(), keys)  # doctest: +SKIP
    >>> Counter(sources.values())  # doctest: +SKIP
    Counter({'lexname': 9120, 'corpus': 7340, 'hypernym': 5311, 'synset': 611})
    """
    keys = checked_sense_keys(keys, wordnet, "to cover")
    matrix = sense_embeddings.matrix.astype(np.float64)
    index = {key: row for row, key in enumerate(sense_embeddings.keys) if key in wordnet}
    # Synset and lexname means over every embedded sense (not only the keys to cover).
    synset_rows, lexname_rows = {}, {}
    for key, row in index.items():
        synset = wordnet.synset(key)
        synset_rows.setdefault(synset, []).append(row)
        lexname_rows.setdefault(wordnet.lexname(synset), []).append(row)
    synset_vectors = {synset: matrix[rows].mean(axis=0) for synset, rows in synset_rows.items()}
    lexname_vectors = {name: matrix[rows].mean(axis=0) for name, rows in lexname_rows.items()}
    hypernym_vectors = {}  # synset -> vector or None, memoized over the walk up

    def hypernym_vector(synset):
        if synset not in hypernym_vectors:
            level, seen = list(wordnet.hypernyms(synset)), set()
            vector = None
            while level and vector is None:
                found = [synset_vectors[s] for s in level if s in synset_vectors]
                if found:
                    vector = np.mean(found, axis=0)
                seen.update(level)
                # Each synset of the next level once, however many paths lead to it.
                level = list(
                    dict.fromkeys(
                        up for s in level for up in wordnet.hypernyms(s) if up not in seen
                    )
                )
            hypernym_vectors[synset] = vector
        return hypernym_vectors[synset]

    covered, vectors, counts, sources = [], [], [], {}
    for key in keys:
        synset = wordnet.synset(key)
        if key in index:
            vector, source = matrix[index[key]], "corpus"
        elif synset in synset_vectors:
            vector, source = synset_vectors[synset], "synset"
        elif (vector := hypernym_vector(synset)) is not None:
            source = "hypernym"
        elif wordnet.lexname(synset) in lexname_vectors:
            vector, source = lexname_vectors[wordnet.lexname(synset)], "lexname"
        else:
            continue
        covered.append(key)
        vectors.append(vector)
        counts.append(int(sense_embeddings.counts[index[key]]) if key in index else 0)
        sources[key] = source
    dimension = matrix.shape[1]
    return (SenseEmbeddings(covered, np.asarray(vectors).reshape(-1, dimension), counts), sources)


def fill_sense_embeddings(primary, fallback):
    """Embeddings of every key of either input: `primary`'s vector where it has one, else
    `fallback`'s (e.g. SemCor vectors, and gloss vectors for the senses SemCor never tags).

    Args:
        primary: `SenseEmbeddings`.
        fallback: `SenseEmbeddings` of the same dimension.

    Returns:
        `(SenseEmbeddings, sources)`: keys sorted, `counts` from whichever input gave the row;
        `sources` maps each key to "primary" or "fallback".

    Raises:
        ValueError: the two have different dimensions.

    Example:
    >>> a = SenseEmbeddings(["x%1:00:00::"], [[1.0, 0.0]], [3])
    >>> b = SenseEmbeddings(["x%1:00:00::", "y%1:00:00::"], [[0.0, 1.0], [1.0, 1.0]], [1, 1])
    >>> filled, sources = fill_sense_embeddings(a, b)
    >>> filled.matrix.tolist(), sources
    ([[1.0, 0.0], [1.0, 1.0]], {'x%1:00:00::': 'primary', 'y%1:00:00::': 'fallback'})
    """
    if primary.matrix.shape[1] != fallback.matrix.shape[1]:
        raise ValueError(
            f"primary and fallback must have the same dimension; received "
            f"{primary.matrix.shape[1]} and {fallback.matrix.shape[1]}"
        )
    keys = sorted(set(primary.keys) | set(fallback.keys))
    rows, counts, sources = [], [], {}
    for key in keys:
        source = primary if key in primary else fallback
        sources[key] = "primary" if source is primary else "fallback"
        rows.append(source.matrix[source.row(key)])
        counts.append(source.counts[source.row(key)])
    return SenseEmbeddings(keys, np.asarray(rows), counts), sources


def concatenate_sense_embeddings(*sense_embeddings, weights=None):
    """Joins several embeddings of the same senses: each row unit-normalised, then concatenated.

    LMMS-2048's sense vector is `[unit(contextual); unit(gloss)]`; a test word then queries with
    its contextual vector repeated (`np.concatenate([unit_rows(v), unit_rows(v)], axis=1)`), so
    its cosine is the mean of its cosines with the two parts. With `weights`, part `i` is scaled
    by `weights[i]`, and the nearest sense maximises `Σ weights[i] · cos(v, part_i)` (every sense
    vector has the same norm, so the ranking is that of the weighted sum).

    Args:
        *sense_embeddings: two or more `SenseEmbeddings`.
        weights: sequence of positive floats, one per input, default None (all 1).

    Returns:
        A `SenseEmbeddings` over the keys present in all of them (sorted); `counts` from the
        first.

    Raises:
        ValueError: fewer than two inputs, or no key common to all.

    Example:
    >>> a = SenseEmbeddings(["x%1:00:00::"], [[3.0, 4.0]], [2])
    >>> b = SenseEmbeddings(["x%1:00:00::"], [[0.0, 2.0]], [0])
    >>> concatenate_sense_embeddings(a, b).matrix.tolist()
    [[0.6000000238418579, 0.800000011920929, 0.0, 1.0]]
    """
    if len(sense_embeddings) < 2:
        raise ValueError(
            f"expected at least two SenseEmbeddings to concatenate; received "
            f"{len(sense_embeddings)}"
        )
    weights = [1.0] * len(sense_embeddings) if weights is None else list(weights)
    if len(weights) != len(sense_embeddings) or not all(
        isinstance(w, (int, float)) and not isinstance(w, bool) and w > 0 for w in weights
    ):
        raise ValueError(
            f"weights must be {len(sense_embeddings)} positive numbers, one per "
            f"input; received {weights!r}"
        )
    common = set(sense_embeddings[0].keys)
    for embeddings in sense_embeddings[1:]:
        common &= set(embeddings.keys)
    if not common:
        raise ValueError(
            "the SenseEmbeddings share no sense key; expected embeddings of the same senses"
        )
    keys = sorted(common)
    parts = []
    for embeddings, weight in zip(sense_embeddings, weights, strict=True):
        rows = [embeddings.row(key) for key in keys]
        parts.append(weight * unit_rows(embeddings.matrix[rows]))
    first = sense_embeddings[0]
    return SenseEmbeddings(
        keys, np.concatenate(parts, axis=1), first.counts[[first.row(key) for key in keys]]
    )


def mfs_predictions(corpus, wordnet):
    """Returns the most-frequent-sense baseline: each instance's first WordNet sense.

    Args:
        corpus: `kbert.data.raganato.WsdCorpus` (anything with `.instances` holding `id`,
            `lemma` and `pos`).
        wordnet: `kbert.data.wordnet.WordNet`.

    Returns:
        A dict `{instance id: sense key}`; instances whose lemma WordNet does not have with
        that POS are left out (unanswered).

    Example:
    >>> corpus = load_wsd_set("ALL")  # doctest: +SKIP
    >>> wsd_scores(mfs_predictions(corpus, load_wordnet()), corpus.gold())["f1"]  # doctest: +SKIP
    """
    predictions = {}
    for instance in corpus.instances:
        key = wordnet.most_frequent_sense(instance.lemma, instance.pos)
        if key is not None:
            predictions[instance.id] = key
    return predictions
