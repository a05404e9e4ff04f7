"""Hugging Face `tokenizers` normalizers in Python, with the alignment to the original text.

A `tokenizer.json` may rewrite text before it is split (a `normalizer`): Unicode normalization
forms, lowercasing, accent stripping, SentencePiece's `nmt_nfkc` rules (`Nmt` + `NFKC`, or the
`Precompiled` charsmap), and `Sequence`s of them. Token offsets still refer to the original
text, so every normalized character carries the span `(start, end)` of original characters it
came from, as `tokenizers`' `NormalizedString` does:

- a character that replaces one keeps that one's span;
- a character inserted after it (a decomposition's marks, "ß" lowercased to two letters, a
  replacement longer than what it replaced) takes the span of the original character before it;
- removed characters leave no trace; a composed character keeps its first part's span.

`normalize(spec, text)` applies the normalizer that `spec` (the JSON dict of the
`tokenizer.json`) describes; `check_normalizer(spec)` refuses, naming the component, anything
it cannot reproduce. The Unicode forms use Python's `unicodedata`, whose Unicode version can
be newer than the one `tokenizers` was built with: characters added since then can normalize
differently.
"""

import base64
import unicodedata

import regex

from kbert.text.precompiled_charsmap import PrecompiledCharsmap

NORMALIZERS = (
    "NFC",
    "NFD",
    "NFKC",
    "NFKD",
    "Lowercase",
    "StripAccents",
    "Strip",
    "Replace",
    "Prepend",
    "Nmt",
    "Precompiled",
    "Sequence",
)
# Rust's `char::is_whitespace`: the Unicode White_Space property (Python's isspace differs).
WHITE_SPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000"
)
# SentencePiece's `Nmt` normalizer: the control characters it removes, and the ones it turns
# into a space (the eager `nmt` below and `kbert.text.graph_normalizers` share them).
NMT_REMOVED = frozenset(
    [chr(c) for c in range(0x01, 0x09)]
    + ["\x0b"]
    + [chr(c) for c in range(0x0E, 0x20)]
    + ["\x7f", "\x8f", "\x9f"]
)
NMT_SPACES = frozenset(
    ["\t", "\n", "\x0c", "\r", "\u1680", "\u2028", "\u2029", "\u2581", "\ufeff", "\ufffd"]
    + [chr(c) for c in range(0x200B, 0x2010)]
)
_GRAPHEME = regex.compile(r"\X", regex.DOTALL)


class AlignedText:
    """A normalized text and, per character, the span of original characters it stands for.

    Args:
        text: str. The (normalized) text.
        spans: list of `(start, end)`, one per character of `text`; default: each character
            its own position (an original text).
    """

    def __init__(self, text, spans=None):
        self.text = text
        self.spans = [(i, i + 1) for i in range(len(text))] if spans is None else list(spans)

    def transform(self, changes, skip=0):
        """A new `AlignedText` from `(character, change)` pairs, `tokenizers`' rule: change 0
        replaces the next original character, change `-n` replaces it and removes `n` more,
        change 1 inserts (taking the span of the character before); `skip` characters are
        removed first."""
        cursor, text, spans = skip, [], []
        for character, change in changes:
            if change > 0:
                span = self.spans[cursor - 1] if cursor > 0 else (0, 0)
            else:
                span = self.spans[cursor]
                cursor += 1 - change
            text.append(character)
            spans.append(span)
        return AlignedText("".join(text), spans)

    def keep(self, flags):
        """Only the characters whose flag is true, each with its span."""
        kept = [(c, s) for c, s, f in zip(self.text, self.spans, flags, strict=True) if f]
        return AlignedText("".join(c for c, _ in kept), [s for _, s in kept])

    def map(self, function):
        """Each character replaced by `function(character)` (one character), spans kept."""
        return AlignedText("".join(function(c) for c in self.text), self.spans)

    def slice(self, start, end):
        """Characters `start:end` with their spans."""
        return AlignedText(self.text[start:end], self.spans[start:end])

    def prepend(self, prefix):
        """`prefix` before the text, every character of it spanning the first character's
        span (nothing is added to an empty text, as in `tokenizers`)."""
        if not self.text or not prefix:
            return self
        return AlignedText(prefix + self.text, [self.spans[0]] * len(prefix) + self.spans)

    def original_span(self, start, end):
        """The original span of normalized characters `start:end` (empty: an empty span)."""
        if end <= start:
            point = self.spans[start][0] if start < len(self.spans) else self._end()
            return point, point
        return self.spans[start][0], self.spans[end - 1][1]

    def _end(self):
        return self.spans[-1][1] if self.spans else 0


