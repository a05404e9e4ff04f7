"""Slow tier: kbert.text against Hugging Face `tokenizers` on the MiniLM tokenizer and real data.

TREC-6 (train + test) and SST-2 dev must agree 100% (ids, character offsets and word ids); a list
of hard cases must too, except the documented known differences, which are asserted to still
differ so the list stays true; pairs must pack like `tokenizer.encode(a, b)`; the hard-coded
Unicode tables must equal what the installed reference does; and every code point must split
into the same words.
"""

import csv
import itertools

import numpy as np
import pytest
import tensorflow as tf

from kbert.text import (
    BertPreprocessor,
    WordPieceTokenizer,
    _bert_text,
    _unicode_tables,
    tokenizer_agreement,
)
from kbert.text.parity import derive_pre_tokenizer_tables, derive_unicode_tables

pytestmark = pytest.mark.slow
tokenizers = pytest.importorskip("tokenizers")

HARD_CASES = [
    "Café naïve Ångström",
    "ﬁ ligature ﬀ",
    "ＡＢＣ full-width ａｂｃ １２３",
    "İstanbul ıi",
    "ΟΔΟΣ Άλφα ς σ",
    "a\u200db zero\u200dwidth joiner",
    "a\u200bb zero\u200bwidth space, soft\u00adhyphen, BOM\ufeffinside",
    "👍🏽 emoji 😀 family 👨\u200d👩\u200d👧 flag 🇺🇸",
    "中文字符 CJK 日本語のテキスト 한국어",
    "don't, can't; U.S.A. — e.g. 3.14 or 1,000.5%",
    "tabs\tand\nnewlines\r\nand\x0bvertical\x0cfeed\x85next\u2028line\u3000ideographic\xa0nbsp",
    "combining e\u0301 marks a\u0308 and a lone \u0301 one",
    "control\x00nul\x01soh\x7fdel\x9fapc",
    "≠ ≮ ≯ \u1fef",
    "Kelvin \u212a Ohm \u2126 Ǆ ǅ ǆ ß ẞ",
    "مرحبا بالعالم שלום नमस्ते สวัสดี",
    "private \ue000 use and replacement \ufffd characters",
    "recent scripts \U00011383 \U00016121 \U000105c9",
    "a" * 101 + " " + "é" * 100 + " " + "b" * 100,
    "",
    "   \t\n  ",
]

# Documented differences (see wordpiece_tokenizer.py): special tokens written in the text are
# matched whole by Hugging Face (added tokens) and tokenized as text by kbert.
KNOWN_DIFFERENCES = ["hello [SEP] world", "[CLS] x [MASK]", "a[PAD]b"]


def read_trec(path):
    with open(path, encoding="utf-8") as file:
        return [line.rstrip("\n").split(" ", 1)[1] for line in file if line.strip()]


def read_sst2(path):
    with open(path, encoding="utf-8", newline="") as file:
        return [row["sentence"] for row in csv.DictReader(file, delimiter="\t", quoting=3)]


@pytest.fixture(scope="module")
def minilm_tokenizer(minilm_dir):
    return WordPieceTokenizer(str(minilm_dir / "vocab.txt"))


@pytest.fixture(scope="module")
def real_texts(data_root):
    trec = read_trec(data_root / "trec" / "train_5500.label")
    trec += read_trec(data_root / "trec" / "TREC_10.label")
    sst2 = read_sst2(data_root / "sst2" / "dev.tsv")
    assert (len(trec), len(sst2)) == (5952, 872)
    return {"trec": trec, "sst2": sst2}


