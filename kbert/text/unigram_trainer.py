"""Learns a SentencePiece unigram vocabulary by EM with pruning (Kudo 2018), as the textbook's
§20.3 describes it.

BPE grows a vocabulary by merging; the unigram model shrinks one. It starts from every
character and the most frequent substrings of the words (each word opened by "▁", so pieces
may start a word but never cross one), then repeats:

1. EM: the E-step computes, for every word, the expected count of each piece over *all* its
   segmentations (forward-backward over the word's lattice of pieces), the M-step sets each
   piece's log probability from those counts (SentencePiece's Bayesian estimate,
   digamma(count) − digamma(total)), dropping pieces expected less than half a time;
2. pruning: each piece's loss is how much the corpus log likelihood would fall if it were
   removed and its occurrences were segmented by the next best pieces; the `shrinking_factor`
   share with the highest losses stays (single characters always stay, so no training text is
   ever unknown);

until the vocabulary is the requested size. Segmenting text with the result is Viterbi
(`kbert.text.UnigramTokenizer`).
"""

import collections
import math

from kbert.checks import check_int

SPACE = "▁"  # U+2581: SentencePiece writes each space as this character
EXPECTED_COUNT_THRESHOLD = 0.5  # SentencePiece's kExpectedFrequencyThreshold


def sentencepiece_words(
    text, add_dummy_prefix=True, collapse_whitespace=False, always_prefix=False
):
    """`(word, positions)` pairs: `text` with spaces as "▁", cut before each "▁".

    `positions` gives, per character of the word, its index in `text`; the opening "▁" takes
    the index of the character it opens (so a token of it alone spans that character, as in
    Hugging Face's offsets). With `collapse_whitespace` (SentencePiece's
    `remove_extra_whitespaces`), leading, trailing and repeated spaces are dropped first. The
    dummy prefix is added only where the text does not open with a space (Hugging Face's
    Metaspace), or always with `always_prefix` (SentencePiece itself).

    Example:
    >>> sentencepiece_words("How far")
    [('▁How', [0, 0, 1, 2]), ('▁far', [3, 4, 5, 6])]
    """
    indices = list(range(len(text)))
    if collapse_whitespace:
        indices = [i for i in indices if text[i] != " " or (i > 0 and text[i - 1] != " ")]
        while indices and text[indices[0]] == " ":
            indices.pop(0)
        while indices and text[indices[-1]] == " ":
            indices.pop()
    symbols = [(SPACE if text[i] == " " else text[i], i) for i in indices]
    if add_dummy_prefix and symbols and (always_prefix or symbols[0][0] != SPACE):
        symbols.insert(0, (SPACE, symbols[0][1]))
    words, current = [], []
    for symbol in symbols:
        if symbol[0] == SPACE and current:
            words.append(current)
            current = []
        current.append(symbol)
    if current:
        words.append(current)
    return [("".join(s for s, _ in word), [p for _, p in word]) for word in words]


def _digamma(x):
    """ψ(x) by recurrence and the asymptotic series (SentencePiece's own)."""
    result = 0.0
    while x < 7:
        result -= 1 / x
        x += 1
    x -= 0.5
    inverse = 1 / x
    square = inverse * inverse
    fourth = square * square
    return (
        result
        + math.log(x)
        + square / 24
        - 7 * fourth / 960
        + 31 * fourth * square / 8064
        - 127 * fourth * fourth / 30720
    )


def _logsumexp(a, b):
    if a == -math.inf:
        return b
    if b == -math.inf:
        return a
    high = max(a, b)
    return high + math.log1p(math.exp(-abs(a - b)))


def _expected_counts(words, log_probs, longest):
    """E-step: expected piece counts over all segmentations, and the corpus log likelihood."""
    expected = collections.Counter()
    likelihood = 0.0
    for word, count in words:
        size = len(word)
        edges = [
            (start, end, word[start:end])
            for start in range(size)
            for end in range(start + 1, min(size, start + longest) + 1)
            if word[start:end] in log_probs
        ]
        forward = [-math.inf] * (size + 1)
        forward[0] = 0.0
        for start, end, piece in edges:  # sorted by start: forward[start] is final
            forward[end] = _logsumexp(forward[end], forward[start] + log_probs[piece])
        backward = [-math.inf] * (size + 1)
        backward[size] = 0.0
        for start, end, piece in reversed(edges):
            backward[start] = _logsumexp(backward[start], backward[end] + log_probs[piece])
        total = forward[size]
        likelihood += count * total
        for start, end, piece in edges:
            posterior = math.exp(forward[start] + log_probs[piece] + backward[end] - total)
            expected[piece] += count * posterior
    return expected, likelihood


def _viterbi(word, log_probs, longest, exclude=None):
    """The most probable segmentation of `word` (list of pieces), `exclude` left out."""
    size = len(word)
    best = [(-math.inf, -1)] * (size + 1)
    best[0] = (0.0, -1)
    for start in range(size):
        if best[start][0] == -math.inf:
            continue
        for end in range(start + 1, min(size, start + longest) + 1):
            piece = word[start:end]
            if piece == exclude or piece not in log_probs:
                continue
            candidate = best[start][0] + log_probs[piece]
            if candidate > best[end][0]:
                best[end] = (candidate, start)
    pieces, end = [], size
    while end > 0:
        start = best[end][1]
        if start < 0:
            return None  # no segmentation without `exclude`
        pieces.append(word[start:end])
        end = start
    return pieces[::-1]


