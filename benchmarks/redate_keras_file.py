"""Finds the save time that makes a re-trained `.keras` file the bytes a record pinned.

A record that read lab01's model pins the SHA-256 of `saved_models/lab01_*/encoder.keras`. A
machine that lost `saved_models/` can train lab01 again at the same commit: on the same CPU
model, software and seed, training is bit for bit the same (the weights file inside the archive
reads the same), but Keras writes the save time twice into the archive, as metadata.json's
`date_saved` (to the second) and as the weights entry's zip date (to two seconds). This tool
tries each save time in a window (the pinned record's run: `--from`, `--to`) and, where one
gives the pinned SHA-256, rewrites the file with it: the bytes are then exactly those the
records read, which the hash proves (nothing else of the file is changed).

    python -m benchmarks.redate_keras_file --record docs/results/lab01_pretraining.json \
        --root ../kbert-records          # every archive the record's run saved
    python -m benchmarks.redate_keras_file PATH --sha256 HEX --from ISO --to ISO

lab01's own code is left as it is (its record and its readers' pins stand): a re-run's
archive differs from the pinned one only in those dates.
"""

import argparse
import datetime
import hashlib
import io
import json
import struct
import sys
import zipfile
import zlib
from pathlib import Path

from benchmarks.record_freshness import nested_dicts

LOCAL_HEADER = 30  # bytes of a zip local file header before its name
METADATA = "metadata.json"
DATE_FORMAT = "%Y-%m-%d@%H:%M:%S"  # Keras's `date_saved`


