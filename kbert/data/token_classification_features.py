"""Words with tags in, subword rows with aligned labels out (J&M §11.4.3, BIO tagging).

A tagged sentence is a list of words, but the encoder sees WordPiece subwords: "Blackburn"
may become `black ##burn`. The features here keep the mapping both ways:

- labels go on the first subword of each word (J&M: the others are ignored in the loss, label
  `IGNORE_INDEX`), or on every subword (`label_all_subwords=True`; a continuation of a `B-X` word
  gets `I-X`, so the subword sequence is itself valid BIO);
- each token records which word it came from, so predictions are read back per word;
- a sentence longer than the model's input is cut into overlapping windows of whole words; each
  word is *owned* by the window that gives it the most context on both sides, and only the owning
  window's prediction counts, so no word is ever dropped or counted twice.

Words are located in the text `" ".join(words)` by character offset, so a word the tokenizer
splits further (CoNLL's "1996-08-22" becomes 5 pre-tokenized pieces) still maps back to one
word, and a word that normalization deletes entirely (a lone control character) gets one
`[UNK]` token rather than vanishing.
"""

import numpy as np

from kbert.checks import check_int
from kbert.data.batched_tokenization import tokenize_with_offsets

IGNORE_INDEX = -100


def continuation_tags(tag_names):
    """For each tag id, the id a word's continuation subwords get: `B-X` → `I-X`, else itself.

    Args:
        tag_names: sequence of str, the tag set in id order.

    Returns:
        A list of int, one per tag.

    Example:
    >>> continuation_tags(["O", "B-PER", "I-PER"])
    [0, 2, 2]
    """
    index = {name: i for i, name in enumerate(tag_names)}
    return [
        index.get("I-" + name[2:], i) if name.startswith("B-") else i
        for i, name in enumerate(tag_names)
    ]


def word_offsets(words):
    """Character spans of `words` in `" ".join(words)`, end exclusive."""
    spans, start = [], 0
    for word in words:
        spans.append((start, start + len(word)))
        start += len(word) + 1
    return spans


def _word_pieces(tokenizer, sentences):
    """Per sentence, per word, the token ids of its subwords (never empty)."""
    tokenized = tokenize_with_offsets(tokenizer, [" ".join(words) for words in sentences])
    pieces = []
    for words, (token_ids, token_starts, _) in zip(sentences, tokenized, strict=True):
        word_starts = np.array([span[0] for span in word_offsets(words)])
        owner = np.searchsorted(word_starts, token_starts, side="right") - 1
        per_word = [[] for _ in words]
        for token_id, word in zip(token_ids.tolist(), owner.tolist(), strict=True):
            per_word[word].append(token_id)
        pieces.append([ids or [tokenizer.unknown_token_id] for ids in per_word])
    return pieces


def _windows(lengths, capacity, stride):
    """Word ranges `[start, end)` of overlapping windows holding at most `capacity` tokens."""
    windows, start, n = [], 0, len(lengths)
    cumulative = np.concatenate([[0], np.cumsum(lengths)])
    while True:
        end = start
        while end < n and cumulative[end + 1] - cumulative[start] <= capacity:
            end += 1
        if end == start:  # one word longer than the window: it alone, cut (never happens in BERT)
            end = start + 1
        windows.append((start, end))
        if end >= n:
            return windows
        # The next window starts at the first word that leaves at most `stride` tokens of overlap.
        following = start + 1
        while following < end and cumulative[end] - cumulative[following] > stride:
            following += 1
        start = following


