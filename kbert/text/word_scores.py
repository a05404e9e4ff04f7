"""Per-token scores read back per word, from the windows of `kbert.data.token_classification_features`.

A word's prediction is read from the one window that owns it (the one giving it the most
context on both sides), at its first subword (J&M §11.4.3) or averaged over its subwords. This
sits beside the tokenizers, below `kbert.models` and `kbert.data`, so a tagger can read its own
predictions back without the task model importing the data readers.
"""

import numpy as np


def word_scores(features, token_scores, num_sentences, combine="first"):
    """Reads per-token scores back per word, from each word's owning window.

    Args:
        features: the dict of `token_classification_features`.
        token_scores: numpy array (rows, columns, num_tags): probabilities (or any per-token
            scores); `columns` may be fewer than the feature rows' length (trimmed batches).
        num_sentences: int, the number of sentences featurized.
        combine: str, default "first". "first": the word's first subword (J&M); "mean": the
            average of its subwords' distributions.

    Returns:
        A list (one per sentence) of numpy arrays (words, num_tags).
    """
    if combine not in ("first", "mean"):
        raise ValueError(f"combine must be 'first' or 'mean'; received {combine!r}")
    token_scores = np.asarray(token_scores)
    if token_scores.ndim != 3 or len(token_scores) != len(features["sentence_index"]):
        raise ValueError(
            f"token_scores must be (rows={len(features['sentence_index'])}, columns, "
            f"tags); received shape {token_scores.shape}"
        )
    columns = token_scores.shape[1]
    pick = features["first_subword"] if combine == "first" else features["owned"]
    pick = pick[:, :columns]
    if pick.sum() != features[("first_subword" if combine == "first" else "owned")].sum():
        raise ValueError(f"token_scores has {columns} columns, fewer than the rows' tokens")
    num_words = np.zeros(num_sentences, dtype=np.int64)
    rows, positions = np.nonzero(pick)
    sentences = features["sentence_index"][rows]
    words = features["word_index"][:, :columns][rows, positions]
    np.maximum.at(num_words, sentences, words + 1)
    totals = [np.zeros((n, token_scores.shape[2])) for n in num_words]
    counts = [np.zeros(n) for n in num_words]
    for sentence, word, score in zip(sentences, words, token_scores[rows, positions], strict=False):
        totals[sentence][word] += score
        counts[sentence][word] += 1
    return [
        total / np.maximum(count, 1)[:, None] for total, count in zip(totals, counts, strict=False)
    ]