def _dos(moment):
    """A zip entry's (time, date) fields for `moment` (two-second resolution, as zipfile)."""
    time = (moment.hour << 11) | (moment.minute << 5) | (moment.second // 2)
    date = ((moment.year - 1980) << 9) | (moment.month << 5) | moment.day
    return time, date


class _Layout:
    """Where the fields a save time touches sit in an archive Keras wrote (entries stored,
    not compressed, as Keras writes them)."""

    def __init__(self, data):
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = {info.filename: info for info in archive.infolist()}
        if METADATA not in infos or len(infos) < 2:
            raise ValueError("not a Keras archive: it holds no metadata.json beside other entries")
        if any(info.compress_type != zipfile.ZIP_STORED for info in infos.values()):
            raise ValueError("an entry is compressed: only Keras's stored archives are handled")
        self.metadata = json.loads(archive.read(METADATA))
        if "date_saved" not in self.metadata:
            raise ValueError("metadata.json has no date_saved")
        start = archive.start_dir
        self.central = {}
        offset = start
        for info in archive.infolist():
            self.central[info.filename] = offset
            name, extra, comment = struct.unpack("<HHH", data[offset + 28 : offset + 34])
            offset += 46 + name + extra + comment
        meta = infos[METADATA]
        name, extra = struct.unpack("<HH", data[meta.header_offset + 26 : meta.header_offset + 30])
        self.metadata_data = meta.header_offset + LOCAL_HEADER + name + extra
        self.metadata_size = meta.file_size
        self.metadata_header = meta.header_offset
        # The entries zipfile dated with the save time (the others carry 1980-01-01).
        self.dated = [info for info in infos.values() if info.date_time[0] != 1980]


def candidates(data, moment, lag=4, layout=None):
    """The archive's bytes for a save at `moment`: one per weights-entry time up to `lag`
    seconds before the metadata's (the weights are written first, then dated). `layout`:
    `data`'s `_Layout`, read from `data` when not given (a search passes the one it read)."""
    layout = layout or _Layout(data)
    metadata = json.dumps(layout.metadata | {"date_saved": moment.strftime(DATE_FORMAT)})
    content = metadata.encode()
    if len(content) != layout.metadata_size:
        raise ValueError("the re-dated metadata.json changed length")
    buffer = bytearray(data)
    buffer[layout.metadata_data : layout.metadata_data + len(content)] = content
    crc = struct.pack("<I", zlib.crc32(content))
    buffer[layout.metadata_header + 14 : layout.metadata_header + 18] = crc
    buffer[layout.central[METADATA] + 16 : layout.central[METADATA] + 20] = crc
    seen = set()
    for seconds in range(lag + 1):
        fields = struct.pack("<HH", *_dos(moment - datetime.timedelta(seconds=seconds)))
        if fields in seen:
            continue
        seen.add(fields)
        for info in layout.dated:
            buffer[info.header_offset + 10 : info.header_offset + 14] = fields
            central = layout.central[info.filename]
            buffer[central + 12 : central + 16] = fields
        yield bytes(buffer)


def find(data, sha256, start, end):
    """The archive's bytes saved at a time in [start, end] whose SHA-256 is `sha256`, or None."""
    layout, moment = _Layout(data), start
    while moment <= end:
        for candidate in candidates(data, moment, layout=layout):
            if hashlib.sha256(candidate).hexdigest() == sha256:
                return candidate
        moment += datetime.timedelta(seconds=1)
    return None


def _saved_archives(record_path, root):
    """`(path, sha256, start, end)` for each `.keras` file a record says its run saved
    (`saved_files`), the window being the run's: from `date` less `wall_seconds` to `date`
    (a minute's margin each side)."""
    record = json.loads(Path(record_path).read_text())
    try:
        end = datetime.datetime.fromisoformat(record["date"]).replace(tzinfo=None)
        start = end - datetime.timedelta(seconds=float(record["wall_seconds"]))
    except (KeyError, TypeError, ValueError):
        raise ValueError(
            f"{record_path} gives no run window: it needs 'date' and 'wall_seconds'"
        ) from None
    margin = datetime.timedelta(minutes=1)
    archives = [
        (Path(root) / label, digest, start - margin, end + margin)
        for value in nested_dicts(record.get("results"))
        for label, digest in (value.get("saved_files") or {}).items()
        if label.endswith(".keras")
    ]
    if not archives:
        raise ValueError(f"{record_path} names no saved .keras file (results' saved_files)")
    return sorted(archives)


def redate(path, sha256, start, end):
    """Rewrites `path` with the save time in [start, end] that gives `sha256`; True if found
    (or already so), False (file untouched) if none does."""
    data = Path(path).read_bytes()
    if hashlib.sha256(data).hexdigest() == sha256:
        print(f"{path}: already the pinned bytes")
        return True
    found = find(data, sha256, start, end)
    if found is None:
        print(
            f"{path}: no save time from {start} to {end} gives {sha256[:12]}: the weights "
            "differ from the pinned run's (or the window misses it)"
        )
        return False
    Path(path).write_bytes(found)
    saved = json.loads(zipfile.ZipFile(path).read(METADATA))["date_saved"]
    print(f"{path}: the pinned bytes, saved at {saved}")
    return True


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", nargs="?", help="the re-trained .keras file (rewritten on a match)")
    parser.add_argument("--sha256", help="the SHA-256 the record pinned")
    parser.add_argument("--from", dest="start", help="window start (ISO)")
    parser.add_argument("--to", dest="end", help="window end (ISO)")
    parser.add_argument(
        "--record",
        help="instead: every .keras file this record's run saved (its saved_files), searched over "
        "its run (date less wall_seconds, to date)",
    )
    parser.add_argument("--root", default=".", help="with --record: the checkout its labels name")
    args = parser.parse_args(argv)
    single = (args.path, args.sha256, args.start, args.end)
    given = [value is not None for value in single]
    if (args.record is not None and any(given)) or (args.record is None and not all(given)):
        parser.error("give either --record (and --root) or PATH --sha256 --from --to")
    try:
        if args.record is not None:
            archives = _saved_archives(args.record, args.root)
        else:
            start = datetime.datetime.fromisoformat(args.start).replace(tzinfo=None)
            end = datetime.datetime.fromisoformat(args.end).replace(tzinfo=None)
            archives = [(Path(args.path), args.sha256, start, end)]
        found = [redate(*archive) for archive in archives]
    except (OSError, ValueError) as error:
        parser.error(str(error))
    return 0 if all(found) else 1


if __name__ == "__main__":
    sys.exit(main())
