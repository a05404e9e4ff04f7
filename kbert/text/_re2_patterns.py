"""Hugging Face patterns in RE2, the regex engine of TensorFlow's string ops and tf-text.

`tokenizers` matches `Regex` patterns with Oniguruma, whose `\\s`, `\\w`, `\\p{L}` and
`\\p{N}` are Unicode classes; kbert's Python reference uses the `regex` module, which agrees.
RE2's `\\s`, `\\w` and `\\d` are ASCII only and its Unicode tables can be older, so
`to_re2(pattern)` writes those classes out in full (adding the code points that
`_unicode_tables` lists as missing from RE2) and refuses, by name, what RE2 cannot match at
all: lookarounds, backreferences and word boundaries.
"""

import regex

from kbert.text import _bert_text, _unicode_tables
from kbert.text.normalizers import WHITE_SPACE


def _with_ranges(re2_class, ranges):
    """RE2 class body `re2_class` plus the code point ranges RE2's tables lack."""
    return re2_class + _bert_text.character_class(ranges)[1:-1]


# Class bodies (without brackets). Python `regex`'s \s is Unicode White_Space.
SPACE = "".join(f"\\x{{{ord(c):X}}}" for c in sorted(WHITE_SPACE))
LETTER = _with_ranges(r"\p{L}", _unicode_tables.LETTERS_BEYOND_RE2)
NUMBER = _with_ranges(r"\p{N}", _unicode_tables.NUMBERS_BEYOND_RE2)
WORD_CHARACTER = _with_ranges(
    r"\p{L}\p{M}\p{Nd}\p{Pc}\p{Nl}\x{200C}\x{200D}", _unicode_tables.WORD_CHARACTERS_BEYOND_RE2
)
# Escapes whose meaning differs in RE2: the class body each stands for (None: only its
# complement, which a class cannot hold).
_CLASSES = {
    "s": SPACE,
    "w": WORD_CHARACTER,
    "d": r"\p{Nd}",
    "p{L}": LETTER,
    "p{N}": NUMBER,
}
_NEGATED = {"S": "s", "W": "w", "D": "d", "P{L}": "p{L}", "P{N}": "p{N}"}
_REFUSED = ("(?=", "(?!", "(?<=", "(?<!", r"\b", r"\B", r"\G", r"\Z")


def literal(text):
    """RE2 pattern matching `text` verbatim (every character as a `\\x{...}` escape)."""
    return "".join(f"\\x{{{ord(c):X}}}" for c in text)


def to_re2(pattern, where):
    """The Python `regex` / Oniguruma `pattern` rewritten for RE2 with the same matches.

    Args:
        pattern: str, a `tokenizer.json` `Regex` pattern.
        where: str, the component named in errors.

    Raises:
        ValueError: the pattern uses what RE2 lacks (lookarounds, backreferences, word
            boundaries), a negated class inside brackets, or does not compile.
    """
    for construct in _REFUSED:
        if construct in pattern:
            raise ValueError(
                f"{where}: pattern {pattern!r} uses {construct!r}, which RE2 (the graph's regex "
                "engine) does not support; supported: patterns without lookarounds, "
                "backreferences or word boundaries"
            )
    if regex.search(r"\\[1-9]", pattern):
        raise ValueError(f"{where}: pattern {pattern!r} has a backreference, which RE2 lacks")
    out, index, depth = [], 0, 0  # depth: inside a bracketed class
    while index < len(pattern):
        character = pattern[index]
        if character == "\\" and index + 1 < len(pattern):
            rest = pattern[index + 1 :]
            name = next((k for k in (*_CLASSES, *_NEGATED) if rest.startswith(k)), None)
            if name in _CLASSES:
                out.append(_CLASSES[name] if depth else f"[{_CLASSES[name]}]")
            elif name in _NEGATED:
                if depth:
                    raise ValueError(
                        f"{where}: pattern {pattern!r} has \\{name} inside a character class, "
                        "which the graph cannot write in RE2; supported: \\s, \\w, \\d, \\p{L}, "
                        "\\p{N} inside classes, their negations outside"
                    )
                out.append(f"[^{_CLASSES[_NEGATED[name]]}]")
            else:
                name = rest[0]
                out.append("\\" + name)
            index += 1 + len(name)
            continue
        if character == "[" and not depth:
            depth = 1
            out.append(character)
            # A "]" right after "[" or "[^" is a literal member.
            for opening in ("^]", "]", "^"):
                if pattern.startswith(opening, index + 1):
                    out.append(opening)
                    index += len(opening)
                    break
        elif character == "]" and depth:
            depth = 0
            out.append(character)
        else:
            out.append(character)
        index += 1
    return "".join(out)
