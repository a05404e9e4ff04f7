import pytest

from kbert.data import (
    CONLL2003_ENTITY_TYPES,
    CONLL2003_TAGS,
    TaggedSentence,
    check_tags,
    read_conll2003,
    read_conll_file,
)

FOUR_COLUMNS = (
    "-DOCSTART- -X- -X- O\n\n"
    "EU NNP B-NP B-ORG\nrejects VBZ B-VP O\n\n"
    "Peter NNP B-NP B-PER\nBlackburn NNP I-NP I-PER\n\n"
    "-DOCSTART- -X- -X- O\n\n"
    "BRUSSELS NNP B-NP B-LOC\n1996-08-22 CD I-NP O\n"
)


def _write(root, name, text):
    path = root / name
    path.write_text(text, encoding="utf-8")
    return path


def test_four_columns_give_words_tags_pos_chunks_and_documents(tmp_path):
    sentences = read_conll_file(_write(tmp_path, "train.txt", FOUR_COLUMNS))
    assert [s.words for s in sentences] == [
        ("EU", "rejects"),
        ("Peter", "Blackburn"),
        ("BRUSSELS", "1996-08-22"),
    ]
    assert sentences[1].tags == ("B-PER", "I-PER")
    assert sentences[0].pos_tags == ("NNP", "VBZ") and sentences[0].chunk_tags == ("B-NP", "B-VP")
    assert [s.document for s in sentences] == [0, 0, 1]


def test_two_columns_a_missing_final_blank_and_no_docstart(tmp_path):
    path = _write(tmp_path, "two.txt", "\n\nParis B-LOC\nis O\n\n\nBob\tB-PER\r\n")
    sentences = read_conll_file(path)
    assert sentences == [
        TaggedSentence(("Paris", "is"), ("B-LOC", "O")),
        TaggedSentence(("Bob",), ("B-PER",)),
    ]
    assert all(s.document == 0 and s.pos_tags == () == s.chunk_tags for s in sentences)
    # A tag in another column: the first column after the word.
    path = _write(tmp_path, "three.txt", "Paris B-LOC NNP\n")
    assert read_conll_file(path, tag_column=1)[0].tags == ("B-LOC",)


def test_text_and_word_offsets_agree():
    sentence = TaggedSentence(
        ("EU", "rejects", "German", "call", "."), ("B-ORG", "O", "B-MISC", "O", "O")
    )
    text = sentence.text()
    assert text == "EU rejects German call ."
    assert [text[start:end] for start, end in sentence.word_offsets()] == list(sentence.words)
    assert TaggedSentence((), ()).word_offsets() == []


def test_malformed_lines_name_the_file_and_line(tmp_path):
    path = _write(tmp_path, "bad.txt", "-DOCSTART- -X- -X- O\n\nEU NNP B-NP B-ORG\nrejects VBZ O\n")
    with pytest.raises(
        ValueError,
        match=r"bad\.txt:4: expected 4 columns, as on the file's "
        r"first token line; found 3 in 'rejects VBZ O'",
    ):
        read_conll_file(path)
    path = _write(tmp_path, "bad.txt", "EU B-ORG\n B-PER\n")
    with pytest.raises(
        ValueError,
        match=r"bad\.txt:2: expected a word in the first column; "
        r"found leading whitespace",
    ):
        read_conll_file(path)
    path = _write(tmp_path, "bad.txt", "EU\nrejects\n")
    with pytest.raises(
        ValueError,
        match=r"bad\.txt:1: expected a word and a tag in column -1; "
        r"found 1 column\(s\)",
    ):
        read_conll_file(path)
    path = _write(tmp_path, "bad.txt", "EU B-ORG\n")
    with pytest.raises(ValueError, match=r"bad\.txt:1: expected a word and a tag in column 2"):
        read_conll_file(path, tag_column=2)


def test_check_tags_names_the_sentence_word_and_tag():
    sentences = [
        TaggedSentence(("EU",), ("B-ORG",)),
        TaggedSentence(("Paris", "is"), ("O", "U-LOC")),
    ]
    with pytest.raises(
        ValueError,
        match=r"sentence 1: word 'is' has tag 'U-LOC'; expected one "
        r"of \('O', 'B-PER'",
    ):
        check_tags(sentences, CONLL2003_TAGS)
    check_tags(sentences[:1], CONLL2003_TAGS)


def test_splits_are_checked_and_files_found_under_conll2003(tmp_path):
    with pytest.raises(
        ValueError,
        match=r"split must be one of \('train', 'validation', "
        r"'test'\); received 'valid'",
    ):
        read_conll2003("valid", data_dir=tmp_path)
    (tmp_path / "conll2003").mkdir()
    _write(tmp_path / "conll2003", "valid.txt", FOUR_COLUMNS)
    assert len(read_conll2003("validation", data_dir=tmp_path)) == 3
    assert len(read_conll2003("validation", data_dir=tmp_path, max_sentences=2)) == 2
    _write(tmp_path / "conll2003", "valid.txt", "EU NNP B-NP B-ORGANIZATION\n")
    with pytest.raises(ValueError, match="sentence 0: word 'EU' has tag 'B-ORGANIZATION'"):
        read_conll2003("validation", data_dir=tmp_path)


def test_without_a_local_copy_the_pinned_github_file_is_downloaded(tmp_path, monkeypatch):
    import keras

    requested = []
    download = _write(tmp_path, "download.txt", FOUR_COLUMNS)
    monkeypatch.setattr(
        keras.utils, "get_file", lambda name, url, **kwargs: requested.append(url) or str(download)
    )
    monkeypatch.setenv("KBERT_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "empty").mkdir()
    assert len(read_conll2003("test", data_dir=tmp_path / "empty")) == 3
    assert requested == [
        "https://raw.githubusercontent.com/kamalkraj/BERT-NER/"
        "e5be564156f194f1becb0d82aeaf6e762d9eb9ed/data/test.txt"
    ]


# The real files read in well under a second each, so these stay in the fast tier.
def test_real_train_has_the_documented_counts(data_root):
    sentences = read_conll2003("train", data_dir=data_root)
    assert len(sentences) == 14_041  # SOURCE.md
    assert sum(len(s.words) for s in sentences) == 203_621
    assert len({s.document for s in sentences}) == 946 and sentences[-1].document == 945
    assert sentences[0].text() == "EU rejects German call to boycott British lamb ."
    begins = [tag[2:] for s in sentences for tag in s.tags if tag.startswith("B-")]
    counts = {entity: begins.count(entity) for entity in CONLL2003_ENTITY_TYPES}
    assert counts == {"PER": 6600, "LOC": 7140, "ORG": 6321, "MISC": 3438}
    for sentence in sentences[:500]:
        assert len(sentence.words) == len(sentence.tags) == len(sentence.pos_tags)
        text = sentence.text()
        assert [text[a:b] for a, b in sentence.word_offsets()] == list(sentence.words)


def test_real_validation_and_test_have_the_documented_counts(data_root):
    for split, count, tokens, documents in (
        ("validation", 3250, 51_362, 216),
        ("test", 3453, 46_435, 231),
    ):
        sentences = read_conll2003(split, data_dir=data_root)
        assert len(sentences) == count
        assert sum(len(s.words) for s in sentences) == tokens
        assert len({s.document for s in sentences}) == documents
    assert len(read_conll2003("test", data_dir=data_root, max_sentences=10)) == 10
