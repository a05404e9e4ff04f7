"""Learns byte-pair-encoding merges from word counts, as the textbook's §20.3 works them by hand.

Byte-pair encoding (Sennrich et al. 2016, after Gage 1994) starts from single symbols and
repeatedly merges the most frequent adjacent pair into a new symbol, so frequent words end up as
one token and rare words as a few frequent pieces. Two alphabets:

- characters, each word closed by an end-of-word marker "</w>" (the chapter's version: the
  marker is its own symbol, so a merge such as `est </w>` learns that "est" ends words; with
  `end_of_word_attached` it is fused to the last character, as Sennrich's `subword-nmt` and
  Hugging Face's `CharBPETokenizer` do);
- bytes (GPT-2, RoBERTa): every word's UTF-8 bytes, each shown as one printable character
  (`byte_level_alphabet`), all 256 of them in the base vocabulary, so no text is ever unknown.

Counting is incremental: a merge recounts only the words that contain the merged pair, and a
heap keeps the next most frequent pair; ties go to the pair that sorts first, so the result does
not depend on the order words were seen.
"""

import collections
import heapq

from kbert.checks import check_int

END_OF_WORD = "</w>"


def byte_level_alphabet():
    """GPT-2's map from each byte (0–255) to one printable Unicode character.

    Printable Latin-1 bytes map to themselves; the others (control characters, space, …) to
    code points from 256 up, so a byte string reads as text with no whitespace in it ("Ġ" is
    the space byte, 0x20).

    Returns:
        list of 256 one-character strings, indexed by byte value.

    Example:
    >>> alphabet = byte_level_alphabet()
    >>> alphabet[ord("a")], alphabet[ord(" ")], len(set(alphabet))
    ('a', 'Ġ', 256)
    """
    printable = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    alphabet, extra = {}, 0
    for byte in range(256):
        if byte in printable:
            alphabet[byte] = chr(byte)
        else:
            alphabet[byte] = chr(256 + extra)
            extra += 1
    return [alphabet[byte] for byte in range(256)]


def word_symbols(word, end_of_word=END_OF_WORD, end_of_word_attached=False, byte_level=False):
    """The symbols BPE starts a word from.

    Args:
        word: str. One pre-tokenized word.
        end_of_word: str or None, default "</w>". Closes every word (characters only).
        end_of_word_attached: bool, default False. Fuse the marker to the last character
            ("w</w>") instead of making it a symbol of its own.
        byte_level: bool, default False. The word's UTF-8 bytes as `byte_level_alphabet`
            characters (no end-of-word marker).

    Returns:
        tuple of str.

    Example:
    >>> word_symbols("low")
    ('l', 'o', 'w', '</w>')
    >>> word_symbols("low", end_of_word_attached=True)
    ('l', 'o', 'w</w>')
    >>> word_symbols(" é", byte_level=True)
    ('Ġ', 'Ã', '©')
    """
    if byte_level:
        alphabet = byte_level_alphabet()
        return tuple(alphabet[byte] for byte in word.encode("utf-8"))
    symbols = list(word)
    if end_of_word:
        if end_of_word_attached and symbols:
            symbols[-1] += end_of_word
        else:
            symbols.append(end_of_word)
    return tuple(symbols)


def merge_pair(symbols, pair, merged):
    """`symbols` (a tuple) with every non-overlapping occurrence of `pair`, left to right, as
    `merged`."""
    out, index = [], 0
    while index < len(symbols):
        if index + 1 < len(symbols) and (symbols[index], symbols[index + 1]) == pair:
            out.append(merged)
            index += 2
        else:
            out.append(symbols[index])
            index += 1
    return tuple(out)


def _pairs(symbols):
    return zip(symbols, symbols[1:], strict=False)