def _seed_pieces(words, max_piece_length, seed_size):
    """Every character, and the `seed_size` substrings with the highest frequency × length."""
    frequency = collections.Counter()
    characters = collections.Counter()
    for word, count in words:
        for start, character in enumerate(word):
            characters[character] += count
            for end in range(start + 2, min(len(word), start + max_piece_length) + 1):
                if word[end - 1] == SPACE:
                    break  # "▁" only opens a piece
                frequency[word[start:end]] += count
    seeds = sorted(frequency, key=lambda piece: (-frequency[piece] * len(piece), piece))
    counts = dict(characters)
    counts.update({piece: frequency[piece] for piece in seeds[:seed_size]})
    total = sum(counts.values())
    return {piece: math.log(count) - math.log(total) for piece, count in counts.items()}


def learn_unigram(
    word_counts,
    vocabulary_size,
    max_piece_length=16,
    seed_size=100_000,
    shrinking_factor=0.75,
    em_iterations=2,
    reserved_tokens=("<unk>",),
):
    """Learns unigram pieces and their log probabilities from word counts.

    Args:
        word_counts: dict of word → count, each word as `sentencepiece_words` writes it
            (opened by "▁", no "▁" inside).
        vocabulary_size: int. Pieces in the result, reserved tokens included. The result is
            smaller only when the words have fewer distinct pieces to offer.
        max_piece_length: int, default 16. Longest piece, in characters.
        seed_size: int, default 100,000. Substrings the first vocabulary starts from.
        shrinking_factor: float in (0, 1), default 0.75. Share of pieces each pruning keeps.
        em_iterations: int >= 1, default 2. EM steps between prunings.
        reserved_tokens: sequence of str, default ("<unk>",). First in the result (score 0),
            never learned; the first is the unknown token.

    Returns:
        list of `(piece, log probability)`: the reserved tokens, then the pieces by
        decreasing log probability (ties by the piece).

    Raises:
        ValueError: a vocabulary smaller than the reserved tokens plus the characters, bad
            counts or settings.

    Example:
    >>> pieces = learn_unigram({"▁low": 5, "▁lower": 2, "▁newest": 6, "▁widest": 3}, 20)
    >>> pieces[0], pieces[1][0], len(pieces) <= 20
    (('<unk>', 0.0), '▁newest', True)
    """
    if not 0 < shrinking_factor < 1:
        raise ValueError(f"shrinking_factor must be in (0, 1); received {shrinking_factor!r}")
    for name, value, least in (
        ("vocabulary_size", vocabulary_size, 1),
        ("max_piece_length", max_piece_length, 1),
        ("seed_size", seed_size, 0),
        ("em_iterations", em_iterations, 1),
    ):
        check_int(name, value, minimum=least, expected=f"an integer >= {least}")
    words = []
    for word, count in word_counts.items():
        if not isinstance(count, int) or count < 1:
            raise ValueError(
                f"word counts must be positive integers; received {count!r} for {word!r}"
            )
        if word:
            words.append((word, count))
    log_probs = _seed_pieces(words, max_piece_length, seed_size)
    characters = {piece for piece in log_probs if len(piece) == 1}
    target = vocabulary_size - len(reserved_tokens)
    if target < len(characters):
        raise ValueError(
            f"vocabulary_size must hold the {len(reserved_tokens)} reserved tokens and the "
            f"{len(characters)} characters of the words; received {vocabulary_size}"
        )
    longest = max_piece_length
    while True:
        for _ in range(em_iterations):
            expected, _ = _expected_counts(words, log_probs, longest)
            kept = {
                piece: count
                for piece, count in expected.items()
                if count >= EXPECTED_COUNT_THRESHOLD and piece not in characters
            }
            # Characters always stay (so nothing seen in training is unknown), at least as
            # likely as the rarest piece allowed to stay.
            for character in characters:
                kept[character] = max(expected[character], EXPECTED_COUNT_THRESHOLD)
            norm = _digamma(sum(kept.values()))
            log_probs = {piece: _digamma(count) - norm for piece, count in kept.items()}
        if len(log_probs) <= target * 1.1 or len(log_probs) <= len(characters):
            break
        # Pruning: what each piece is worth over its best replacement, where it is used.
        used = collections.Counter()
        for word, count in words:
            for piece in _viterbi(word, log_probs, longest):
                used[piece] += count
        losses = {}
        for piece, log_prob in log_probs.items():
            if piece in characters:
                continue
            replacement = _viterbi(piece, log_probs, longest, exclude=piece)
            if replacement is None:
                continue  # cannot be replaced: keep it
            losses[piece] = used[piece] * (log_prob - sum(log_probs[p] for p in replacement))
        keep = max(target, int(len(log_probs) * shrinking_factor)) - len(characters)
        ranked = sorted(losses, key=lambda piece: (-losses[piece], piece))
        dropped = set(ranked[max(keep, 0) :])
        log_probs = {piece: lp for piece, lp in log_probs.items() if piece not in dropped}
    # The final cut: every character, then the most probable pieces.
    others = sorted(
        (piece for piece in log_probs if piece not in characters),
        key=lambda piece: (-log_probs[piece], piece),
    )
    chosen = sorted(characters) + others[: max(target - len(characters), 0)]
    chosen.sort(key=lambda piece: (-log_probs[piece], piece))
    return [(token, 0.0) for token in reserved_tokens] + [
        (piece, log_probs[piece]) for piece in chosen
    ]
