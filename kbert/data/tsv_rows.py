"""Reading a headed, tab-separated file line by line, as the GLUE readers need."""


def tsv_rows(path, header):
    """Yields `(line_number, fields)` for each non-blank line after a checked header.

    The file is split on \\n, \\r\\n and \\r only, as csv does (str.splitlines would also split on
    characters such as U+0085 inside a sentence); a UTF-8 byte-order mark is dropped. Fields are
    not unquoted (GLUE's files use QUOTE_NONE).

    Args:
        path: str or Path.
        header: list of str. The expected first line's fields.

    Raises:
        ValueError: the first line is not `header`, naming `path:1`.
    """
    with open(path, encoding="utf-8-sig") as lines:
        first = next(lines, "").rstrip("\r\n")
        if first.split("\t") != list(header):
            raise ValueError(f"{path}:1: expected the header '{'<TAB>'.join(header)}'; found "
                             f"{first[:60]!r}")
        for number, line in enumerate(lines, start=2):
            line = line.rstrip("\r\n")
            if line.strip():
                yield number, line.split("\t")
