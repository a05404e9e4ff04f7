import json

import numpy as np
import pytest

from kbert.data import LabelVocabulary


def test_encode_and_decode_round_trip_in_name_order():
    vocabulary = LabelVocabulary(["entailment", "not_entailment"])
    ids = vocabulary.encode(["not_entailment", "entailment", "not_entailment"])
    assert ids.dtype == np.int32 and ids.tolist() == [1, 0, 1]
    assert vocabulary.decode(ids) == ["not_entailment", "entailment", "not_entailment"]
    assert vocabulary.names == ("entailment", "not_entailment") and len(vocabulary) == 2
    assert vocabulary.encode([]).shape == (0,) and vocabulary.decode([]) == []


def test_int_names_and_numpy_values_are_plain_python():
    vocabulary = LabelVocabulary(np.array([0, 1]))
    assert vocabulary.names == (0, 1) and all(type(name) is int for name in vocabulary.names)
    assert vocabulary.encode(np.array([1, 0, 1])).tolist() == [1, 0, 1]
    assert vocabulary.decode(np.array([1, 0], dtype=np.int64)) == [1, 0]


def test_from_labels_is_sorted_and_unique():
    assert LabelVocabulary.from_labels(["NUM", "ABBR", "NUM", "HUM"]).names == (
        "ABBR",
        "HUM",
        "NUM",
    )
    assert LabelVocabulary.from_labels(np.array([1, 0, 1])).names == (0, 1)
    with pytest.raises(ValueError, match="all be str or all be int.*int, str"):
        LabelVocabulary.from_labels(["a", 1])


def test_json_round_trip_for_a_run_directory(tmp_path):
    for names in (["b", "a", "c"], [0, 1]):
        vocabulary = LabelVocabulary(names)
        (tmp_path / "labels.json").write_text(json.dumps(vocabulary.to_json()))
        loaded = LabelVocabulary.from_json(json.loads((tmp_path / "labels.json").read_text()))
        assert loaded == vocabulary and loaded.names == tuple(names)
        assert LabelVocabulary.from_json(json.dumps(vocabulary.to_json())) == vocabulary
    assert hash(LabelVocabulary(["a"])) == hash(LabelVocabulary(["a"]))
    assert LabelVocabulary([0, 1]) != LabelVocabulary(["0", "1"])
    with pytest.raises(ValueError, match="expected a JSON list of label names; received dict"):
        LabelVocabulary.from_json({"names": ["a"]})
    with pytest.raises(ValueError, match="expected a JSON list of label names; received '\\[a'"):
        LabelVocabulary.from_json("[a")


def test_unknown_label_names_the_label_the_source_and_the_known_labels():
    vocabulary = LabelVocabulary(["neg", "pos"])
    with pytest.raises(
        ValueError,
        match=r"unknown label 'neutral' in dev\.tsv; expected one of "
        r"the 2 known labels \['neg', 'pos'\]",
    ):
        vocabulary.encode(["pos", "neutral"], source="dev.tsv")
    with pytest.raises(ValueError, match="unknown label 1; expected"):
        LabelVocabulary(["0", "1"]).encode([1])
    with pytest.raises(ValueError, match="a list of names; received the string 'pos'"):
        vocabulary.encode("pos")


def test_decode_rejects_out_of_range_and_non_integer_ids():
    vocabulary = LabelVocabulary(["neg", "pos"])
    for bad in ([2], [-1]):
        with pytest.raises(ValueError, match=f"class id {bad[0]} is out of range: expected 0 to 1"):
            vocabulary.decode(bad)
    with pytest.raises(ValueError, match="ids must be integers; received dtype float"):
        vocabulary.decode([0.0, 1.0])
    with pytest.raises(ValueError, match=r"1-D sequence of class ids; received shape \(2, 1\)"):
        vocabulary.decode([[0], [1]])


def test_bad_names_are_refused_with_what_was_received():
    with pytest.raises(ValueError, match="duplicates 'a' in"):
        LabelVocabulary(["a", "b", "a"])
    with pytest.raises(ValueError, match="at least one name; received none"):
        LabelVocabulary([])
    with pytest.raises(ValueError, match=r"str or int; received 0\.5 \(float\)"):
        LabelVocabulary([0.5, 1.5])
    with pytest.raises(ValueError, match=r"str or int; received True \(bool\)"):
        LabelVocabulary([True, False])
    with pytest.raises(ValueError, match="received the string 'ab'"):
        LabelVocabulary("ab")
