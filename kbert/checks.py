"""Argument checks shared by every kbert module: one place for "must be an int" and its kin.

Each check raises a `ValueError` that names the argument, says what was expected and shows what
was received, and returns the value in its plain Python type. `bool` is refused where an int is
expected (it is an int subclass, and `True` as a vocabulary size is a mistake, not 1); NumPy
integers are accepted.

Example:
>>> check_int("num_layers", 4, minimum=1)
4
>>> check_int("rank", 0, minimum=1, expected="a positive int")
Traceback (most recent call last):
...
ValueError: rank must be a positive int; received 0
"""

import numbers


def _describe(minimum, maximum):
    if minimum is not None and maximum is not None:
        return f"an int in [{minimum}, {maximum}]"
    if minimum is not None:
        return f"an int >= {minimum}"
    if maximum is not None:
        return f"an int <= {maximum}"
    return "an int"


def check_int(name, value, minimum=None, maximum=None, expected=None):
    """Returns `value` as an int if it is an integer within `[minimum, maximum]`.

    Args:
        name: str. The argument's name, as the user wrote it (e.g. "--batch-size").
        value: the value to check.
        minimum: int or None, default None. The smallest allowed value.
        maximum: int or None, default None. The largest allowed value.
        expected: str or None, default None. What the message says was expected (e.g. "a
            positive int"); by default it is worked out from the bounds ("an int >= 1",
            "an int in [0, 5]").

    Returns:
        int.

    Raises:
        ValueError: `{name} must be {expected}; received {value!r}`.
    """
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Integral)
        or (minimum is not None and value < minimum)
        or (maximum is not None and value > maximum)
    ):
        raise ValueError(
            f"{name} must be {expected or _describe(minimum, maximum)}; received {value!r}"
        )
    return int(value)


def check_positive_int(name, value):
    """`check_int(name, value, minimum=1, expected="a positive int")`."""
    return check_int(name, value, minimum=1, expected="a positive int")
