"""Fast tests of the CoNLL entity scores, against hand-checked values and a conlleval port.

`_conlleval_chunks` is a transcription of conlleval's `startOfChunk`/`endOfChunk` rules (the
CoNLL-2000 Perl script) restricted to B/I/O tags; the decoder is checked against it on random tag
sequences, invalid "I-" tags included.
"""

import doctest
import random

import numpy as np
import pytest

from kbert.metrics import (
    bio_to_entities,
    entity_metrics,
    entity_report,
    entity_scores,
    repair_bio,
    token_accuracy,
)


def _split(tag):
    return ("O", "") if tag == "O" else (tag[0], tag[2:])


def _conlleval_chunks(tags):
    """Chunks as conlleval reads them: sentence start is prevTag "O", prevType ""."""
    chunks, start = [], None
    prev_tag, prev_type = "O", ""
    for position, full_tag in enumerate([*tags, "O"]):  # the sentence boundary closes a chunk
        tag, entity_type = _split(full_tag)
        chunk_end = (prev_tag in ("B", "I") and tag in ("B", "O")) or (
            prev_tag != "O" and prev_type != entity_type
        )
        chunk_start = (
            tag == "B"
            or (prev_tag == "O" and tag == "I")
            or (tag != "O" and prev_type != entity_type)
        )
        if chunk_end and start is not None:
            chunks.append((start, position, prev_type))
            start = None
        if chunk_start:
            start = position
        prev_tag, prev_type = tag, entity_type
    return chunks


def _random_tags(rng, length, types=("PER", "LOC")):
    return [rng.choice(["O", *(f"{p}-{t}" for p in "BI" for t in types)]) for _ in range(length)]


def test_bio_to_entities_decodes_valid_iob2_with_exclusive_end():
    tags = ["B-PER", "I-PER", "O", "B-LOC", "B-LOC", "I-LOC", "O", "B-ORG"]
    assert bio_to_entities(tags) == [(0, 2, "PER"), (3, 4, "LOC"), (4, 6, "LOC"), (7, 8, "ORG")]
    assert bio_to_entities(["O", "O"]) == []
    assert bio_to_entities([]) == []
    # Types may hold dashes; numpy string arrays are accepted.
    assert bio_to_entities(np.array(["B-ORG-X", "I-ORG-X"])) == [(0, 2, "ORG-X")]


def test_invalid_inside_tags_begin_an_entity_by_default():
    # I- first in the sentence, after O, and after another type: each begins a new entity.
    tags = ["I-PER", "I-PER", "O", "I-LOC", "B-PER", "I-LOC", "I-LOC"]
    expected = [(0, 2, "PER"), (3, 4, "LOC"), (4, 5, "PER"), (5, 7, "LOC")]
    assert bio_to_entities(tags) == expected
    assert bio_to_entities(tags, repair="begin") == expected
    assert repair_bio(tags) == ["B-PER", "I-PER", "O", "B-LOC", "B-PER", "B-LOC", "I-LOC"]


def test_invalid_inside_tags_are_outside_with_drop():
    tags = ["I-PER", "I-PER", "O", "I-LOC", "B-PER", "I-LOC", "I-LOC", "B-LOC", "I-LOC"]
    assert bio_to_entities(tags, repair="drop") == [(4, 5, "PER"), (7, 9, "LOC")]
    assert repair_bio(tags, repair="drop") == [
        "O",
        "O",
        "O",
        "O",
        "B-PER",
        "O",
        "O",
        "B-LOC",
        "I-LOC",
    ]


def test_repair_bio_output_is_valid_and_decodes_the_same():
    rng = random.Random(0)
    for _ in range(200):
        tags = _random_tags(rng, rng.randint(0, 12))
        for repair in ("begin", "drop"):
            repaired = repair_bio(tags, repair)
            assert len(repaired) == len(tags)
            assert bio_to_entities(repaired, repair) == bio_to_entities(tags, repair)
            # Valid IOB2: repairing again changes nothing, whichever rule.
            assert repair_bio(repaired, "begin") == repaired
            assert repair_bio(repaired, "drop") == repaired


def test_begin_rule_matches_conlleval_on_random_tags():
    rng = random.Random(1)
    for _ in range(500):
        tags = _random_tags(rng, rng.randint(0, 12))
        assert bio_to_entities(tags) == _conlleval_chunks(tags), tags


def test_hand_checked_conlleval_example():
    # Gold: PER (0, 2), LOC (3, 4). Predicted: PER (0, 1) (wrong end), LOC (3, 4).
    scores = entity_scores([["B-PER", "I-PER", "O", "B-LOC"]], [["B-PER", "O", "O", "B-LOC"]])
    assert (scores["num_gold"], scores["num_predicted"], scores["num_correct"]) == (2, 2, 1)
    assert scores["precision"] == pytest.approx(0.5)
    assert scores["recall"] == pytest.approx(0.5)
    assert scores["f1"] == pytest.approx(0.5)
    assert scores["per_type"] == {
        "LOC": {
            "precision": 1.0,
            "recall": 1.0,
            "f1": 1.0,
            "support": 1,
            "num_predicted": 1,
            "num_correct": 1,
        },
        "PER": {
            "precision": 0.0,
            "recall": 0.0,
            "f1": 0.0,
            "support": 1,
            "num_predicted": 1,
            "num_correct": 0,
        },
    }


