"""Hugging Face `tokenizers` pre-tokenizers in Python: normalized text into aligned splits.

A `tokenizer.json`'s `pre_tokenizer` cuts the normalized text into splits that the model
tokenizes one by one (no token crosses a split), and may rewrite them on the way (`ByteLevel`
turns each split into GPT-2's byte alphabet, `Metaspace` writes spaces as "▁"). Each split is
an `AlignedText`, so token offsets still map to the original text. `pre_tokenize(spec,
aligned)` follows `tokenizers`' rules for every supported component (ByteLevel, Metaspace,
Whitespace, WhitespaceSplit, Punctuation, Digits, Split, Sequence), including the five ways a
split keeps its delimiters (`SPLIT_BEHAVIORS`); `check_pre_tokenizer` refuses the others,
naming them.
"""

import string
import unicodedata

import regex

from kbert.text.byte_pair_trainer import byte_level_alphabet
from kbert.text.normalizers import WHITE_SPACE, AlignedText

PRE_TOKENIZERS = (
    "ByteLevel",
    "Metaspace",
    "Whitespace",
    "WhitespaceSplit",
    "Punctuation",
    "Digits",
    "Split",
    "Sequence",
)
SPLIT_BEHAVIORS = ("Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous")
# GPT-2's pattern (`tokenizers`' ByteLevel regex) and `Whitespace`'s.
GPT2_PATTERN = regex.compile(
    r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
)
WHITESPACE_PATTERN = regex.compile(r"\w+|[^\w\s]+")
_BYTE_SYMBOLS = byte_level_alphabet()


def _is_punctuation(character):
    # `tokenizers`' is_punc: ASCII punctuation (which holds symbols such as $ + < = > ^ ` |)
    # or a Unicode punctuation category.
    return character in string.punctuation or unicodedata.category(character).startswith("P")


def _is_numeric(character):
    # Rust's char::is_numeric: Nd, Nl and No.
    return unicodedata.category(character) in ("Nd", "Nl", "No")


def _character_matches(text, predicate):
    """`(start, end, is_match)` covering `text`: each matching character alone, the runs
    between as non-matches."""
    if not text:
        return [(0, 0, False)]
    found, last = [], 0
    for index, character in enumerate(text):
        if predicate(character):
            if last < index:
                found.append((last, index, False))
            found.append((index, index + 1, True))
            last = index + 1
    if last < len(text):
        found.append((last, len(text), False))
    return found


def _pattern_matches(text, pattern):
    """`(start, end, is_match)` covering `text`: the pattern's matches and the text between."""
    if not text:
        return [(0, 0, False)]
    found, last = [], 0
    for match in pattern.finditer(text):
        if last != match.start():
            found.append((last, match.start(), False))
        found.append((match.start(), match.end(), True))
        last = match.end()
    if last != len(text):
        found.append((last, len(text), False))
    return found


def _combine(found, behavior):
    """The `(start, end)` pieces that `behavior` keeps from `(start, end, is_match)` runs."""
    if behavior == "Removed":
        return [(s, e) for s, e, is_match in found if not is_match]
    if behavior == "Isolated":
        return [(s, e) for s, e, _ in found]
    pieces, previous = [], False
    if behavior == "MergedWithPrevious":
        for start, end, is_match in found:
            if is_match and not previous and pieces:
                pieces[-1] = (pieces[-1][0], end)
            else:
                pieces.append((start, end))
            previous = is_match
        return pieces
    if behavior == "MergedWithNext":
        for start, end, is_match in reversed(found):
            if is_match and not previous and pieces:
                pieces[-1] = (start, pieces[-1][1])
            else:
                pieces.append((start, end))
            previous = is_match
        return pieces[::-1]
    # Contiguous: neighbouring runs of the same kind join.
    for start, end, is_match in found:
        if pieces and is_match == previous:
            pieces[-1] = (pieces[-1][0], end)
        else:
            pieces.append((start, end))
        previous = is_match
    return pieces


def _split(aligned, found, behavior):
    return [aligned.slice(start, end) for start, end in _combine(found, behavior)]


def _pattern(spec, where):
    if "String" in spec:
        return regex.compile(regex.escape(spec["String"]))
    if "Regex" in spec:
        return regex.compile(spec["Regex"])
    raise ValueError(f"{where}: pre-tokenizer Split pattern {spec} is not supported")


def _to_bytes(aligned):
    """Each character as its UTF-8 bytes in GPT-2's byte alphabet, every byte spanning the
    character's span."""
    text, spans = [], []
    for character, span in zip(aligned.text, aligned.spans, strict=True):
        data = character.encode("utf-8")
        text += [_BYTE_SYMBOLS[byte] for byte in data]
        spans += [span] * len(data)
    return AlignedText("".join(text), spans)


