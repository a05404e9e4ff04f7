"""Whitespace word counts, the denominator of word-level perplexity.

Subword models are compared on a corpus by word-level perplexity, which does not depend on the
vocabulary: `exp(total negative log-likelihood of all tokens / number of words)`, where words
are the whitespace-separated pieces of the raw text (the NAACL 2019 transfer-learning tutorial's
convention; on WikiText every punctuation mark and "@-@" is its own word, since the text is
pre-tokenized with spaces). The total must cover every token of the text once, e.g. blocks from
`causal_lm_blocks(..., last_block="pad")` with the padding left out of the sum.
"""

import math
import numbers


def count_whitespace_words(documents):
    """Counts the whitespace-separated words of each document.

    Args:
        documents: list of documents, each a str or a list of str (paragraphs or sentences), as
            the kbert corpus readers return them.

    Returns:
        list of int, one count per document.

    Example:
    >>> count_whitespace_words([["A cat sat .", "It slept ."], "Hi there"])
    [7, 2]
    """
    if isinstance(documents, str) or not isinstance(documents, (list, tuple)):
        raise ValueError(
            "documents must be a list of documents (each a str or a list of str); received "
            f"{type(documents).__name__}"
        )
    counts = []
    for index, document in enumerate(documents):
        texts = [document] if isinstance(document, str) else document
        if not isinstance(texts, (list, tuple)) or not all(isinstance(t, str) for t in texts):
            raise ValueError(
                f"documents[{index}] must be a str or a list of str; received "
                f"{type(document).__name__}"
            )
        counts.append(sum(len(text.split()) for text in texts))
    return counts


def word_level_perplexity(total_negative_log_likelihood, number_of_words):
    """Returns `exp(total_negative_log_likelihood / number_of_words)`.

    Args:
        total_negative_log_likelihood: float. Sum over all predicted tokens of -log p(token), in
            nats.
        number_of_words: int. Whitespace words of the same text, e.g.
            `sum(count_whitespace_words(documents))`.

    Returns:
        float.

    Example:
    >>> round(word_level_perplexity(2 * math.log(10.0), 2), 6)
    10.0
    """
    if (
        not isinstance(number_of_words, numbers.Integral)
        or isinstance(number_of_words, bool)
        or number_of_words < 1
    ):
        raise ValueError(f"number_of_words must be a positive int; received {number_of_words!r}")
    if not math.isfinite(total_negative_log_likelihood) or total_negative_log_likelihood < 0:
        raise ValueError(
            "total_negative_log_likelihood must be a finite sum of non-negative losses; received "
            f"{total_negative_log_likelihood!r}"
        )
    return math.exp(total_negative_log_likelihood / number_of_words)
