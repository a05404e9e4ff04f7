import json

import pytest

from kbert.data.seat import SETS, read_association_test


def _write(path, content):
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


def _valid():
    return {
        key: {"category": key.upper(), "examples": [f"{key} one.", f"{key} two."]} for key in SETS
    }


def test_a_test_file_is_read_with_its_four_sets(tmp_path):
    content = _valid()
    content["attr2"]["examples"].append("targ1 one.")  # shared with X: embedded once
    test = read_association_test(_write(tmp_path / "toy.jsonl", content))
    assert test.name == "toy" and test.categories == ("TARG1", "TARG2", "ATTR1", "ATTR2")
    assert test.x == ("targ1 one.", "targ1 two.") and test.b[-1] == "targ1 one."
    assert len(test.texts()) == 8


def test_a_name_is_looked_up_under_seat(tmp_path):
    (tmp_path / "seat").mkdir()
    _write(tmp_path / "seat" / "sent-toy.jsonl", _valid())
    assert read_association_test("sent-toy", data_dir=tmp_path).name == "sent-toy"
    with pytest.raises(ValueError, match="sent-missing.jsonl: no such SEAT/WEAT test file"):
        read_association_test("sent-missing", data_dir=tmp_path)


@pytest.mark.parametrize(
    "content, message",
    [
        ("{not json", "cannot be read as JSON"),
        ([1, 2], "expected one JSON object"),
        ({"targ1": {}}, "missing targ2, attr1, attr2"),
        ({**_valid(), "attr1": {"category": "A", "examples": []}}, "attr1 must be"),
        ({**_valid(), "targ2": {"category": 3, "examples": ["x"]}}, "targ2 must be"),
        ({**_valid(), "targ1": {"category": "X", "examples": ["x", ""]}}, "targ1 must be"),
    ],
)
def test_a_malformed_file_is_refused_naming_it(tmp_path, content, message):
    path = _write(tmp_path / "bad.jsonl", content)
    with pytest.raises(ValueError, match=message) as caught:
        read_association_test(path)
    assert "bad.jsonl" in str(caught.value)
