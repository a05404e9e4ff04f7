"""Hugging Face `tokenizers` post-processors in Python: special tokens around a text's tokens.

A `tokenizer.json`'s `post_processor` adds the model's special tokens when asked
(`add_special_tokens=True`): BERT's `[CLS] … [SEP]` (`BertProcessing`), RoBERTa's
`<s> … </s>` (`RobertaProcessing`), any single-text template (`TemplateProcessing`, e.g. T5's
`$A </s>`), or a `Sequence` of them. Added tokens span nothing (offsets `(0, 0)`). Byte-level
processors (`ByteLevel`, `RobertaProcessing` with `trim_offsets`) also move each token's
offsets past its leading and trailing spaces, and they do it whether or not special tokens
are asked for, as `tokenizers` does.
"""

POST_PROCESSORS = (
    "TemplateProcessing",
    "RobertaProcessing",
    "BertProcessing",
    "ByteLevel",
    "Sequence",
)
_SPACE_SYMBOL = "Ġ"  # GPT-2's byte alphabet writes the space byte as this


def check_post_processor(spec, where="tokenizer.json"):
    """Raises a `ValueError` naming the first component of `spec` (a `tokenizer.json`
    post-processor dict, or None) that `post_process` cannot reproduce; returns `spec`."""
    if spec is None:
        return spec
    kind = spec.get("type")
    if kind not in POST_PROCESSORS:
        raise ValueError(
            f"{where}: post-processor {kind!r} is not supported; supported: "
            f"{', '.join(POST_PROCESSORS)}"
        )
    for part in spec.get("processors") or []:
        check_post_processor(part, where)
    if kind == "TemplateProcessing":
        for piece in spec.get("single") or []:
            if "SpecialToken" in piece:
                name = piece["SpecialToken"]["id"]
                if name not in (spec.get("special_tokens") or {}):
                    raise ValueError(
                        f"{where}: template token {name!r} has no special_tokens entry"
                    )
            elif "Sequence" not in piece:
                raise ValueError(f"{where}: template piece {piece} is not supported")
    return spec


def trims_offsets(spec):
    """Whether `spec` moves offsets past spaces (a byte-level processor with trim_offsets)."""
    if spec is None:
        return False
    if spec["type"] == "Sequence":
        return any(trims_offsets(part) for part in spec.get("processors") or [])
    return spec["type"] in ("ByteLevel", "RobertaProcessing") and spec.get("trim_offsets", True)


def trimming_prefix_space(spec):
    """None when `spec` trims no offsets, else the `add_prefix_space` its trimming honours (the
    first trimming processor's, in a Sequence)."""
    if spec is None:
        return None
    if spec["type"] == "Sequence":
        found = [trimming_prefix_space(part) for part in spec.get("processors") or []]
        return next((value for value in found if value is not None), None)
    if trims_offsets(spec):
        return bool(spec.get("add_prefix_space", True))
    return None


def _trim(tokens, add_prefix_space):
    """`tokenizers`' byte-level `process_offsets` on `(id, piece, start, end)` tuples."""
    trimmed = []
    for index, (token_id, piece, start, end) in enumerate(tokens):
        leading = len(piece) - len(piece.lstrip(_SPACE_SYMBOL))
        trailing = len(piece) - len(piece.rstrip(_SPACE_SYMBOL))
        if leading:
            if (index == 0 or start == 0) and add_prefix_space and leading == 1:
                leading = 0  # the space the pre-tokenizer added stays
            start = min(start + leading, end)
        if trailing and end >= trailing:
            end = max(end - trailing, start)
        trimmed.append((token_id, piece, start, end))
    return trimmed


def _special(token, token_id):
    return (token_id, token, 0, 0)


def post_process(spec, tokens, add_special_tokens):
    """`tokens` (`(id, piece, start, end)` tuples of one text) after the post-processor `spec`.

    Example:
    >>> post_process({"type": "BertProcessing", "sep": ["[SEP]", 3], "cls": ["[CLS]", 2]},
    ...              [(7, "hi", 0, 2)], add_special_tokens=True)
    [(2, '[CLS]', 0, 0), (7, 'hi', 0, 2), (3, '[SEP]', 0, 0)]
    """
    if spec is None:
        return tokens
    kind = spec["type"]
    if kind == "Sequence":
        for part in spec.get("processors") or []:
            tokens = post_process(part, tokens, add_special_tokens)
        return tokens
    if kind in ("ByteLevel", "RobertaProcessing") and spec.get("trim_offsets", True):
        tokens = _trim(tokens, spec.get("add_prefix_space", True))
    if not add_special_tokens or kind == "ByteLevel":
        return tokens
    if kind in ("RobertaProcessing", "BertProcessing"):
        return [_special(*spec["cls"]), *tokens, _special(*spec["sep"])]
    out = []
    for piece in spec.get("single") or []:
        if "Sequence" in piece:
            out += tokens
        else:
            entry = spec["special_tokens"][piece["SpecialToken"]["id"]]
            out += [_special(t, i) for t, i in zip(entry["tokens"], entry["ids"], strict=True)]
    return out
