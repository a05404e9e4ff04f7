import pytest

from kbert.data import read_rte, read_sst2, read_trec
from kbert.data.tsv_rows import text_lines, tsv_rows

RTE_HEADER = b"index\tsentence1\tsentence2\tlabel\n"
PNG_START = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01"


def test_trec_reader_parses_and_reports_bad_lines(tmp_path):
    (tmp_path / "trec").mkdir()
    (tmp_path / "trec" / "TREC_10.label").write_text(
        "NUM:dist How far is it from Denver to Aspen ?\nHUM:desc Who was Galileo ?\n"
    )
    texts, labels = read_trec("test", data_dir=tmp_path)
    assert labels == ["NUM", "HUM"] and texts[1] == "Who was Galileo ?"
    assert read_trec("test", fine=True, data_dir=tmp_path)[1] == ["NUM:dist", "HUM:desc"]
    (tmp_path / "trec" / "TREC_10.label").write_text("NUM:dist fine\nXYZ:abc broken line\n")
    with pytest.raises(ValueError, match=r"TREC_10.label:2: expected 'COARSE:fine"):
        read_trec("test", data_dir=tmp_path)


def test_trec_reader_accepts_the_latin1_original(tmp_path):
    (tmp_path / "trec").mkdir()
    (tmp_path / "trec" / "TREC_10.label").write_bytes(b"LOC:city sister\xf0city ?\n")
    assert read_trec("test", data_dir=tmp_path)[0] == ["sister\u00f0city ?"]


def test_sst2_reader_parses_and_reports_bad_lines(tmp_path):
    (tmp_path / "sst2").mkdir()
    (tmp_path / "sst2" / "dev.tsv").write_text("sentence\tlabel\ngood fun \t1\nbad \t0\n")
    assert read_sst2("dev", data_dir=tmp_path) == (["good fun", "bad"], [1, 0])
    (tmp_path / "sst2" / "dev.tsv").write_text("sentence\tlabel\ngood\t1\nno label here\n")
    with pytest.raises(ValueError, match=r"dev.tsv:3: expected 'sentence<TAB>0\|1'"):
        read_sst2("dev", data_dir=tmp_path)
    # A sentence holding U+0085 stays one line; a non-UTF-8 byte is named with its line.
    (tmp_path / "sst2" / "dev.tsv").write_text("sentence\tlabel\nso\u0085good\t1\n")
    assert read_sst2("dev", data_dir=tmp_path) == (["so\u0085good"], [1])
    (tmp_path / "sst2" / "dev.tsv").write_bytes(b"sentence\tlabel\ngood\t1\nba\xffd\t0\n")
    with pytest.raises(ValueError, match=r"dev.tsv:3: .*UTF-8"):
        read_sst2("dev", data_dir=tmp_path)
    (tmp_path / "sst2" / "dev.tsv").write_bytes(b"")
    with pytest.raises(ValueError, match="dev.tsv:1: expected the header"):
        read_sst2("dev", data_dir=tmp_path)


def test_bad_split_and_missing_directory_are_named(tmp_path):
    with pytest.raises(ValueError, match="TREC split must be one of"):
        read_trec("valid")
    with pytest.raises(ValueError, match="does not exist"):
        read_trec("test", data_dir=tmp_path / "missing")


@pytest.mark.slow
def test_real_files_have_the_documented_counts(data_root):
    assert len(read_trec("train", data_dir=data_root)[0]) == 5452
    texts, labels = read_trec("test", data_dir=data_root)
    assert len(texts) == 500 and labels.count("DESC") == 138
    assert len(read_trec("train", fine=True, data_dir=data_root)[1]) == 5452
    texts, labels = read_sst2("dev", data_dir=data_root)
    assert len(texts) == 872 and sum(labels) == 444


def test_extracted_member_is_matched_by_its_whole_path(tmp_path, monkeypatch):
    """Two archives may hold files of the same name; the member path decides."""
    import keras

    from kbert.data import locate

    cache = tmp_path / "cache" / "datasets"
    for variant in ("wikitext-103-raw", "wikitext-2-raw"):
        (cache / "extracted" / variant).mkdir(parents=True)
        (cache / "extracted" / variant / "wiki.valid.raw").write_text(variant)
    monkeypatch.setattr(keras.utils, "get_file", lambda *a, **k: str(cache / "extracted"))
    monkeypatch.setenv("KBERT_DATA_DIR", str(tmp_path))
    found = locate(
        "wikitext2/wiki.valid.raw",
        "https://example.invalid/w2.zip",
        extract_member="wikitext-2-raw/wiki.valid.raw",
    )
    assert found.read_text() == "wikitext-2-raw"


def test_text_lines_split_like_text_mode_and_drop_the_byte_order_mark(tmp_path):
    path = tmp_path / "mixed.tsv"
    path.write_bytes(b"\xef\xbb\xbfa\tb\r\nc\rd\n\ncaf\xc3\xa9 \xc2\x85 x\r")
    assert list(text_lines(path)) == [
        (1, "a\tb"),
        (2, "c"),
        (3, "d"),
        (4, ""),
        (5, "caf\u00e9 \u0085 x"),
    ]
    with open(path, encoding="utf-8-sig") as file:
        assert [line for _, line in text_lines(path)] == [x.rstrip("\r\n") for x in file]


@pytest.mark.parametrize(
    "content, line, says",
    [
        (PNG_START, 1, r"byte b'\\x89' \(byte 1 of the line\) is not valid UTF-8"),
        (
            RTE_HEADER + b"0\tok.\tok.\tentailment\n1\tbad \xff\xfe\tb\tentailment\n",
            3,
            r"byte b'\\xff' \(byte 7 of the line\) is not valid UTF-8",
        ),
        (
            RTE_HEADER + b"0\ta\x00b\tok.\tentailment\n",
            2,
            r"NUL byte \(character 4 of the line\); expected UTF-8 text",
        ),
        (
            "index\tsentence1\tsentence2\tlabel\n".encode("utf-16"),
            1,
            r"byte b'\\xff' .* not valid UTF-8",
        ),
    ],
    ids=["png", "bad-byte-on-line-3", "nul-byte", "utf-16"],
)
def test_binary_tsv_is_refused_naming_the_file_and_line(tmp_path, content, line, says):
    (tmp_path / "rte").mkdir()
    path = tmp_path / "rte" / "dev.tsv"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=rf"dev\.tsv:{line}: {says}") as error:
        read_rte("dev", data_dir=tmp_path)
    assert str(path) in str(error.value) and "expected UTF-8 text" in str(error.value)
    with pytest.raises(ValueError, match=rf"dev\.tsv:{line}: "):
        list(tsv_rows(path, ["index", "sentence1", "sentence2", "label"]))