def test_per_type_and_micro_numbers_over_several_sentences():
    gold = [
        ["B-PER", "I-PER", "O", "B-LOC", "O"],
        ["B-ORG", "O", "B-PER", "O"],
        ["O", "O"],
    ]
    predicted = [
        ["B-PER", "I-PER", "O", "B-ORG", "O"],  # PER right; LOC typed as ORG
        ["B-ORG", "O", "B-PER", "B-MISC"],  # ORG right, PER right, MISC spurious
        ["O", "I-LOC"],  # invalid I-LOC read as a LOC entity (conlleval)
    ]
    scores = entity_scores(gold, predicted)
    # Gold 4 (PER 2, LOC 1, ORG 1); predicted 6 (PER 2, ORG 2, MISC 1, LOC 1); correct 3.
    assert (scores["num_gold"], scores["num_predicted"], scores["num_correct"]) == (4, 6, 3)
    assert scores["precision"] == pytest.approx(3 / 6)
    assert scores["recall"] == pytest.approx(3 / 4)
    assert scores["f1"] == pytest.approx(2 * 3 / (6 + 4))
    assert list(scores["per_type"]) == ["LOC", "MISC", "ORG", "PER"]
    per_type = scores["per_type"]
    assert per_type["PER"]["f1"] == 1.0 and per_type["PER"]["support"] == 2
    assert per_type["ORG"]["precision"] == pytest.approx(0.5)
    assert per_type["ORG"]["recall"] == 1.0
    assert per_type["ORG"]["f1"] == pytest.approx(2 / 3)
    assert per_type["LOC"] == {
        "precision": 0.0,
        "recall": 0.0,
        "f1": 0.0,
        "support": 1,
        "num_predicted": 1,
        "num_correct": 0,
    }
    # A type only predicted: support 0, precision 0, recall 0/0 = 0.
    assert per_type["MISC"] == {
        "precision": 0.0,
        "recall": 0.0,
        "f1": 0.0,
        "support": 0,
        "num_predicted": 1,
        "num_correct": 0,
    }
    # Micro counts are the sums of the per-type counts.
    assert sum(v["support"] for v in per_type.values()) == scores["num_gold"]
    assert sum(v["num_correct"] for v in per_type.values()) == scores["num_correct"]


def test_entity_sets_input_allows_nested_spans_and_mixing_with_tags():
    gold = [{(0, 3, "ORG"), (2, 3, "LOC")}, [(1, 2, "PER")]]
    predicted = [{(0, 3, "ORG"), (2, 3, "PER")}, ["O", "B-PER", "O"]]
    scores = entity_scores(gold, predicted)
    assert (scores["num_gold"], scores["num_predicted"], scores["num_correct"]) == (3, 3, 2)
    assert scores["per_type"]["LOC"]["recall"] == 0.0
    assert scores["per_type"]["PER"]["num_correct"] == 1
    # Entity lists and tags of the same sentence score the same; a repeated triple counts once.
    tags = [["B-PER", "I-PER", "O", "B-LOC"]]
    as_entities = [[(0, 2, "PER"), (3, 4, "LOC"), (3, 4, "LOC")]]
    assert entity_scores(tags, tags) == entity_scores(as_entities, as_entities)
    assert entity_scores(as_entities, as_entities)["f1"] == 1.0


def test_empty_inputs_score_zero_without_error():
    for gold, predicted in [
        ([], []),
        ([[]], [[]]),
        ([["O", "O"]], [["O", "O"]]),
        ([set()], [["O"]]),
    ]:
        scores = entity_scores(gold, predicted)
        assert scores == {
            "precision": 0.0,
            "recall": 0.0,
            "f1": 0.0,
            "num_gold": 0,
            "num_predicted": 0,
            "num_correct": 0,
            "per_type": {},
        }
    # Nothing predicted: precision 0/0 = 0, recall 0.
    scores = entity_scores([["B-PER"]], [["O"]])
    assert (scores["precision"], scores["recall"], scores["f1"]) == (0.0, 0.0, 0.0)
    assert token_accuracy([], []) == 0.0
    assert token_accuracy([["O"]], [["B-PER"]], ignore_tags=("O",)) == 0.0


