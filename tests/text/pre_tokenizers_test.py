"""`kbert.text.pre_tokenizers`: every pre-tokenizer and split behaviour against Hugging Face
`tokenizers`' own `pre_tokenize_str` (splits and their offsets)."""

import json
import random

import pytest

from kbert.text.normalizers import AlignedText
from kbert.text.pre_tokenizers import check_pre_tokenizer, pre_tokenize

PIECES = ["Hello", " ", "  ", "world", ",", "!!", "12", "3", "x", "é", "😀", "'s", "\t", "\n", "$"]
TEXTS = ["", "  lead", "trail  ", "a1b22c333!? x"] + [
    "".join(random.Random(seed).choice(PIECES) for _ in range(12)) for seed in range(200)
]


def _pre_tokenizers(tokenizers):
    p, regex = tokenizers.pre_tokenizers, tokenizers.Regex
    made = {
        "ByteLevel": p.ByteLevel(add_prefix_space=True),
        "ByteLevel without regex": p.ByteLevel(add_prefix_space=False, use_regex=False),
        "Metaspace": p.Metaspace(),
        "Metaspace first": p.Sequence([p.WhitespaceSplit(), p.Metaspace(prepend_scheme="first")]),
        "Metaspace never unsplit": p.Metaspace(prepend_scheme="never", split=False),
        "Whitespace": p.Whitespace(),
        "WhitespaceSplit": p.WhitespaceSplit(),
        "Digits": p.Digits(individual_digits=False),
        "Digits individually": p.Digits(individual_digits=True),
        "Sequence": p.Sequence([p.WhitespaceSplit(), p.Punctuation(), p.Digits(True)]),
    }
    for behavior in ("removed", "isolated", "merged_with_previous", "merged_with_next"):
        made[f"Punctuation {behavior}"] = p.Punctuation(behavior)
        made[f"Split {behavior}"] = p.Split(" ", behavior)
        made[f"Split regex {behavior} inverted"] = p.Split(regex(r"\d+|!"), behavior, invert=True)
    made["Punctuation contiguous"] = p.Punctuation("contiguous")
    made["Split contiguous"] = p.Split(regex(r"\s"), "contiguous")
    return made


def test_each_pre_tokenizer_splits_as_the_reference_does():
    tokenizers = pytest.importorskip("tokenizers")
    for name, reference in _pre_tokenizers(tokenizers).items():
        spec = json.loads(reference.__getstate__())
        for text in TEXTS:
            splits = pre_tokenize(spec, AlignedText(text))
            ours = [(s.text, s.original_span(0, len(s.text))) for s in splits]
            assert ours == reference.pre_tokenize_str(text), (name, text)


def test_unsupported_pre_tokenizers_are_named():
    with pytest.raises(ValueError, match="pre-tokenizer 'BertPreTokenizer' is not supported"):
        check_pre_tokenizer({"type": "Sequence", "pretokenizers": [{"type": "BertPreTokenizer"}]})
    with pytest.raises(ValueError, match="behavior 'Sideways' is not supported"):
        check_pre_tokenizer({"type": "Punctuation", "behavior": "Sideways"})
    with pytest.raises(ValueError, match="prepend_scheme 'sometimes' is not supported"):
        check_pre_tokenizer({"type": "Metaspace", "prepend_scheme": "sometimes"})
