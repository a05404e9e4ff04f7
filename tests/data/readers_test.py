import pytest

from kbert.data import read_sst2, read_trec


def test_trec_reader_parses_and_reports_bad_lines(tmp_path):
    (tmp_path / "trec").mkdir()
    (tmp_path / "trec" / "TREC_10.label").write_text(
        "NUM:dist How far is it from Denver to Aspen ?\nHUM:desc Who was Galileo ?\n")
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
    found = locate("wikitext2/wiki.valid.raw", "https://example.invalid/w2.zip",
                   extract_member="wikitext-2-raw/wiki.valid.raw")
    assert found.read_text() == "wikitext-2-raw"