def test_token_accuracy_over_flattened_tags_and_ids():
    gold = [["B-PER", "I-PER", "O"], ["O", "B-LOC"]]
    predicted = [["B-PER", "O", "O"], ["O", "B-ORG"]]
    assert token_accuracy(gold, predicted) == pytest.approx(3 / 5)
    assert token_accuracy(gold, predicted, ignore_tags=("O",)) == pytest.approx(1 / 3)
    assert token_accuracy(gold, predicted, ignore_tags={"O", "B-LOC"}) == pytest.approx(1 / 2)
    # Tag ids in a padded (batch, length) array, -100 marking positions without a label.
    gold_ids = np.array([[1, 2, 0, -100], [0, 3, -100, -100]])
    predicted_ids = np.array([[1, 0, 0, 5], [0, 3, 7, 7]])
    assert token_accuracy(gold_ids, predicted_ids, ignore_tags=(-100,)) == pytest.approx(4 / 5)


def test_entity_report_is_a_percent_table_with_a_micro_row():
    scores = entity_scores(
        [["B-PER", "I-PER", "O", "B-LOC"], ["B-MISC"]],
        [["B-PER", "I-PER", "O", "B-ORG"], ["B-MISC"]],
    )
    report = entity_report(scores, digits=1)
    assert report.splitlines() == [
        "type   precision  recall     f1  support",
        "LOC          0.0     0.0    0.0        1",
        "MISC       100.0   100.0  100.0        1",
        "ORG          0.0     0.0    0.0        0",
        "PER        100.0   100.0  100.0        1",
        "----------------------------------------",
        "micro       66.7    66.7   66.7        3",
    ]
    assert "66.6667" in entity_report(scores, digits=4)
    assert entity_report(entity_scores([], [])).splitlines()[-1].startswith("micro")


def test_argument_errors_say_what_was_expected_and_received():
    with pytest.raises(ValueError, match=r"IOB2 .* received 'E-PER' at position 1"):
        bio_to_entities(["B-PER", "E-PER"])
    with pytest.raises(ValueError, match=r"received 'B-' at position 0"):
        bio_to_entities(["B-"])
    with pytest.raises(ValueError, match=r"received 'PER' at position 2"):
        repair_bio(["O", "O", "PER"])
    with pytest.raises(ValueError, match=r"received 3 at position 0"):
        bio_to_entities([3])
    with pytest.raises(ValueError, match=r'repair must be "begin" or "drop"; received \'strict\''):
        bio_to_entities(["O"], repair="strict")
    with pytest.raises(ValueError, match=r'repair must be "begin" or "drop"; received None'):
        repair_bio(["O"], repair=None)
    with pytest.raises(ValueError, match="tags must be an ordered sequence .* received str"):
        bio_to_entities("B-PER")
    with pytest.raises(
        ValueError,
        match=r"same number of sentences; received len\(gold\)=2 and "
        r"len\(predicted\)=1",
    ):
        entity_scores([["O"], ["O"]], [["O"]])
    with pytest.raises(
        ValueError, match="tags of sentence 1 must have the same length; received 2 and 3"
    ):
        entity_scores([["O"], ["O", "O"]], [["O"], ["O", "O", "O"]])
    # A flat tag list instead of a list of sentences.
    with pytest.raises(ValueError, match="gold sentence 0 must be an ordered sequence .* str"):
        entity_scores(["B-PER", "O"], ["B-PER", "O"])
    with pytest.raises(
        ValueError,
        match=r"predicted sentence 0 must hold \(start, end, type\) "
        r"entities; received \(0, 1\) at position 0",
    ):
        entity_scores([[(0, 1, "PER")]], [[(0, 1)]])
    with pytest.raises(ValueError, match=r"0 <= start < end .* received \(2, 2, 'PER'\)"):
        entity_scores([[(2, 2, "PER")]], [[]])
    with pytest.raises(ValueError, match=r"int start and end; received \(0.0, 1, 'PER'\)"):
        entity_scores([[(0.0, 1, "PER")]], [[]])
    with pytest.raises(ValueError, match=r"type is a str; received \(0, 1, 3\)"):
        entity_scores([{(0, 1, 3)}], [[]])
    with pytest.raises(ValueError, match=r"received 'B-PER' at position 1"):
        entity_scores([[(0, 1, "PER"), "B-PER"]], [[]])
    with pytest.raises(
        ValueError, match="tags of sentence 0 must have the same length; received 1 and 2"
    ):
        token_accuracy([[1]], [[1, 2]])
    with pytest.raises(ValueError, match=r"len\(gold\)=1 and len\(predicted\)=0"):
        token_accuracy([["O"]], [])
    with pytest.raises(ValueError, match=r"ignore_tags must be a collection .* received str 'O'"):
        token_accuracy([["O"]], [["O"]], ignore_tags="O")
    with pytest.raises(ValueError, match="digits must be an int >= 0; received -1"):
        entity_report(entity_scores([], []), digits=-1)
    with pytest.raises(ValueError, match="scores must be the dict returned by entity_scores"):
        entity_report({"f1": 0.5})


def test_docstring_examples_run():
    results = doctest.testmod(entity_metrics)
    assert results.attempted > 0 and results.failed == 0