def _metaspace(split, spec, origin):
    replacement = spec.get("replacement", "▁")
    scheme = spec.get("prepend_scheme")
    if scheme is None:  # files from before prepend_scheme
        scheme = "always" if spec.get("add_prefix_space", True) else "never"
    split = split.map(lambda c: replacement if c == " " else c)
    opens = split.text.startswith(replacement)
    if not opens and (
        scheme == "always"
        or (scheme == "first" and split.spans and origin + split.spans[0][0] == 0)
    ):
        split = split.prepend(replacement)
    if not spec.get("split", True):
        return [split]
    found = _character_matches(split.text, lambda c: c == replacement)
    return _split(split, found, "MergedWithNext")


def _one(spec, split, origin):
    """The splits that the single (non-Sequence) pre-tokenizer `spec` makes of `split`."""
    kind = spec["type"]
    if kind == "ByteLevel":
        if spec.get("add_prefix_space", True) and not split.text.startswith(" "):
            split = split.prepend(" ")
        pieces = [split]
        if spec.get("use_regex", True):
            pieces = _split(split, _pattern_matches(split.text, GPT2_PATTERN), "Isolated")
        return [_to_bytes(piece) for piece in pieces]
    if kind == "Metaspace":
        return _metaspace(split, spec, origin)
    if kind == "Whitespace":
        found = _pattern_matches(split.text, WHITESPACE_PATTERN)
        return _split(split, [(s, e, not m) for s, e, m in found], "Removed")
    if kind == "WhitespaceSplit":
        found = _character_matches(split.text, lambda c: c in WHITE_SPACE)
        return _split(split, found, "Removed")
    if kind == "Punctuation":
        found = _character_matches(split.text, _is_punctuation)
        return _split(split, found, spec.get("behavior", "Isolated"))
    if kind == "Digits":
        behavior = "Isolated" if spec.get("individual_digits") else "Contiguous"
        return _split(split, _character_matches(split.text, _is_numeric), behavior)
    if kind == "Split":
        found = _pattern_matches(split.text, _pattern(spec["pattern"], "tokenizer.json"))
        if spec.get("invert"):
            found = [(s, e, not m) for s, e, m in found]
        return _split(split, found, spec["behavior"])
    raise AssertionError(kind)  # check_pre_tokenizer refuses anything else


def check_pre_tokenizer(spec, where="tokenizer.json"):
    """Raises a `ValueError` naming the first component of `spec` (a `tokenizer.json`
    pre-tokenizer dict) that `pre_tokenize` cannot reproduce; returns `spec`."""
    kind = (spec or {}).get("type")
    if kind not in PRE_TOKENIZERS:
        raise ValueError(
            f"{where}: pre-tokenizer {kind!r} is not supported; supported: "
            f"{', '.join(PRE_TOKENIZERS)}"
        )
    if kind == "Sequence":
        for part in spec.get("pretokenizers") or []:
            check_pre_tokenizer(part, where)
    behavior = spec.get("behavior")
    if kind in ("Punctuation", "Split") and behavior not in (None, *SPLIT_BEHAVIORS):
        raise ValueError(
            f"{where}: pre-tokenizer {kind} behavior {behavior!r} is not supported; "
            f"supported: {', '.join(SPLIT_BEHAVIORS)}"
        )
    if kind == "Split":
        _pattern(spec.get("pattern") or {}, where)
    if kind == "Metaspace" and spec.get("prepend_scheme") not in (None, "always", "first", "never"):
        raise ValueError(
            f"{where}: Metaspace prepend_scheme {spec['prepend_scheme']!r} is not supported; "
            "supported: always, first, never"
        )
    return spec


def pre_tokenize(spec, aligned, origin=0):
    """The non-empty splits (`AlignedText`) that `spec` (a `tokenizer.json` pre-tokenizer dict)
    makes of `aligned`, whose spans count from `origin` in the whole original text.

    Example:
    >>> [s.text for s in pre_tokenize({"type": "Digits", "individual_digits": True},
    ...                               AlignedText("ab12"))]
    ['ab', '1', '2']
    """
    parts = spec.get("pretokenizers") if spec["type"] == "Sequence" else [spec]
    splits = [aligned]
    for part in parts or []:
        if part["type"] == "Sequence":
            splits = [piece for split in splits for piece in pre_tokenize(part, split, origin)]
        else:
            splits = [piece for split in splits for piece in _one(part, split, origin)]
        splits = [split for split in splits if split.text]
    return splits
