"""Slicing functions a student can read: which questions belong to which slice.

A slice is a named subset of the data picked by a plain rule over the text (Chen et al. 2019,
"Slice-based Learning", NeurIPS 2019, call such rules slicing functions). The rules here are for
short questions such as TREC's: the question word, the length in words, negation, a number, a
"how many / how much" question, a capitalised word after the first (a name).
"""

import re

import numpy as np

from kbert.checks import check_int

QUESTION_WORDS = ("what", "who", "how", "where", "when", "which", "why")
NEGATIONS = ("not", "n't", "never", "no", "nor", "none", "nothing", "nobody")
_WORD = re.compile(r"n't|[A-Za-z0-9]+(?:['.-][A-Za-z0-9]+)*")


def _words(text):
    return _WORD.findall(re.sub(r"(?i)n't\b", " n't", text))  # "wasn't" → "was", "n't"


def data_slices(texts, short_words=6, long_words=15):
    """Each slice's membership over `texts`, by readable rules on the words of each text.

    Words are runs of letters and digits ("n't" is its own word). The slices, which overlap
    (except the question-word family, which covers every text once):

    - `question:<word>` for each of `QUESTION_WORDS` when the text's first word is that word
      (case-insensitive), and `question:other` when it is none of them ("Name a ...");
    - `length:short` (at most `short_words` words) and `length:long` (at least `long_words`);
    - `negation`: a word of `NEGATIONS`;
    - `number`: a word with a digit;
    - `how_many_much`: "how many" or "how much" anywhere;
    - `capitalised`: a word after the first that starts with a capital letter (a name, a title).

    Args:
        texts: list of str.
        short_words: int >= 1, default 6. The longest text that is `length:short`.
        long_words: int, default 15. The shortest text that is `length:long`; above
            `short_words`.

    Returns:
        dict: slice name → bool array `(len(texts),)`, in the order listed above.

    Example:
    >>> slices = data_slices(["Why don't cats swim ?", "What is DNA ?"])
    >>> slices["question:why"].tolist(), slices["negation"].tolist()
    ([True, False], [True, False])
    """
    if isinstance(texts, str):
        raise ValueError("texts must be a list of str, not one str; wrap it in a list")
    texts = list(texts)
    short_words = check_int("short_words", short_words, minimum=1)
    long_words = check_int("long_words", long_words, minimum=short_words + 1)
    words = [_words(text) for text in texts]
    lower = [[word.lower() for word in text] for text in words]
    first = [text[0] if text else "" for text in lower]
    slices = {f"question:{word}": [start == word for start in first] for word in QUESTION_WORDS}
    slices["question:other"] = [start not in QUESTION_WORDS for start in first]
    slices["length:short"] = [len(text) <= short_words for text in words]
    slices["length:long"] = [len(text) >= long_words for text in words]
    slices["negation"] = [any(word in NEGATIONS for word in text) for text in lower]
    slices["number"] = [any(any(c.isdigit() for c in word) for word in text) for text in words]
    slices["how_many_much"] = [
        any(
            pair in (("how", "many"), ("how", "much")) for pair in zip(text, text[1:], strict=False)
        )
        for text in lower
    ]
    slices["capitalised"] = [any(word[:1].isupper() for word in text[1:]) for text in words]
    return {name: np.asarray(members, dtype=bool) for name, members in slices.items()}
