import pytest

from kbert.analysis.data_slices import QUESTION_WORDS, data_slices

QUESTIONS = [
    "What is the capital of France ?",
    "Who wasn't at the Boston Tea Party in 1773 ?",
    "How many legs does a spider have ?",
    "Name a flying mammal .",
    "Why do we never see the far side of the moon from the surface of the Earth at all ?",
]


def test_each_rule_picks_the_questions_it_names():
    slices = data_slices(QUESTIONS, short_words=5, long_words=15)  # 6, 10, 7, 4, 19 words
    assert slices["question:what"].tolist() == [True, False, False, False, False]
    assert slices["question:other"].tolist() == [False, False, False, True, False]
    assert slices["negation"].tolist() == [False, True, False, False, True]
    assert slices["number"].tolist() == [False, True, False, False, False]
    assert slices["how_many_much"].tolist() == [False, False, True, False, False]
    assert slices["capitalised"].tolist() == [True, True, False, False, True]
    assert slices["length:short"].tolist() == [False, False, False, True, False]
    assert slices["length:long"].tolist() == [False, False, False, False, True]


def test_the_question_words_cover_every_text_once():
    slices = data_slices(QUESTIONS)
    family = [slices[f"question:{word}"] for word in QUESTION_WORDS] + [slices["question:other"]]
    assert [int(sum(column)) for column in zip(*family, strict=True)] == [1] * len(QUESTIONS)


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"texts": "What ?"}, "texts must be a list of str"),
        ({"texts": QUESTIONS, "short_words": 0}, "short_words must be an int >= 1"),
        ({"texts": QUESTIONS, "short_words": 6, "long_words": 6}, "long_words must be an int >= 7"),
    ],
)
def test_bad_settings_are_refused(arguments, message):
    with pytest.raises(ValueError, match=message):
        data_slices(**arguments)
