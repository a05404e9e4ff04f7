import numpy as np
import pytest

from kbert.checks import check_int, check_positive_int


@pytest.mark.parametrize("value", [3, np.int32(3), np.int64(3)])
def test_integers_pass_as_python_ints(value):
    checked = check_int("size", value, minimum=1, maximum=5)
    assert checked == 3 and type(checked) is int


@pytest.mark.parametrize(
    "value,kwargs,message",
    [
        (True, {}, "size must be an int; received True"),
        (2.0, {"minimum": 1}, "size must be an int >= 1; received 2.0"),
        ("3", {"minimum": 1}, "size must be an int >= 1; received '3'"),
        (0, {"minimum": 1}, "size must be an int >= 1; received 0"),
        (6, {"maximum": 5}, "size must be an int <= 5; received 6"),
        (6, {"minimum": 0, "maximum": 5}, r"size must be an int in \[0, 5\]; received 6"),
        (
            0,
            {"minimum": 2, "expected": "an integer >= 2"},
            "size must be an integer >= 2; received 0",
        ),
    ],
)
def test_a_bad_value_is_named_with_what_was_expected(value, kwargs, message):
    with pytest.raises(ValueError, match=f"^{message}$"):
        check_int("size", value, **kwargs)


def test_positive_int():
    assert check_positive_int("rank", 1) == 1
    with pytest.raises(ValueError, match="^rank must be a positive int; received 0$"):
        check_positive_int("rank", 0)
