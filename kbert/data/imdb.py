"""IMDb movie reviews (Maas et al. 2011, aclImdb v1): 25,000 labeled reviews per split."""

import json
import random
import re

from kbert.data.data_dir import locate

_URL = "https://ai.stanford.edu/~amaas/data/sentiment/aclImdb_v1.tar.gz"
_REVIEW_FILE = re.compile(r"(\d+)_(\d+)\.txt")


def read_imdb(split="train", data_dir=None, max_examples=None):
    """Reads IMDb reviews and their labels (1 positive, rating 7-10; 0 negative, rating 1-4).

    The original reviews hold HTML line breaks (`<br /><br />`, in 14,665 of the 25,000 train
    reviews); each run of `<br />` tags, with the whitespace around it, is replaced by a single
    space, and the text is stripped. Nothing else in the text is changed.

    The local files (`<data_dir>/imdb/{train,test}.jsonl`) hold one JSON object per line,
    `{"text": str, "label": 0|1, "rating": int, "id": int}`, shuffled with a fixed seed so that
    any prefix is about label-balanced. Lines are split on "\\n" only: reviews contain U+0085,
    which `str.splitlines` would treat as a line break. Without a local copy, the Stanford
    archive is downloaded and `aclImdb/{split}/{pos,neg}/<id>_<rating>.txt` are read in the same
    order as the local file (sorted by (label, id), then `random.Random(0).shuffle`).

    Args:
        split: str, default "train". "train" or "test" (25,000 reviews each, 12,500 per label).
        data_dir: str or Path, default None (`KBERT_DATA_DIR`, then ../shared/data).
        max_examples: int, default None. Read only the first `max_examples` reviews.

    Returns:
        `(texts, labels)`: a list of str and a list of int.

    Example:
    >>> texts, labels = read_imdb("test", max_examples=100)  # doctest: +SKIP
    >>> len(texts), sum(labels)  # doctest: +SKIP
    (100, 53)
    """
    if split not in ("train", "test"):
        raise ValueError(f"IMDb split must be 'train' or 'test'; received {split!r}")
    if max_examples is not None and (
        isinstance(max_examples, bool) or not isinstance(max_examples, int) or max_examples < 1
    ):
        raise ValueError(f"max_examples must be a positive int or None; received {max_examples!r}")
    path = locate(f"imdb/{split}.jsonl", _URL, data_dir, extract_member=f"aclImdb/{split}")
    if path.is_dir():
        texts, labels = _read_review_folders(path, max_examples)
    else:
        texts, labels = _read_jsonl(path, max_examples)
    return [_without_line_breaks(text) for text in texts], labels


def _without_line_breaks(text):
    """Replaces each run of `<br />` and the whitespace around it by one space."""
    if "<br />" not in text:  # str methods: 20 times faster than a regular expression here
        return text.strip()
    return " ".join(part for part in (piece.strip() for piece in text.split("<br />")) if part)


def _read_jsonl(path, max_examples):
    texts, labels = [], []
    with open(path, encoding="utf-8", newline="\n") as lines:
        for number, line in enumerate(lines, start=1):
            if max_examples is not None and len(texts) == max_examples:
                break
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as error:
                raise ValueError(
                    f"{path}:{number}: expected one JSON object per line ({error}); "
                    f"found {line[:60]!r}"
                ) from None
            if not _is_review(row):
                raise ValueError(
                    f"{path}:{number}: expected an object with a non-empty str "
                    f"'text', an int 'label' 0 or 1 and, when present, an int 'id' "
                    f"and an int 'rating' (1-4 for label 0, 7-10 for label 1); "
                    f"found {line[:60]!r}"
                )
            texts.append(row["text"])
            labels.append(row["label"])
    return texts, labels


def _is_review(row):
    if not isinstance(row, dict) or not isinstance(row.get("text"), str) or not row["text"].strip():
        return False
    label, rating = row.get("label"), row.get("rating", 7 if row.get("label") == 1 else 1)
    if type(label) is not int or label not in (0, 1) or type(rating) is not int:
        return False
    return type(row.get("id", 0)) is int and rating in ((1, 2, 3, 4), (7, 8, 9, 10))[label]


def _read_review_folders(folder, max_examples):
    """Reads aclImdb's `pos/` and `neg/` review files in the local file's shuffled order."""
    keys = []
    for label, name in ((0, "neg"), (1, "pos")):
        for review in (folder / name).glob("*.txt"):
            match = _REVIEW_FILE.fullmatch(review.name)
            if match is None:
                raise ValueError(f"{review}: expected a review file named <id>_<rating>.txt")
            keys.append((label, int(match.group(1)), review))
    if not keys:
        raise ValueError(f"{folder} holds no pos/*.txt or neg/*.txt reviews")
    keys.sort(key=lambda key: key[:2])
    random.Random(0).shuffle(keys)
    keys = keys[:max_examples]
    return (
        [review.read_text(encoding="utf-8") for _, _, review in keys],
        [label for label, _, _ in keys],
    )
