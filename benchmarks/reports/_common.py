"""What every record family's rendering shares: Markdown tables, a record's provenance line."""

# A row whose test mean is within this of the majority class gets a note: what other records
# measured of it, or that nothing explains the row yet.
NEAR_MAJORITY = 0.1
UNEXPLAINED = "no measured explanation is recorded"


def markdown_table(header, rows):
    """A Markdown table: `header` (cell texts) over `rows` (lists of cells, formatted by `str`)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def provenance(record):
    """The line under a section's title: the record's command, commit, date, time and machine."""
    machine = record["machine"]
    dirty = " (with uncommitted changes)" if record.get("dirty") else ""
    return (
        f"Command: `{record['command']}`; commit `{(record['commit'] or 'unknown')[:10]}`"
        f"{dirty}; {record['date']}; wall time {record['wall_seconds']:,.0f} s; "
        f"{machine['cpu']}, {machine['cores']} cores, {machine['memory_gib']} GiB."
    )
