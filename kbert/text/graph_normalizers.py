"""Hugging Face normalizers as graph ops: the text a `tokenizer.json` normalizer writes, in a graph.

`kbert.text.normalizers` is the Python reference, which also aligns every normalized character
with the original text. These ops write the same normalized text inside a graph (tf.data, an
exported SavedModel), without that alignment: the graph tokenizers give ids after them, and
refuse offsets (`offsets_refusal`).

- NFC, NFD, NFKC, NFKD: tf-text's `normalize_utf8` (ICU).
- Lowercase: `tf.strings.lower` with UTF-8, ICU's full lowercase mapping ("İ" becomes "i" +
  U+0307 as in Rust); "Σ" is lowered first, as ICU would write a word-final one "ς" where Rust,
  lowering one character at a time, writes "σ".
- StripAccents: the marks (`\\p{M}`) removed; Strip: Unicode White_Space at either end;
  Replace: RE2 replacement (`_re2_patterns.to_re2` for a `Regex`); Prepend: the prefix before
  a non-empty text; Nmt: SentencePiece's control characters removed and its spaces written as
  " "; Sequence: each in turn.
- Precompiled (a SentencePiece charsmap) is refused: its longest-grapheme lookup has no exact
  counterpart among graph ops here.

ICU and RE2 carry their own Unicode versions: characters assigned after the older of them and
`tokenizers`' can normalize, lowercase or match differently (TensorFlow's ICU lacks Unicode
14's new case pairs, which Lowercase leaves as they are; `tf.strings.lower` drops U+0000).
"""

import regex
import tensorflow as tf
import tensorflow_text

from kbert.text import _re2_patterns
from kbert.text._json_config import component_name
from kbert.text.normalizers import NMT_REMOVED, NMT_SPACES, NORMALIZERS, check_normalizer

# Every normalizer but SentencePiece's Darts charsmap, which has no TensorFlow op.
GRAPH_NORMALIZERS = tuple(kind for kind in NORMALIZERS if kind != "Precompiled")


def _class(characters):
    return "[" + "".join(f"\\x{{{ord(c):X}}}" for c in sorted(characters)) + "]"


_NMT_REMOVED_CLASS = _class(NMT_REMOVED)
_NMT_SPACE_CLASS = _class(NMT_SPACES)
_STRIP_LEFT = f"^[{_re2_patterns.SPACE}]+"
_STRIP_RIGHT = f"[{_re2_patterns.SPACE}]+$"


def _components(spec):
    """The non-Sequence components of `spec`, in order."""
    if spec is None:
        return []
    if spec.get("type") == "Sequence":
        return [part for inner in spec.get("normalizers") or [] for part in _components(inner)]
    return [spec]


def _replace_pattern(spec, where):
    """`(RE2 pattern, rewrite)` of a Replace normalizer."""
    pattern, content = spec.get("pattern") or {}, spec["content"]
    if "String" in pattern:
        re2 = _re2_patterns.literal(pattern["String"])
        if not pattern["String"]:
            raise ValueError(f"{where}: normalizer Replace with an empty String is not supported")
    else:
        re2 = _re2_patterns.to_re2(pattern["Regex"], f"{where}: normalizer Replace")
        # `tokenizers` skips empty matches; RE2's global replace would write at each of them.
        if regex.fullmatch(pattern["Regex"], ""):
            raise ValueError(
                f"{where}: normalizer Replace pattern {pattern['Regex']!r} matches the empty "
                "string, which the graph cannot skip; supported: patterns that match one "
                "character or more"
            )
    return re2, content.replace("\\", "\\\\")  # RE2 rewrites read "\1"; content is literal


def check_graph_normalizer(spec, where="graph tokenizer"):
    """Raises a `ValueError` naming the first component of `spec` that `graph_normalize` cannot
    compute; returns `spec`."""
    check_normalizer(spec, where)
    for part in _components(spec):
        kind = part["type"]
        if kind not in GRAPH_NORMALIZERS:
            raise ValueError(
                f"{where}: normalizer {kind} does not run in the graph; supported there: "
                f"{', '.join(GRAPH_NORMALIZERS)}"
            )
        if kind == "Replace":
            _replace_pattern(part, where)
    return spec


def offsets_refusal(spec):
    """None when `spec` keeps offsets exact in the graph (no normalizer), else the reason."""
    components = _components(spec)
    if not components:
        return None
    return (
        f"normalizer {component_name(spec)} changes the text before it is split, and the graph "
        "ops do not align the normalized text with the original; offsets are given for "
        "pipelines with no normalizer (ids are exact either way)"
    )


def graph_normalize(spec, texts):
    """`texts` (a string tensor of any shape) normalized by `spec` (a `tokenizer.json`
    normalizer dict, or None) with graph ops.

    Example:
    >>> spec = {"type": "Sequence", "normalizers": [{"type": "NFD"}, {"type": "StripAccents"},
    ...         {"type": "Lowercase"}]}
    >>> graph_normalize(spec, tf.constant(["Ça Va"])).numpy()[0].decode()
    'ca va'
    """
    check_graph_normalizer(spec)
    for part in _components(spec):
        kind = part["type"]
        if kind in ("NFC", "NFD", "NFKC", "NFKD"):
            texts = tensorflow_text.normalize_utf8(texts, kind)
        elif kind == "Lowercase":
            # ICU lowers a word-final "Σ" to "ς"; Rust lowers one character at a time, to "σ".
            texts = tf.strings.regex_replace(texts, "\u03a3", "\u03c3")
            texts = tf.strings.lower(texts, encoding="utf-8")
        elif kind == "StripAccents":
            texts = tf.strings.regex_replace(texts, r"\p{M}", "")
        elif kind == "Strip":
            if part.get("strip_left", True):
                texts = tf.strings.regex_replace(texts, _STRIP_LEFT, "")
            if part.get("strip_right", True):
                texts = tf.strings.regex_replace(texts, _STRIP_RIGHT, "")
        elif kind == "Replace":
            pattern, rewrite = _replace_pattern(part, "graph tokenizer")
            texts = tf.strings.regex_replace(texts, pattern, rewrite)
        elif kind == "Prepend":
            prefix = part["prepend"]
            texts = tf.where(tf.strings.length(texts) > 0, prefix + texts, texts)
        elif kind == "Nmt":
            texts = tf.strings.regex_replace(texts, _NMT_REMOVED_CLASS, "")
            texts = tf.strings.regex_replace(texts, _NMT_SPACE_CLASS, " ")
    return texts
