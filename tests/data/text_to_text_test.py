"""Tasks written as text in, text out, and scored from generated text."""

import numpy as np
import pytest

from kbert.data import Examples, LabelVocabulary
from kbert.data.squad import SquadExample
from kbert.data.text_to_text import (
    classification_accuracy,
    classification_pairs,
    squad_pairs,
    squad_scores,
)

SST2 = Examples(
    ["a charming journey .", "dull and long ."],
    None,
    np.array([1, 0], "int32"),
    LabelVocabulary(["negative", "positive"]),
    "test",
)


def test_classification_becomes_label_words_and_is_scored_from_text():
    inputs, targets = classification_pairs("sst2", SST2)
    assert inputs == ["sst2 sentence: a charming journey .", "sst2 sentence: dull and long ."]
    assert targets == ["positive", "negative"]
    scores = classification_accuracy("sst2", ["Positive ", "great"], SST2)
    assert scores == {"accuracy": 0.5, "invalid": 0.5}  # "great" is no label word
    with pytest.raises(ValueError, match="task must be one of"):
        classification_pairs("mnli", SST2)
    with pytest.raises(ValueError, match="generated has 1 texts for 2 examples"):
        classification_accuracy("sst2", ["positive"], SST2)


def test_squad_is_question_and_context_to_answer():
    example = SquadExample(
        "q1", "Paris", "Paris is in France.", "Where is Paris?", (("France", 12), ("in France", 9))
    )
    inputs, targets = squad_pairs([example])
    assert inputs == ["question: Where is Paris? context: Paris is in France."]
    assert targets == ["France"]
    assert squad_scores(["the France"], [example]) == {"exact_match": 100.0, "f1": 100.0}
    scores = squad_scores(["Paris"], [example])
    assert scores["exact_match"] == 0.0 and scores["f1"] == 0.0
