"""Candidate spans for span-based NER (J&M §11.5.2), on top of token-classification rows.

Every span of 1 to `max_span_length` whole words is a candidate; its label is the entity type
when a gold entity has exactly those words, else NULL (id 0). A span belongs to the row that owns
its first word (see `token_classification_features`), so each candidate is scored once; a span
must end inside that row's window, which the windows' overlap makes true for any entity shorter
than the overlap.
"""

import numpy as np

from kbert.checks import check_positive_int
from kbert.data.token_classification_features import IGNORE_INDEX

NULL_TYPE = "NULL"


def span_features(features, max_span_length=8, entities=None, type_names=None):
    """Adds candidate spans (and their labels) to token-classification features.

    Args:
        features: dict from `kbert.data.token_classification_features`.
        max_span_length: int, default 8. Longest candidate, in words.
        entities: list (one per sentence) of collections of `(start_word, end_word, type)`,
            end exclusive, default None (prediction only). Nested entities are fine.
        type_names: sequence of str, the entity types (without NULL); needed with `entities`.
            Label ids are 0 for NULL and 1 + the index in `type_names`.

    Returns:
        A new dict: the input arrays plus `span_starts`, `span_ends` (rows, spans) int32 token
        positions (end inclusive; 0 in padding), `span_mask` (rows, spans) int32,
        `span_word_starts`, `span_word_ends` (rows, spans) int32 word range (end exclusive; -1 in
        padding), and with `entities` also `span_labels` (rows, spans) int32 (`IGNORE_INDEX` in
        padding).

    Example:
    >>> features = {"word_index": np.array([[-1, 0, 1, 1, -1]]),
    ...             "first_subword": np.array([[0, 1, 1, 0, 0]]),
    ...             "sentence_index": np.array([0])}
    >>> spans = span_features(features, max_span_length=2, entities=[{(1, 2, "PER")}],
    ...                       type_names=["PER"])
    >>> spans["span_starts"][0].tolist(), spans["span_ends"][0].tolist()
    ([1, 1, 2], [1, 3, 3])
    >>> spans["span_labels"][0].tolist()
    [0, 0, 1]
    """
    max_span_length = check_positive_int("max_span_length", max_span_length)
    type_ids = None
    if entities is not None:
        if type_names is None:
            raise ValueError("type_names is required with entities")
        type_ids = {name: i + 1 for i, name in enumerate(type_names)}
        num_sentences = int(features["sentence_index"].max()) + 1
        if len(entities) < num_sentences:
            raise ValueError(
                f"entities must have one collection per sentence: features cover "
                f"{num_sentences} sentences, received {len(entities)}"
            )
        gold = []
        for index, sentence in enumerate(entities):
            labelled = {}
            for start, end, kind in sentence:
                if kind not in type_ids:
                    raise ValueError(
                        f"sentence {index}: entity type {kind!r} is not in {list(type_names)}"
                    )
                labelled[(start, end)] = type_ids[kind]
            gold.append(labelled)

    # Where each word's subwords sit in each row, and which words each row owns.
    first, last, owned = [], [], []
    for row, words in enumerate(features["word_index"]):
        starts, ends = {}, {}
        for position in np.nonzero(words >= 0)[0]:
            word = int(words[position])
            starts.setdefault(word, int(position))
            ends[word] = int(position)
        first.append(starts)
        last.append(ends)
        owned.append(sorted({int(words[p]) for p in np.nonzero(features["first_subword"][row])[0]}))
    rows_of_sentence = {}
    for row, sentence in enumerate(features["sentence_index"]):
        rows_of_sentence.setdefault(int(sentence), []).append(row)

    rows = [[] for _ in first]
    for row in range(len(first)):
        sentence = int(features["sentence_index"][row])
        for start in owned[row]:
            for end in range(start, start + max_span_length):
                # The row owning the first word, or else a row of the sentence holding the
                # whole span: each span is scored exactly once, wherever it fits.
                home = (
                    row
                    if end in last[row]
                    else next(
                        (
                            other
                            for other in rows_of_sentence[sentence]
                            if start in first[other] and end in last[other]
                        ),
                        None,
                    )
                )
                if home is None:
                    break
                label = 0
                if type_ids is not None:
                    label = gold[sentence].get((start, end + 1), 0)
                rows[home].append((first[home][start], last[home][end], start, end + 1, label))

    width = max(1, max(len(spans) for spans in rows))
    shape = (len(rows), width)
    out = {
        "span_starts": np.zeros(shape, np.int32),
        "span_ends": np.zeros(shape, np.int32),
        "span_mask": np.zeros(shape, np.int32),
        "span_word_starts": np.full(shape, -1, np.int32),
        "span_word_ends": np.full(shape, -1, np.int32),
    }
    labels = np.full(shape, IGNORE_INDEX, np.int32)
    for row, spans in enumerate(rows):
        if not spans:
            continue
        values = np.array(spans, dtype=np.int32)
        count = len(spans)
        out["span_starts"][row, :count] = values[:, 0]
        out["span_ends"][row, :count] = values[:, 1]
        out["span_word_starts"][row, :count] = values[:, 2]
        out["span_word_ends"][row, :count] = values[:, 3]
        out["span_mask"][row, :count] = 1
        labels[row, :count] = values[:, 4]
    result = dict(features)
    result.update(out)
    if type_ids is not None:
        result["span_labels"] = labels
    return result


def decode_spans(features, probabilities, num_sentences, type_names, nested=False):
    """Entities from span-type probabilities.

    Args:
        features: dict from `span_features`.
        probabilities: numpy (rows, spans', 1 + types) with spans' <= the features' spans
            (trimmed batches).
        num_sentences: int.
        type_names: sequence of str (without NULL), as in `span_features`.
        nested: bool, default False. True keeps every span whose best label is an entity type
            (nested entities survive); False decodes flat entities greedily: the most probable
            span first, then every span that does not overlap one already kept.

    Returns:
        A list (one per sentence) of sets of `(start_word, end_word, type)`, end exclusive.
    """
    probabilities = np.asarray(probabilities)
    columns = probabilities.shape[1]
    best = probabilities.argmax(axis=-1)
    confidence = probabilities.max(axis=-1)
    mask = features["span_mask"][:, :columns].astype(bool) & (best > 0)
    candidates = [[] for _ in range(num_sentences)]
    for row, span in zip(*np.nonzero(mask), strict=False):
        sentence = int(features["sentence_index"][row])
        candidates[sentence].append(
            (
                float(confidence[row, span]),
                int(features["span_word_starts"][row, span]),
                int(features["span_word_ends"][row, span]),
                type_names[int(best[row, span]) - 1],
            )
        )
    results = []
    for sentence in candidates:
        if nested:
            results.append({(start, end, kind) for _, start, end, kind in sentence})
            continue
        kept, taken = set(), set()
        for _, start, end, kind in sorted(sentence, key=lambda c: (-c[0], c[1], c[2])):
            if taken.isdisjoint(range(start, end)):
                kept.add((start, end, kind))
                taken.update(range(start, end))
        results.append(kept)
    return results
