"""Reading a headed, tab-separated file line by line, as the GLUE readers need."""

_BOM = b"\xef\xbb\xbf"


def text_lines(path):
    """Yields `(line_number, line)` of a UTF-8 text file, refusing binary content by line.

    Lines end at \\n, \\r\\n or \\r only, as in csv and text-mode `open` (str.splitlines would
    also split on characters such as U+0085 inside a sentence); the line end is dropped, and so
    is a UTF-8 byte-order mark at the start. The file is read as bytes and each line decoded on
    its own, so an error names the line: a \\r or \\n byte never occurs inside a multi-byte
    UTF-8 character, so splitting bytes first is safe.

    Args:
        path: str or Path.

    Raises:
        ValueError: a line is not valid UTF-8 or holds a NUL byte (a binary file, or UTF-16
            text), naming `path:line`.

    Example:
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "a.tsv"
    >>> _ = path.write_bytes(b"x\\ty\\r\\nz\\n")
    >>> list(text_lines(path))
    [(1, 'x\\ty'), (2, 'z')]
    """
    number = 0
    with open(path, "rb") as file:
        for raw in file:  # split at b"\n"
            if number == 0 and raw.startswith(_BOM):
                raw = raw[len(_BOM) :]
            raw = raw[:-1] if raw.endswith(b"\n") else raw
            raw = raw[:-1] if raw.endswith(b"\r") else raw
            for piece in raw.split(b"\r"):
                number += 1
                yield number, _decode(piece, path, number)


def _decode(data, path, number):
    """One line's bytes as str; binary content is an error naming `path:number`."""
    try:
        line = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(
            f"{path}:{number}: byte {data[error.start : error.start + 1]!r} (byte "
            f"{error.start + 1} of the line) is not valid UTF-8; expected UTF-8 text, not a "
            "binary file or another encoding (UTF-16, Latin-1)"
        ) from None
    if "\0" in line:
        raise ValueError(
            f"{path}:{number}: NUL byte (character {line.index(chr(0)) + 1} of the line); "
            "expected UTF-8 text, and NUL bytes mean a binary file or UTF-16 text"
        )
    return line


def tsv_rows(path, header):
    """Yields `(line_number, fields)` for each non-blank line after a checked header.

    The file is read by `text_lines`: split on \\n, \\r\\n and \\r only, a UTF-8 byte-order mark
    dropped, each line strict UTF-8 without NUL bytes. Fields are not unquoted (GLUE's files use
    QUOTE_NONE).

    Args:
        path: str or Path.
        header: list of str. The expected first line's fields.

    Raises:
        ValueError: the first line is not `header`, naming `path:1`; a line is not UTF-8 text
            (see `text_lines`), naming `path:line`.
    """
    lines = text_lines(path)
    _, first = next(lines, (1, ""))
    if first.split("\t") != list(header):
        raise ValueError(
            f"{path}:1: expected the header '{'<TAB>'.join(header)}'; found {first[:60]!r}"
        )
    for number, line in lines:
        if line.strip():
            yield number, line.split("\t")
