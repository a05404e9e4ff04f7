"""Tasks written as text in, text out, and scored from generated text."""

import keras
import numpy as np
import pytest

from kbert.data import Examples, LabelVocabulary
from kbert.data.squad import SquadExample
from kbert.data.text_to_text import (
    classification_accuracy,
    classification_pairs,
    generate_texts,
    squad_pairs,
    squad_scores,
    text_to_text_dataset,
)
from kbert.models.encoder_decoder import EncoderDecoder
from kbert.text import WordPieceTokenizer
from tests.text.text_test_case import TINY_VOCABULARY

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


def test_text_to_text_fine_tuning_learns_label_words_and_generates_them():
    """End to end on tiny shapes: pairs → batches → `fit` → generated strings → accuracy."""
    tokenizer = WordPieceTokenizer(TINY_VOCABULARY)
    inputs = ["the cat sat", "hello world", "the cat", "hello"] * 8
    targets = ["cat", "hello world", "cat", "hello world"] * 8
    batches = text_to_text_dataset(inputs, targets, tokenizer, 8, target_length=4, seed=0)
    x, y = next(iter(batches))
    assert set(x) == {
        "encoder_token_ids",
        "encoder_padding_mask",
        "decoder_token_ids",
        "decoder_padding_mask",
    }
    assert y.shape[1] == 3  # "hello world" + [SEP]; "cat" + [SEP] padded with -100
    keras.utils.set_random_seed(0)
    model = EncoderDecoder.from_preset("tiny", vocabulary_size=len(TINY_VOCABULARY), dropout=0.0)
    model.compile(optimizer=keras.optimizers.Adam(3e-3))
    model.fit(batches, epochs=30, verbose=0)
    generated = generate_texts(model, tokenizer, ["the cat sat", "hello"], max_new_tokens=4)
    assert generated == ["cat", "hello world"]
    beam = generate_texts(model, tokenizer, ["the cat sat"], 4, strategy="beam", num_beams=2)
    assert beam == ["cat"]
    with pytest.raises(ValueError, match="inputs and targets must be non-empty lists of one"):
        text_to_text_dataset(["a"], [], tokenizer, 2)
    with pytest.raises(ValueError, match="strategy must be greedy or beam"):
        generate_texts(model, tokenizer, ["a"], 2, strategy="top_p")