def _decomposed(text, compatibility):
    """`(character, change)` of the canonical (or compatibility) decomposition, marks in
    canonical order: a character's first part replaces it, the others are inserted."""
    form = "NFKD" if compatibility else "NFD"
    out = []
    for character in text:
        parts = unicodedata.normalize(form, character)
        out += [(part, int(index > 0)) for index, part in enumerate(parts)]
    # Canonical ordering: runs of non-starters sorted (stably) by combining class.
    index = 0
    while index < len(out):
        if unicodedata.combining(out[index][0]) == 0:
            index += 1
            continue
        end = index
        while end < len(out) and unicodedata.combining(out[end][0]) != 0:
            end += 1
        out[index:end] = sorted(out[index:end], key=lambda pair: unicodedata.combining(pair[0]))
        index = end
    return out


def _composed(pairs):
    """Canonical composition of decomposed `(character, change)` pairs: a character absorbed
    into its starter leaves the starter's change plus its own, less one."""
    out, starter, last_class = [], None, None  # last_class: of the last character kept since
    for character, change in pairs:
        klass = unicodedata.combining(character)
        blocked = last_class is not None and (last_class == 0 or last_class >= klass)
        if starter is not None and not blocked:
            base, base_change = out[starter]
            # NFC of the pair is one character exactly when the pair has a primary composite.
            composite = unicodedata.normalize("NFC", base + character)
            if len(composite) == 1:
                out[starter] = (composite, base_change + change - 1)
                continue
        if klass == 0:
            starter, last_class = len(out), None
        else:
            last_class = klass
        out.append((character, change))
    return out


def _unicode_form(aligned, form):
    pairs = _decomposed(aligned.text, form.startswith("NFK"))
    if form.endswith("C"):
        pairs = _composed(pairs)
    return aligned.transform(pairs)


def _lowercase(aligned):
    pairs = []
    for character in aligned.text:
        # One character at a time: Rust's to_lowercase has no final-sigma rule.
        lowered = character.lower()
        pairs += [(part, int(index > 0)) for index, part in enumerate(lowered)]
    return aligned.transform(pairs)


def _strip(aligned, left, right):
    start, end = 0, len(aligned.text)
    if left:
        while start < end and aligned.text[start] in WHITE_SPACE:
            start += 1
    if right:
        while end > start and aligned.text[end - 1] in WHITE_SPACE:
            end -= 1
    return aligned.slice(start, end)


def _pattern(spec, component):
    """A compiled `regex` for a `{"String": s}` or `{"Regex": r}` pattern."""
    if "String" in spec:
        return regex.compile(regex.escape(spec["String"]))
    if "Regex" in spec:
        return regex.compile(spec["Regex"])
    raise ValueError(f"{component}: pattern {spec} is not supported; expected String or Regex")


def _replace(aligned, spec):
    pattern = _pattern(spec["pattern"], "normalizer Replace")
    content = spec["content"]
    text, pieces, cursor = aligned.text, [], 0
    for match in pattern.finditer(text):
        if match.end() == match.start():
            continue
        pieces.append(aligned.slice(cursor, match.start()))
        # The content takes the span of the last character it replaces.
        last = aligned.spans[match.end() - 1]
        pieces.append(AlignedText(content, [last] * len(content)))
        cursor = match.end()
    pieces.append(aligned.slice(cursor, len(text)))
    return AlignedText("".join(p.text for p in pieces), [span for p in pieces for span in p.spans])