def token_classification_features(
    sentences,
    tokenizer,
    tags=None,
    tag_names=None,
    sequence_length=128,
    stride=None,
    label_all_subwords=False,
):
    """Subword rows for token classification, with labels aligned to words.

    Args:
        sentences: list of lists of str (words; none empty).
        tokenizer: `kbert.text.WordPieceTokenizer` with cls, sep, pad and unknown tokens.
        tags: list of lists of str (one tag per word), default None (prediction only).
        tag_names: sequence of str, the tag set in id order; needed with `tags`.
        sequence_length: int, default 128. Row length, [CLS] and [SEP] included.
        stride: int, default None (32, or a third of the window if that is less). Most tokens
            two consecutive windows of a long sentence share.
        label_all_subwords: bool, default False. Label every subword (continuations of `B-X` get
            `I-X`) instead of the first subword of each word only.

    Returns:
        A dict of numpy arrays, one row per window: `token_ids`, `segment_ids`, `padding_mask`
        (rows, sequence_length) int32; `word_index` (rows, sequence_length) int32, the token's
        word in its sentence (-1 at [CLS], [SEP], padding); `first_subword` (rows,
        sequence_length) int32, 1 at the first subword of each word this row owns;
        `owned` (rows, sequence_length) int32, 1 at every subword of the words this row owns;
        `sentence_index` (rows,) int32; with `tags`, `labels` (rows, sequence_length) int32
        (`IGNORE_INDEX` where not scored).

    Example:
    >>> from kbert.text import WordPieceTokenizer
    >>> tokenizer = WordPieceTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "eu",
    ...                                 "rejects", "ger", "##man"])
    >>> features = token_classification_features(
    ...     [["EU", "rejects", "German"]], tokenizer, tags=[["B-ORG", "O", "B-MISC"]],
    ...     tag_names=["O", "B-ORG", "I-ORG", "B-MISC", "I-MISC"], sequence_length=8)
    >>> features["labels"][0].tolist()
    [-100, 1, 0, 3, -100, -100, -100, -100]
    """
    sequence_length = check_int(
        "sequence_length", sequence_length, minimum=3, expected="an int >= 3"
    )
    capacity = sequence_length - 2
    if stride is None:
        stride = min(32, capacity // 3)
    if not isinstance(stride, int) or not 0 <= stride < capacity:
        raise ValueError(
            f"stride must be an int in [0, sequence_length - 2 = {capacity}); received {stride!r}"
        )
    sentences = [list(words) for words in sentences]
    for index, words in enumerate(sentences):
        if not words:
            raise ValueError(f"sentence {index} has no words")
        empty = [i for i, word in enumerate(words) if not isinstance(word, str) or not word]
        if empty:
            raise ValueError(f"sentence {index} has empty or non-str words at positions {empty}")
    tag_ids = None
    if tags is not None:
        if tag_names is None:
            raise ValueError("tag_names (the tag set in id order) is required with tags")
        if len(tags) != len(sentences):
            raise ValueError(
                f"tags must have one list per sentence: {len(sentences)} sentences, "
                f"{len(tags)} tag lists"
            )
        name_to_id = {name: i for i, name in enumerate(tag_names)}
        tag_ids = []
        for index, (words, sentence_tags) in enumerate(zip(sentences, tags, strict=False)):
            if len(sentence_tags) != len(words):
                raise ValueError(
                    f"sentence {index} has {len(words)} words but {len(sentence_tags)} tags"
                )
            for word, tag in zip(words, sentence_tags, strict=False):
                if tag not in name_to_id:
                    raise ValueError(
                        f"sentence {index}: tag {tag!r} of word {word!r} is not in "
                        f"the tag set {list(tag_names)}"
                    )
            tag_ids.append([name_to_id[tag] for tag in sentence_tags])
        continuation = continuation_tags(tag_names)

    pieces = _word_pieces(tokenizer, sentences)
    columns = {key: [] for key in ("token_ids", "word_index", "first_subword", "owned", "labels")}
    sentence_index = []
    for index, word_pieces in enumerate(pieces):
        lengths = [min(len(ids), capacity) for ids in word_pieces]
        windows = _windows(lengths, capacity, stride)
        # Each word's owner: the window where it has the most words of context on its worse side.
        owner = {}
        for window, (start, end) in enumerate(windows):
            for word in range(start, end):
                context = min(word - start, end - 1 - word)
                if word not in owner or context > owner[word][0]:
                    owner[word] = (context, window)
        for window, (start, end) in enumerate(windows):
            row = {
                key: [IGNORE_INDEX if key == "labels" else -1 if key == "word_index" else 0]
                for key in columns
            }
            row["token_ids"] = [tokenizer.cls_token_id]
            for word in range(start, end):
                ids = word_pieces[word][:capacity]
                owns = int(owner[word][1] == window)
                row["token_ids"] += ids
                row["word_index"] += [word] * len(ids)
                row["first_subword"] += [owns] + [0] * (len(ids) - 1)
                row["owned"] += [owns] * len(ids)
                if tag_ids is not None:
                    tag = tag_ids[index][word]
                    rest = continuation[tag] if label_all_subwords else IGNORE_INDEX
                    row["labels"] += [tag] + [rest] * (len(ids) - 1)
            row["token_ids"].append(tokenizer.sep_token_id)
            row["word_index"].append(-1)
            row["first_subword"].append(0)
            row["owned"].append(0)
            row["labels"].append(IGNORE_INDEX)
            for key in columns:
                columns[key].append(row[key])
            sentence_index.append(index)

    rows = len(sentence_index)
    padding = {
        "token_ids": tokenizer.pad_token_id,
        "word_index": -1,
        "first_subword": 0,
        "owned": 0,
        "labels": IGNORE_INDEX,
    }
    features = {}
    for key, values in columns.items():
        if key == "labels" and tag_ids is None:
            continue
        array = np.full((rows, sequence_length), padding[key], dtype=np.int32)
        for r, value in enumerate(values):
            array[r, : len(value)] = value
        features[key] = array
    lengths = np.array([len(value) for value in columns["token_ids"]])
    features["padding_mask"] = (np.arange(sequence_length)[None, :] < lengths[:, None]).astype(
        np.int32
    )
    features["segment_ids"] = np.zeros((rows, sequence_length), dtype=np.int32)
    features["sentence_index"] = np.array(sentence_index, dtype=np.int32)
    return features
