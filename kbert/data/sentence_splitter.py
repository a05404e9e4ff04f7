"""A rule-based sentence splitter, good enough to build NSP and SOP segments.

BERT's next-sentence and ALBERT's sentence-order objectives only need segments that end where a
sentence plausibly ends, not linguistically perfect sentences, so a regular expression is enough
and keeps the data code free of NLTK or spaCy models. Known limits:

- Abbreviations and initials followed by a capitalized word ("Mr. Smith", "H. Americanus",
  "U.S. Navy") are split; those followed by a lowercase word ("e.g. the", "approx. five") are not,
  because a sentence end needs the next word to start with something other than a lowercase
  letter.
- Only ".", "!" and "?" end sentences (optionally followed by closing quotes or brackets, which
  stay with the sentence), and only before whitespace; so "3.14", "example.com" and WikiText's
  " @.@ " number separator never split, and neither does text in scripts that use other marks
  (Chinese "。", Devanagari "।").
- Blank lines always end a sentence (a heading or a paragraph without a final period stays on
  its own); single line breaks only do so with `line_breaks_end_sentences=True`, because
  Gutenberg-style text wraps lines at about 70 characters inside sentences.
"""

import re

# A run of terminal marks, closing quotes or brackets, then whitespace; "@.@" is WikiText's
# escaped decimal point, never an end.
_SENTENCE_END = re.compile(r"""(?<!@)[.!?]+["'”’)\]]*(?=\s)""")
_BLANK_LINE = re.compile(r"\n[ \t\r\f\v]*\n\s*")
_NEXT_WORD = re.compile(r"\s*(\S)")


def split_sentences(text, line_breaks_end_sentences=False):
    """Splits text into sentences at ".", "!" or "?" before whitespace, and at blank lines.

    See the module docstring for the rules and their limits. Whitespace inside a sentence is
    kept as it is (line breaks included); every sentence is stripped and none is empty.

    Args:
        text: str.
        line_breaks_end_sentences: bool, default False. Also end a sentence at every line
            break (for one-sentence-per-line text); by default a single line break is a wrap.

    Returns:
        list of str, in order.

    Example:
    >>> split_sentences("It rained. Then it stopped! Did it?\\n\\nA heading\\nwrapped text.")
    ['It rained.', 'Then it stopped!', 'Did it?', 'A heading\\nwrapped text.']
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a str; received {type(text).__name__}")
    pieces = text.splitlines() if line_breaks_end_sentences else _BLANK_LINE.split(text)
    sentences = []
    for piece in pieces:
        start = 0
        for match in _SENTENCE_END.finditer(piece):
            following = _NEXT_WORD.match(piece, match.end())
            # "e.g. the": a lowercase next word means the period was not a sentence end.
            if following is not None and following.group(1).islower():
                continue
            sentences.append(piece[start : match.end()])
            start = match.end()
        sentences.append(piece[start:])
    return [sentence.strip() for sentence in sentences if sentence.strip()]
