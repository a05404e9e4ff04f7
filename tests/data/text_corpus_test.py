"""Fast tests of read_text_corpus on small files; the slow tier reads pretrain_corpus."""

import json

import pytest

from kbert.data import count_whitespace_words, read_pretraining_books, read_text_corpus


def write_jsonl(path, records):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))


def test_jsonl_documents_are_split_into_paragraphs(tmp_path):
    path = tmp_path / "books.jsonl"
    write_jsonl(
        path,
        [
            {"id": 0, "text": "TITLE\n\n\nFirst line\nwrapped on.\n \nLast paragraph.\u2028ok"},
            {"id": 1, "text": "   "},  # empty after stripping: dropped
            {"id": 2, "text": "Solo"},
        ],
    )
    with open(path, "a") as file:
        file.write("\n")  # a blank line between records is allowed
    documents = read_text_corpus(path)
    assert documents == [
        ["TITLE", "First line\nwrapped on.", "Last paragraph.\u2028ok"],
        ["Solo"],
    ]


def test_text_field_and_format_are_parameters(tmp_path):
    path = tmp_path / "data.txt"
    write_jsonl(path, [{"body": "a b"}])
    assert read_text_corpus(path, format="jsonl", text_field="body") == [["a b"]]
    # "auto" reads .txt as text: the JSON line is one paragraph of plain text.
    assert read_text_corpus(path) == [['{"body": "a b"}']]


def test_plain_text_blank_line_and_line_layouts(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text("Doc one, line one.\nLine two.\n\n\nDoc two.\r\n  \nDoc three.")
    assert read_text_corpus(path) == [
        ["Doc one, line one.", "Line two."],
        ["Doc two."],
        ["Doc three."],
    ]
    assert read_text_corpus([path], document_separator="line") == [
        ["Doc one, line one."],
        ["Line two."],
        ["Doc two."],
        ["Doc three."],
    ]
    assert read_text_corpus([path, path], document_separator="line")[4] == ["Doc one, line one."]


def test_malformed_lines_are_reported_with_file_and_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"text": "fine"}\n\n{"text": "broken\n')
    with pytest.raises(ValueError, match=r"bad.jsonl:3: malformed JSON \(Unterminated string"):
        read_text_corpus(path)
    path.write_text('{"text": "fine"}\n["a list"]\n')
    with pytest.raises(ValueError, match=r"bad.jsonl:2: expected a JSON object per line"):
        read_text_corpus(path)
    path.write_text('{"body": "x", "id": 1}\n')
    with pytest.raises(ValueError, match=r"bad.jsonl:1: expected the text field 'text'; found "):
        read_text_corpus(path)
    path.write_text('{"text": 3}\n')
    with pytest.raises(ValueError, match=r"bad.jsonl:1: expected field 'text' to be a string"):
        read_text_corpus(path)
    path.write_bytes(b'{"text": "ok"}\n{"text": "\xff"}\n')
    with pytest.raises(ValueError, match=r"bad.jsonl:2: not valid UTF-8"):
        read_text_corpus(path)


def test_bad_arguments_and_empty_corpus(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n \n")
    with pytest.raises(ValueError, match="paths hold no documents"):
        read_text_corpus(empty)
    with pytest.raises(ValueError, match="paths must be existing files; these are not"):
        read_text_corpus(tmp_path / "missing.jsonl")
    with pytest.raises(ValueError, match="paths must name at least one file; received"):
        read_text_corpus([])
    with pytest.raises(ValueError, match=r"format must be one of \('auto', 'text', 'jsonl'\)"):
        read_text_corpus(empty, format="csv")
    with pytest.raises(ValueError, match="document_separator must be one of"):
        read_text_corpus(empty, document_separator="paragraph")


@pytest.mark.slow
def test_pretrain_corpus_has_the_documented_books_and_words(data_root):
    valid = read_text_corpus(data_root / "pretrain_corpus" / "valid.jsonl")
    assert len(valid) == 4 and valid[3][0] == "THE SEA-WOLF"
    assert sum(count_whitespace_words(valid)) == 264_575  # SOURCE.md
    train = read_text_corpus(data_root / "pretrain_corpus" / "train.jsonl")
    assert len(train) == 49 and train[0][:2] == ["DESPERATE REMEDIES", "By Thomas Hardy"]
    assert sum(count_whitespace_words(train)) == 3_603_622


def test_read_pretraining_books_reads_the_split_and_keeps_the_first_books(tmp_path):
    folder = tmp_path / "pretrain_corpus"
    folder.mkdir()
    books = [{"text": f"Book {i}\n\nIt was a night."} for i in range(3)]
    (folder / "train.jsonl").write_text("\n".join(json.dumps(book) for book in books) + "\n")
    assert read_pretraining_books("train", tmp_path) == [
        [f"Book {i}", "It was a night."] for i in range(3)
    ]
    assert len(read_pretraining_books("train", tmp_path, max_books=2)) == 2
    with pytest.raises(ValueError, match="split must be 'train' or 'valid'; received 'test'"):
        read_pretraining_books("test", tmp_path)
    with pytest.raises(ValueError, match="max_books must be an int >= 0; received -1"):
        read_pretraining_books("train", tmp_path, max_books=-1)
