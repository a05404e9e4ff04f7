"""Checks that kbert's tokenizer agrees with the Hugging Face `tokenizers` reference.

Two tools live here, both used by the slow test tier and by benchmarks:

- `tokenizer_agreement` tokenizes the same texts with a `WordPieceTokenizer` and with a
  Hugging Face `tokenizer.json`, and reports the fraction that agree exactly.
- `derive_unicode_tables` probes the reference normalizer and pre-tokenizer one code point at a
  time and returns the character tables that `kbert/text/_unicode_tables.py` hard-codes; a test
  compares the two so a new `tokenizers` release that changes behaviour is noticed.

`tokenizers` is a test-only peer, never a kbert dependency, so it is imported inside the functions.
"""

import dataclasses

import tensorflow as tf


@dataclasses.dataclass
class TokenizerAgreement:
    """How often two tokenizers produce identical output.

    Attributes:
        fraction: float, the fraction of texts whose token ids (and offsets and word ids, when
            compared) are identical; 1.0 for an empty list of texts.
        num_texts: int, how many texts were compared.
        num_identical: int, how many of them agreed.
        mismatches: list of dicts, the first disagreements, each with `index`, `text`,
            `expected_tokens`, `received_tokens`, `expected_offsets`, `received_offsets`,
            `expected_word_ids`, `received_word_ids`.
    """

    fraction: float
    num_texts: int
    num_identical: int
    mismatches: list


def tokenizer_agreement(
    tokenizer,
    hf_tokenizer_json_path,
    texts,
    compare_alignment=False,
    max_mismatches=20,
    batch_size=512,
):
    """Compares a `WordPieceTokenizer` with a Hugging Face `tokenizer.json` on many texts.

    The reference runs with truncation and padding off and without special tokens, so both sides
    see exactly the raw tokenization.

    Args:
        tokenizer: `kbert.text.WordPieceTokenizer`, the tokenizer under test.
        hf_tokenizer_json_path: str or Path, the reference `tokenizer.json`.
        texts: list of str, the texts to compare.
        compare_alignment: bool, default False. Also require identical character offsets and
            word ids.
        max_mismatches: int, default 20. How many disagreements to keep in the report.
        batch_size: int, default 512. Texts tokenized per call.

    Returns:
        A `TokenizerAgreement`.

    Example:
    >>> report = tokenizer_agreement(tokenizer, "model/tokenizer.json", ["Hello, world!"])
    >>> report.fraction
    1.0
    """
    from tokenizers import Tokenizer  # test-only peer, see the module docstring

    reference = Tokenizer.from_file(str(hf_tokenizer_json_path))
    reference.no_truncation()
    reference.no_padding()
    texts = list(texts)
    num_identical = 0
    mismatches = []
    for begin in range(0, len(texts), batch_size):
        batch = texts[begin : begin + batch_size]
        expected = reference.encode_batch(batch, add_special_tokens=False)
        received = tokenizer.tokenize_with_alignment(tf.constant(batch, dtype=tf.string))
        received_ids = received["token_ids"].to_list()
        received_starts = received["start_offsets"].to_list()
        received_ends = received["end_offsets"].to_list()
        received_word_ids = received["word_ids"].to_list()
        for position, text in enumerate(batch):
            expected_offsets = [tuple(pair) for pair in expected[position].offsets]
            offsets = list(zip(received_starts[position], received_ends[position], strict=True))
            same = expected[position].ids == received_ids[position]
            if compare_alignment:
                same = (
                    same
                    and expected_offsets == offsets
                    and expected[position].word_ids == received_word_ids[position]
                )
            if same:
                num_identical += 1
            elif len(mismatches) < max_mismatches:
                mismatches.append(
                    {
                        "index": begin + position,
                        "text": text,
                        "expected_tokens": expected[position].tokens,
                        "received_tokens": [
                            tokenizer.id_to_token(i) for i in received_ids[position]
                        ],
                        "expected_offsets": expected_offsets,
                        "received_offsets": offsets,
                        "expected_word_ids": expected[position].word_ids,
                        "received_word_ids": received_word_ids[position],
                    }
                )
    fraction = num_identical / len(texts) if texts else 1.0
    return TokenizerAgreement(fraction, len(texts), num_identical, mismatches)


def _ranges(code_points):
    """Turns a sorted list of code points into inclusive (first, last) ranges."""
    ranges = []
    for code_point in code_points:
        if ranges and ranges[-1][1] == code_point - 1:
            ranges[-1] = (ranges[-1][0], code_point)
        else:
            ranges.append((code_point, code_point))
    return ranges


def _runs(mapping):
    """Compresses a code point -> code point map into (first, last, step, delta) runs.

    Case mappings come in blocks where every code point (step 1) or every other one (step 2,
    upper/lower pairs interleaved) maps to itself plus a constant.
    """
    runs = []
    for key, value in sorted(mapping.items()):
        delta = value - key
        if runs:
            first, last, step, previous_delta = runs[-1]
            gap = key - last
            if previous_delta == delta and (gap == step or (first == last and gap in (1, 2))):
                runs[-1] = (first, key, gap, delta)
                continue
        runs.append((key, key, 1, delta))
    return runs


def _nfd_exceptions(strip_normalizer, nonspacing_marks):
    """Code points where ICU's NFD plus the reference's mark set disagree with the reference."""
    import tensorflow_text as text

    from kbert.text import _bert_text

    code_points = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    decomposed = text.normalize_utf8(tf.constant([chr(c) for c in code_points]), "NFD")
    mark_class = _bert_text.character_class(nonspacing_marks)
    stripped = tf.strings.regex_replace(decomposed, mark_class, "")
    return [
        code_point
        for code_point, ours in zip(code_points, stripped.numpy().tolist(), strict=True)
        if ours.decode("utf-8") != strip_normalizer.normalize_str(chr(code_point))
    ]


