"""BPE merges learned from word counts: the textbook's worked example, and the fast counting
checked against recounting from scratch."""

import collections
import random

import pytest

from kbert.text.byte_pair_trainer import (
    byte_level_alphabet,
    learn_merges,
    word_symbols,
)

CHAPTER = {"low": 5, "lower": 2, "newest": 6, "widest": 3}


def test_the_chapters_worked_example():
    merges, vocabulary = learn_merges(CHAPTER, num_merges=4)
    assert merges == [("e", "s"), ("es", "t"), ("est", "</w>"), ("l", "o")]
    base = sorted(set("lowernewstid") | {"</w>"})
    assert vocabulary == base + ["es", "est", "est</w>", "lo"]
    # A vocabulary-size limit stops at the same point.
    assert learn_merges(CHAPTER, vocabulary_size=len(base) + 4)[0] == merges


def test_the_end_of_word_marker_can_be_fused_to_the_last_character():
    merges, _ = learn_merges(CHAPTER, num_merges=2, end_of_word_attached=True)
    assert merges == [("e", "s"), ("es", "t</w>")]


def _recounted_merges(word_counts, num_merges, min_frequency):
    """The textbook's loop as written: recount every pair after every merge."""
    words = {word_symbols(word): count for word, count in word_counts.items()}
    merges = []
    for _ in range(num_merges):
        pairs = collections.Counter()
        for symbols, count in words.items():
            for pair in zip(symbols, symbols[1:], strict=False):
                pairs[pair] += count
        if not pairs:
            break
        best = min(pairs, key=lambda pair: (-pairs[pair], pair))
        if pairs[best] < min_frequency:
            break
        merges.append(best)
        merged = {}
        for symbols, count in words.items():
            out, index = [], 0
            while index < len(symbols):
                if symbols[index : index + 2] == best:
                    out.append(best[0] + best[1])
                    index += 2
                else:
                    out.append(symbols[index])
                    index += 1
            merged[tuple(out)] = merged.get(tuple(out), 0) + count
        words = merged
    return merges


@pytest.mark.parametrize("seed", range(5))
def test_incremental_counting_equals_recounting(seed):
    rng = random.Random(seed)
    words = {
        "".join(rng.choice("aabbbcd") for _ in range(rng.randint(1, 7))): rng.randint(1, 9)
        for _ in range(40)
    }
    assert learn_merges(words, num_merges=30, min_frequency=2)[0] == _recounted_merges(words, 30, 2)


def test_byte_level_starts_from_all_256_bytes():
    alphabet = byte_level_alphabet()
    assert len(set(alphabet)) == 256 and all(len(symbol) == 1 for symbol in alphabet)
    assert all(not symbol.isspace() for symbol in alphabet)
    merges, vocabulary = learn_merges({" the": 5, " then": 3}, num_merges=2, byte_level=True)
    assert set(alphabet) <= set(vocabulary) and len(vocabulary) == 258
    # Ties go to the pair that sorts first ("Ġ", the space byte, sorts after letters).
    assert merges == [("h", "e"), ("t", "he")]


def test_reserved_tokens_open_the_vocabulary():
    _, vocabulary = learn_merges(CHAPTER, num_merges=1, reserved_tokens=["[UNK]", "[PAD]"])
    assert vocabulary[:2] == ["[UNK]", "[PAD]"] and vocabulary[-1] == "es"


def test_training_stops_below_min_frequency():
    merges, _ = learn_merges({"ab": 1, "cd": 1}, num_merges=10)
    assert merges == []
    assert learn_merges({"ab": 1}, num_merges=10, min_frequency=1)[0] == [
        ("a", "b"),
        ("ab", "</w>"),
    ]


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({}, "give vocabulary_size or num_merges"),
        ({"num_merges": -1}, "num_merges must be a non-negative integer; received -1"),
        ({"num_merges": 2, "min_frequency": 0}, "min_frequency must be an integer >= 1"),
        ({"vocabulary_size": 3}, "vocabulary_size must be at least the 11 reserved and base"),
    ],
)
def test_bad_arguments_are_named(arguments, message):
    with pytest.raises(ValueError, match=message):
        learn_merges(CHAPTER, **arguments)


def test_a_bad_count_names_the_word():
    with pytest.raises(ValueError, match="positive integers; received 0 for 'low'"):
        learn_merges({"low": 0}, num_merges=1)