def _nmt(aligned):
    aligned = aligned.keep([c not in NMT_REMOVED for c in aligned.text])
    return aligned.map(lambda c: " " if c in NMT_SPACES else c)


def _precompiled(aligned, charsmap):
    """`tokenizers`' `Precompiled`: each grapheme shorter than 6 bytes is looked up whole, the
    others (and graphemes without a rule) one character at a time."""
    pairs, modified = [], False

    def replace(old, new):
        pairs.extend((c, 0) for c in new)
        difference = len(new) - len(old)
        if difference > 0:
            for index in range(len(pairs) - difference, len(pairs)):
                pairs[index] = (pairs[index][0], 1)
        elif difference < 0 and pairs:
            pairs[-1] = (pairs[-1][0], pairs[-1][1] + difference)

    for grapheme in _GRAPHEME.findall(aligned.text):
        if len(grapheme.encode("utf-8")) < 6:
            new = charsmap.replacement(grapheme)
            if new is not None:
                replace(grapheme, new)
                modified = True
                continue
        for character in grapheme:
            new = charsmap.replacement(character)
            if new is None:
                pairs.append((character, 0))
            else:
                replace(character, new)
                modified = True
    return aligned.transform(pairs) if modified else aligned


def check_normalizer(spec, where="tokenizer.json"):
    """Raises a `ValueError` naming the first component of `spec` (a `tokenizer.json`
    normalizer dict, or None) that `normalize` cannot reproduce; returns `spec`."""
    if spec is None:
        return spec
    kind = spec.get("type")
    if kind not in NORMALIZERS:
        raise ValueError(
            f"{where}: normalizer {kind!r} is not supported; supported: {', '.join(NORMALIZERS)}"
        )
    if kind == "Sequence":
        for part in spec.get("normalizers") or []:
            check_normalizer(part, where)
    if kind == "Replace":
        _pattern(spec.get("pattern") or {}, f"{where}: normalizer Replace")
    return spec


def normalize(spec, text, _charsmaps={}):  # noqa: B006 - a cache of parsed charsmaps
    """`text` (str or `AlignedText`) normalized by `spec` (a `tokenizer.json` normalizer
    dict, or None for none) → `AlignedText`.

    Example:
    >>> aligned = normalize({"type": "Lowercase"}, "ẞig")
    >>> aligned.text, aligned.spans
    ('ßig', [(0, 1), (1, 2), (2, 3)])
    """
    aligned = text if isinstance(text, AlignedText) else AlignedText(text)
    if spec is None:
        return aligned
    kind = spec.get("type")
    if kind in ("NFC", "NFD", "NFKC", "NFKD"):
        return _unicode_form(aligned, kind)
    if kind == "Lowercase":
        return _lowercase(aligned)
    if kind == "StripAccents":
        return aligned.keep([not unicodedata.category(c).startswith("M") for c in aligned.text])
    if kind == "Strip":
        return _strip(aligned, spec.get("strip_left", True), spec.get("strip_right", True))
    if kind == "Replace":
        return _replace(aligned, spec)
    if kind == "Prepend":
        return aligned.prepend(spec["prepend"])
    if kind == "Nmt":
        return _nmt(aligned)
    if kind == "Precompiled":
        blob = spec.get("precompiled_charsmap") or ""
        if blob not in _charsmaps:
            _charsmaps[blob] = PrecompiledCharsmap(base64.b64decode(blob))
        return _precompiled(aligned, _charsmaps[blob])
    if kind == "Sequence":
        for part in spec.get("normalizers") or []:
            aligned = normalize(part, aligned)
        return aligned
    check_normalizer(spec)
    raise AssertionError(kind)  # check_normalizer raised for anything unsupported