def reference(minilm_dir):
    tokenizer = tokenizers.Tokenizer.from_file(str(minilm_dir / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


@pytest.mark.parametrize("dataset", ["trec", "sst2"])
def test_real_data_agrees_completely(minilm_dir, minilm_tokenizer, real_texts, dataset):
    report = tokenizer_agreement(
        minilm_tokenizer,
        minilm_dir / "tokenizer.json",
        real_texts[dataset],
        compare_alignment=True,
    )
    print(f"{dataset}: {report.num_identical}/{report.num_texts} identical ({report.fraction:.2%})")
    assert report.fraction == 1.0, report.mismatches[:3]


def test_hard_cases_agree(minilm_dir, minilm_tokenizer):
    report = tokenizer_agreement(
        minilm_tokenizer, minilm_dir / "tokenizer.json", HARD_CASES, compare_alignment=True
    )
    print(f"hard cases: {report.num_identical}/{report.num_texts} identical")
    assert report.fraction == 1.0, report.mismatches


def test_known_differences_still_differ(minilm_dir, minilm_tokenizer):
    report = tokenizer_agreement(minilm_tokenizer, minilm_dir / "tokenizer.json", KNOWN_DIFFERENCES)
    assert report.num_identical == 0, "a known difference is gone: update the docs and this list"
    first = report.mismatches[0]
    assert first["expected_tokens"] == ["hello", "[SEP]", "world"]
    assert first["received_tokens"] == ["hello", "[", "sep", "]", "world"]


@pytest.mark.parametrize("sequence_length", [None, 8, 13, 32, 128])
def test_pairs_pack_like_encode(minilm_dir, minilm_tokenizer, real_texts, sequence_length):
    questions = real_texts["trec"][:500]
    sentences = real_texts["sst2"][:500]
    sentences[::7] = [""] * len(sentences[::7])  # "[CLS] A [SEP] [SEP]"
    expected = reference(minilm_dir)
    if sequence_length is not None:
        expected.enable_truncation(max_length=sequence_length, strategy="longest_first")
    encodings = expected.encode_batch(list(zip(questions, sentences, strict=True)))
    length = sequence_length or 512  # no truncation: compare the unpadded part
    preprocessor = BertPreprocessor(minilm_tokenizer, sequence_length=length)
    outputs = preprocessor((tf.constant(questions), tf.constant(sentences)))
    token_ids = outputs["token_ids"].numpy()
    segment_ids = outputs["segment_ids"].numpy()
    used = outputs["padding_mask"].numpy().sum(axis=1)
    for row, encoding in enumerate(encodings):
        assert token_ids[row, : used[row]].tolist() == encoding.ids
        assert segment_ids[row, : used[row]].tolist() == encoding.type_ids
    assert (token_ids[np.arange(length)[None, :] >= used[:, None]] == 0).all()


def test_unicode_tables_match_the_installed_reference():
    derived = derive_unicode_tables()
    hard_coded = {
        "removed": _unicode_tables.REMOVED,
        "whitespace": _unicode_tables.WHITESPACE,
        "punctuation": _unicode_tables.PUNCTUATION,
        "cjk": _unicode_tables.CJK,
        "nonspacing_marks": _unicode_tables.NONSPACING_MARKS,
        "decomposes_to_punctuation": _unicode_tables.DECOMPOSES_TO_PUNCTUATION,
        "nfd_exceptions": _unicode_tables.NFD_EXCEPTIONS,
        "lowercase_runs": _unicode_tables.LOWERCASE_RUNS,
    }
    for name, table in hard_coded.items():
        assert [tuple(entry) for entry in derived[name]] == list(table), name


def test_pre_tokenizer_tables_match_the_installed_regex_module_and_re2():
    derived = derive_pre_tokenizer_tables()
    hard_coded = {
        "letters_beyond_re2": _unicode_tables.LETTERS_BEYOND_RE2,
        "numbers_beyond_re2": _unicode_tables.NUMBERS_BEYOND_RE2,
        "word_characters_beyond_re2": _unicode_tables.WORD_CHARACTERS_BEYOND_RE2,
    }
    for name, table in hard_coded.items():
        assert [tuple(entry) for entry in derived[name]] == list(table), name


SETTINGS = [
    dict(lowercase=True, strip_accents=True),
    dict(lowercase=True, strip_accents=False),
    dict(lowercase=False, strip_accents=False),
    dict(lowercase=False, strip_accents=True),
]


@pytest.mark.parametrize(
    "settings, template",
    [(SETTINGS[0], "{}"), *itertools.product(SETTINGS, ["a{}a"])],
)
def test_every_code_point_splits_into_the_reference_words(settings, template):
    normalizer = tokenizers.normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=True, **settings
    )
    pre_tokenizer = tokenizers.pre_tokenizers.BertPreTokenizer()
    table = _bert_text.lowercase_table()
    words_of = tf.function(lambda texts: _bert_text.pre_tokenize(texts, table, **settings)["words"])
    code_points = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    differences = []
    for begin in range(0, len(code_points), 65536):
        texts = [template.format(chr(c)) for c in code_points[begin : begin + 65536]]
        received = words_of(tf.constant(texts)).to_list()
        for text, words in zip(texts, received, strict=True):
            expected = [
                w for w, _ in pre_tokenizer.pre_tokenize_str(normalizer.normalize_str(text))
            ]
            if [w.decode("utf-8") for w in words] != expected:
                differences.append((text, expected, words))
    assert differences == [], differences[:10]