def learn_merges(
    word_counts,
    vocabulary_size=None,
    num_merges=None,
    min_frequency=2,
    end_of_word=END_OF_WORD,
    end_of_word_attached=False,
    byte_level=False,
    reserved_tokens=(),
):
    """Learns BPE merges from word counts; returns `(merges, vocabulary)`.

    Args:
        word_counts: dict (or `collections.Counter`) of pre-tokenized word → count.
        vocabulary_size: int or None. Stop when the vocabulary (reserved tokens, base symbols
            and merged symbols) has this many entries.
        num_merges: int or None. Stop after this many merges. At least one of the two limits
            must be given; the first reached stops training.
        min_frequency: int >= 1, default 2. Stop when the most frequent pair occurs fewer
            times (a merge seen once compresses nothing it has not memorised).
        end_of_word: str or None, default "</w>". See `word_symbols` (characters only).
        end_of_word_attached: bool, default False. See `word_symbols`.
        byte_level: bool, default False. Bytes as symbols; all 256 are in the vocabulary.
        reserved_tokens: sequence of str, default (). Tokens placed first in the vocabulary
            (e.g. "[UNK]", "[PAD]"), never produced by merges.

    Returns:
        `(merges, vocabulary)`: list of `(left, right)` pairs in the order learned (a merge's
        rank is its index), and the list of tokens: reserved tokens, base symbols (sorted),
        then each merge's new symbol in order.

    Raises:
        ValueError: neither limit given, a limit below the base vocabulary, a count that is not
            a positive integer, or `min_frequency` < 1.

    Example (the textbook's worked example):
    >>> merges, vocabulary = learn_merges(
    ...     {"low": 5, "lower": 2, "newest": 6, "widest": 3}, num_merges=4)
    >>> [" ".join(pair) for pair in merges]
    ['e s', 'es t', 'est </w>', 'l o']
    """
    if vocabulary_size is None and num_merges is None:
        raise ValueError("give vocabulary_size or num_merges (or both); received neither")
    min_frequency = check_int("min_frequency", min_frequency, minimum=1, expected="an integer >= 1")
    for name, limit in (("vocabulary_size", vocabulary_size), ("num_merges", num_merges)):
        if limit is not None and (not isinstance(limit, int) or limit < 0):
            raise ValueError(f"{name} must be a non-negative integer; received {limit!r}")
    words, counts = [], []
    for word, count in word_counts.items():
        if not isinstance(count, int) or count < 1:
            raise ValueError(
                f"word counts must be positive integers; received {count!r} for {word!r}"
            )
        symbols = word_symbols(word, end_of_word, end_of_word_attached, byte_level)
        if symbols:
            words.append(symbols)
            counts.append(count)
    base = set(byte_level_alphabet()) if byte_level else {s for w in words for s in w}
    vocabulary = list(reserved_tokens) + sorted(base - set(reserved_tokens))
    if vocabulary_size is not None and vocabulary_size < len(vocabulary):
        raise ValueError(
            f"vocabulary_size must be at least the {len(vocabulary)} reserved and base symbols; "
            f"received {vocabulary_size}"
        )

    pair_counts = collections.Counter()
    where = collections.defaultdict(set)  # pair → indices of the words holding it
    for index, (symbols, count) in enumerate(zip(words, counts, strict=True)):
        for pair in _pairs(symbols):
            pair_counts[pair] += count
            where[pair].add(index)
    heap = [(-count, pair) for pair, count in pair_counts.items()]
    heapq.heapify(heap)
    known = set(vocabulary)
    merges = []
    while heap:
        if num_merges is not None and len(merges) >= num_merges:
            break
        if vocabulary_size is not None and len(vocabulary) >= vocabulary_size:
            break
        negative, pair = heapq.heappop(heap)
        count = pair_counts.get(pair, 0)
        if count != -negative:  # a stale entry: its count changed since it was pushed
            if count > 0:
                heapq.heappush(heap, (-count, pair))
            continue
        if count < min_frequency:
            break
        merged = pair[0] + pair[1]
        merges.append(pair)
        if merged not in known:
            vocabulary.append(merged)
            known.add(merged)
        changed = collections.Counter()
        for index in where.pop(pair):
            old = words[index]
            new = merge_pair(old, pair, merged)
            count = counts[index]
            for old_pair in _pairs(old):
                changed[old_pair] -= count
            for new_pair in _pairs(new):
                changed[new_pair] += count
                where[new_pair].add(index)
            words[index] = new
        del pair_counts[pair]
        for changed_pair, delta in changed.items():
            if changed_pair == pair or delta == 0:
                continue
            pair_counts[changed_pair] += delta
            if pair_counts[changed_pair] <= 0:
                del pair_counts[changed_pair]
            else:
                heapq.heappush(heap, (-pair_counts[changed_pair], changed_pair))
    return merges, vocabulary