def derive_unicode_tables():
    """Probes Hugging Face `BertNormalizer`/`BertPreTokenizer` for the character tables kbert uses.

    Every code point is normalized (and pre-tokenized between two letters) on its own. The
    reference's Rust crates carry their own Unicode versions, which differ from Python's,
    RE2's and ICU's, so the tables are measured rather than computed from Unicode properties.

    Returns:
        A dict with inclusive `(first, last)` code point ranges under `removed` (deleted by
        clean_text), `whitespace` (turned into a space), `punctuation` (split off as words), `cjk`
        (surrounded by spaces), `nonspacing_marks` (dropped by strip_accents),
        `decomposes_to_punctuation` (not punctuation, but strip_accents turns them into a
        punctuation character), `nfd_exceptions` (characters that ICU's NFD in this TensorFlow
        decomposes and the reference's does not), and `lowercase_runs`, `(first, last, step,
        delta)` runs of one-to-one lowercase mappings (U+0130, the only one-to-many mapping, is
        handled separately).

    Example:
    >>> tables = derive_unicode_tables()  # about 5 s
    >>> tables["whitespace"][0]
    (9, 10)
    """
    from tokenizers import normalizers, pre_tokenizers  # test-only peer

    def normalizer(**flags):
        options = dict(
            clean_text=False, handle_chinese_chars=False, strip_accents=False, lowercase=False
        )
        options.update(flags)
        return normalizers.BertNormalizer(**options)

    clean = normalizer(clean_text=True)
    chinese = normalizer(handle_chinese_chars=True)
    strip = normalizer(strip_accents=True)
    lower = normalizer(lowercase=True)
    pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    found = {
        name: []
        for name in ("removed", "whitespace", "punctuation", "cjk", "marks", "to_punctuation")
    }
    lowercase = {}
    for code_point in range(0x110000):
        if 0xD800 <= code_point <= 0xDFFF:
            continue  # surrogates are not characters; UTF-8 cannot carry them
        character = chr(code_point)
        cleaned = clean.normalize_str(character)
        if cleaned == "":
            found["removed"].append(code_point)
        elif cleaned == " ":
            found["whitespace"].append(code_point)
        if chinese.normalize_str(character) != character:
            found["cjk"].append(code_point)
        if strip.normalize_str(character) == "":
            found["marks"].append(code_point)
        lowered = lower.normalize_str(character)
        if lowered != character and len(lowered) == 1:
            lowercase[code_point] = ord(lowered)
        if len(pre_tokenizer.pre_tokenize_str("a" + character + "a")) == 3:
            found["punctuation"].append(code_point)
        else:
            stripped = strip.normalize_str("a" + character + "a")
            if len(pre_tokenizer.pre_tokenize_str(stripped)) == 3:
                found["to_punctuation"].append(code_point)
    found["nfd_exceptions"] = _nfd_exceptions(strip, _ranges(found["marks"]))
    return {
        "removed": _ranges(found["removed"]),
        "whitespace": _ranges(found["whitespace"]),
        "punctuation": _ranges(found["punctuation"]),
        "cjk": _ranges(found["cjk"]),
        "nonspacing_marks": _ranges(found["marks"]),
        "decomposes_to_punctuation": _ranges(found["to_punctuation"]),
        "nfd_exceptions": _ranges(found["nfd_exceptions"]),
        "lowercase_runs": _runs(lowercase),
    }


# Unicode classes of the BPE pre-tokenizers (`kbert.text.byte_pair_tokenizer.PRE_TOKENIZERS`,
# written for the `regex` module) → what RE2 writes for them; the tables hold the rest.
PRE_TOKENIZER_CLASSES = {
    "letters_beyond_re2": (r"\p{L}", r"\p{L}"),
    "numbers_beyond_re2": (r"\p{N}", r"\p{N}"),
    "word_characters_beyond_re2": (r"\w", r"[\p{L}\p{M}\p{Nd}\p{Pc}\p{Nl}\x{200C}\x{200D}]"),
}


def derive_pre_tokenizer_tables():
    """Code points the `regex` module puts in a BPE pre-tokenizer's class and RE2 does not.

    The Python BPE tokenizer cuts words with the `regex` module (`\\p{L}`, `\\p{N}`, `\\w`);
    the graph tokenizer cuts them with RE2 (tf-text's `regex_split`), whose Unicode tables are
    older. For each class this probes every code point in both and returns the ones only
    `regex` matches; `GraphBytePairTokenizer` adds them to RE2's class, and
    `tests/text/parity_test.py` compares the result with `kbert/text/_unicode_tables.py`.

    Returns:
        A dict of inclusive `(first, last)` ranges under `letters_beyond_re2`,
        `numbers_beyond_re2` and `word_characters_beyond_re2`.

    Raises:
        AssertionError: RE2 matches a code point that `regex` does not (the tables assume RE2's
            classes are subsets).
    """
    import regex

    code_points = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    characters = tf.constant([chr(c).encode("utf-8") for c in code_points])
    tables = {}
    for name, (python_class, re2_class) in PRE_TOKENIZER_CLASSES.items():
        pattern = regex.compile(python_class)
        in_regex = [bool(pattern.fullmatch(chr(c))) for c in code_points]
        in_re2 = tf.strings.regex_full_match(characters, re2_class).numpy().tolist()
        pairs = list(zip(code_points, in_regex, in_re2, strict=True))
        re2_only = [c for c, theirs, ours in pairs if ours and not theirs]
        assert not re2_only, f"RE2 {re2_class} holds {len(re2_only)} points {python_class} lacks"
        tables[name] = _ranges([c for c, theirs, ours in pairs if theirs and not ours])
    return tables
