"""Fast tests of read_wikitext on a small file in the raw layout; the slow tier reads the real one."""

import pytest

from kbert.data import count_whitespace_words, read_wikitext

RAW = (
    " \n"
    " = First article = \n"
    " \n"
    " Intro paragraph , with words . \n"
    " \n"
    " = = Section = = \n"
    " \n"
    " Text of the section with a formula \n"
    " = 1 henry and capacitance C = \n"  # not a heading: no blank lines around it
    " 1 farad . \n"
    " \n"
    " = = = Subsection = = = \n"
    " \n"
    " More text . \n"
    " \n"
    " = Second article = \n"
    " \n"
    " Only paragraph . \n"
)


def write_raw(root, split="valid", folder="wikitext2"):
    (root / folder).mkdir(exist_ok=True)
    (root / folder / f"wiki.{split}.raw").write_text(RAW)


def test_articles_start_at_titles_and_keep_every_word(tmp_path):
    write_raw(tmp_path)
    documents = read_wikitext("valid", data_dir=tmp_path)
    assert documents == [
        [
            "= First article =",
            "Intro paragraph , with words .",
            "= = Section = =",
            "Text of the section with a formula",
            "= 1 henry and capacitance C =",
            "1 farad .",
            "= = = Subsection = = =",
            "More text .",
        ],
        ["= Second article =", "Only paragraph ."],
    ]
    assert sum(count_whitespace_words(documents)) == len(RAW.split())


def test_headings_can_be_dropped(tmp_path):
    write_raw(tmp_path, split="test", folder="wikitext103")
    documents = read_wikitext(
        "test", variant="wikitext-103", data_dir=tmp_path, keep_headings=False
    )
    assert documents == [
        [
            "Intro paragraph , with words .",
            "Text of the section with a formula",
            "= 1 henry and capacitance C =",
            "1 farad .",
            "More text .",
        ],
        ["Only paragraph ."],
    ]


def test_bad_arguments_are_named(tmp_path):
    with pytest.raises(ValueError, match=r"WikiText split must be one of .*received 'dev'"):
        read_wikitext("dev")
    with pytest.raises(ValueError, match=r"WikiText variant must be one of .*'wikitext-3'"):
        read_wikitext("valid", variant="wikitext-3")
    with pytest.raises(ValueError, match="does not exist"):
        read_wikitext("valid", data_dir=tmp_path / "missing")


@pytest.mark.slow
def test_real_valid_and_test_have_60_articles_and_the_documented_words(data_root):
    for split, words in (("valid", 213_886), ("test", 241_211)):  # SOURCE.md
        articles = read_wikitext(split, data_dir=data_root)
        assert len(articles) == 60
        assert sum(count_whitespace_words(articles)) == words
    assert read_wikitext("valid", data_dir=data_root)[0][0] == "= Homarus gammarus ="
    assert read_wikitext("test", data_dir=data_root)[0][0] == "= Robert Boulter ="


@pytest.mark.slow
def test_train_comes_from_the_download_or_fails_clearly(data_root):
    # Not on the course machines: offline this must be a clear error, online the real split.
    try:
        articles = read_wikitext("train", data_dir=data_root)
    except ValueError as error:
        assert "wikitext-2 train is not available" in str(error)
        assert "wikitext-2-raw-v1.zip" in str(error) and "KBERT_DATA_DIR" in str(error)
    else:
        assert len(articles) == 600
