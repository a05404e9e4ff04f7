"""Argument types shared by the labs, benchmarks and CLI: one place for "must be …" checks.

Each factory returns a callable for `argparse`'s `type=`, so a bad value is refused when the
arguments are parsed, before any work, with a message that names the flag, what was expected
and what was received.
"""

import argparse


def comma_separated(kind=int, minimum=None, strictly_greater=False):
    """An `argparse` type for a comma-separated list such as "100,500" or "1e-4,3e-4".

    Args:
        kind: int or float, default int. Each value's type.
        minimum: number or None. The smallest value allowed.
        strictly_greater: bool, default False. Values must exceed `minimum`, not just reach it.

    Returns:
        callable `text → list`, raising `argparse.ArgumentTypeError` for an empty list, a value
        that is not a `kind`, or one below the minimum.

    Example:
    >>> comma_separated(int, minimum=1)("100, 500")
    [100, 500]
    >>> comma_separated(float, minimum=0, strictly_greater=True)("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be comma-separated numbers > 0; received '0'
    """
    noun = "integers" if kind is int else "numbers"
    bound = "" if minimum is None else f" {'>' if strictly_greater else '>='} {minimum:g}"

    def parse(text):
        try:
            values = [kind(value) for value in str(text).split(",") if value.strip()]
        except ValueError:
            values = []
        below = minimum is not None and any(
            value <= minimum if strictly_greater else value < minimum for value in values
        )
        if not values or below:
            raise argparse.ArgumentTypeError(
                f"must be comma-separated {noun}{bound}; received {text!r}"
            )
        return values

    return parse
