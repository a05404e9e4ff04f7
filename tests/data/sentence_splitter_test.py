"""Fast tests of split_sentences: where it splits, where it must not, and its documented limits."""

import pytest

from kbert.data import split_sentences


def test_splits_at_terminal_marks_before_whitespace():
    assert split_sentences("It rained. Then it stopped! Did it? Yes") == [
        "It rained.",
        "Then it stopped!",
        "Did it?",
        "Yes",
    ]


def test_closing_quotes_and_brackets_stay_with_their_sentence():
    assert split_sentences('He said "go." She went. (It was late.) Fine?!" Done') == [
        'He said "go."',
        "She went.",
        "(It was late.)",
        'Fine?!"',
        "Done",
    ]


def test_numbers_urls_lowercase_continuations_and_wikitext_separators_do_not_split():
    text = "Pi is 3.14 and example.com works, e.g. here. The value was 0 @.@ 7 kg . Next one"
    assert split_sentences(text) == [
        "Pi is 3.14 and example.com works, e.g. here.",
        "The value was 0 @.@ 7 kg .",
        "Next one",
    ]


def test_blank_lines_always_split_and_single_line_breaks_only_on_request():
    text = "A heading\n\nwrapped line one\nline two. Next\n \nLast"
    assert split_sentences(text) == ["A heading", "wrapped line one\nline two.", "Next", "Last"]
    assert split_sentences(text, line_breaks_end_sentences=True) == [
        "A heading",
        "wrapped line one",
        "line two.",
        "Next",
        "Last",
    ]


def test_known_limit_capitalized_word_after_an_abbreviation_splits():
    assert split_sentences("Mr. Smith came.") == ["Mr.", "Smith came."]


def test_empty_text_and_bad_input():
    assert split_sentences("") == []
    assert split_sentences("  \n\n ") == []
    with pytest.raises(ValueError, match="text must be a str; received list"):
        split_sentences(["a"])
