"""The version directories TF Serving watches: checked, numbered, written whole, loaded.

`write_new_version` writes `<export_dir>/<name>/<version>/` into a hidden sibling directory,
verifies it and only then renames it into place, so a version appears complete or not at all and
an existing one is never replaced. Beside the SavedModel, `assets.extra/kbert_export.json`
records the settings the export was written with (`read_export_settings`).
"""

import json
import os
import re

import tensorflow as tf

from kbert.checks import check_int
from kbert.files import new_directory

# The export's settings beside the SavedModel: TF Serving reads only its warm-up requests from
# `assets.extra/`, and the SavedModel loader nothing.
SETTINGS_RECORD = os.path.join("assets.extra", "kbert_export.json")


def load_exported(path):
    """Loads an exported SavedModel, registering the tf-text ops its tokenizer needs first.

    Args:
        path: str or `os.PathLike`, a version directory written by `export_saved_model`.

    Returns:
        The object of `tf.saved_model.load`; its `signatures` dict holds the serving signatures.

    Example:
    >>> loaded = load_exported(path)  # doctest: +SKIP
    >>> loaded.signatures["classify"](text=tf.constant(["a fine film"]))["labels"]  # doctest: +SKIP
    """
    import tensorflow_text  # noqa: F401  (registers RegexSplitWithOffsets and friends)

    return tf.saved_model.load(os.fspath(path))


def write_settings_record(path, record):
    """Writes `record` (a JSON-ready dict) to `<path>/SETTINGS_RECORD`."""
    target = os.path.join(os.fspath(path), SETTINGS_RECORD)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "w", encoding="utf-8") as file:
        json.dump(record, file, indent=2)


def read_export_settings(path):
    """The settings an export was written with, from its `assets.extra/kbert_export.json`.

    Args:
        path: str or `os.PathLike`, a version directory written by `export_saved_model`.

    Returns:
        dict: the resolved `SignatureSettings` fields (`task`, `sequence_length`, `dtype` as
        computed, ...) and `requested_dtype` (what `ExportSettings.dtype` asked, e.g. "auto").

    Raises:
        ValueError: `path` holds no settings record (not a kbert export, or one written before
            kbert recorded its settings).

    Example:
    >>> read_export_settings("saved_models/trec/1")["dtype"]  # doctest: +SKIP
    'bfloat16'
    """
    target = os.path.join(os.fspath(path), SETTINGS_RECORD)
    if not os.path.isfile(target):
        raise ValueError(
            f"path {os.fspath(path)!r} has no {SETTINGS_RECORD}; expected a version directory "
            "written by kbert.export.export_saved_model"
        )
    with open(target, encoding="utf-8") as file:
        return json.load(file)


def check_export_dir(export_dir, what="export_dir"):
    """Refuses an export directory no new version can be written into; touches nothing.

    Args:
        export_dir: str or `os.PathLike`, a directory that may not exist yet.
        what: str, default "export_dir": what the error calls it (the CLI says "--export-dir").

    Raises:
        ValueError: `export_dir` is not a path, is a file, or is not writable; or, when it does
            not exist, the nearest existing folder above it is a file or not writable.

    Example:
    >>> check_export_dir("/tmp/saved_models")
    """
    if not isinstance(export_dir, (str, os.PathLike)):
        raise ValueError(
            f"{what} must be a str or os.PathLike directory; received {type(export_dir).__name__}"
        )
    path = os.fspath(export_dir)
    existing = os.path.abspath(path)
    while not os.path.exists(existing):  # the folder that makedirs would create it in
        existing = os.path.dirname(existing)
    where = "" if existing == os.path.abspath(path) else f": its folder {existing!r}"
    if not os.path.isdir(existing):
        raise ValueError(
            f"{what} {path!r}{where} is a file; expected a directory (created if "
            "missing) to hold <name>/<version>/"
        )
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ValueError(
            f"{what} {path!r}{where} is not writable; expected a directory this "
            "user can write a new model version into"
        )


def next_version(model_dir):
    """Returns 1 + the highest numeric version directory under `model_dir` (1 if none).

    Args:
        model_dir: str or `os.PathLike`, the `<export_dir>/<name>` directory (may not exist).

    Returns:
        int.

    Example:
    >>> next_version("/nonexistent/model")
    1
    """
    model_dir = os.fspath(model_dir)
    if not os.path.isdir(model_dir):
        return 1
    versions = [
        int(entry)
        for entry in os.listdir(model_dir)
        if entry.isdigit() and os.path.isdir(os.path.join(model_dir, entry))
    ]
    return max(versions, default=0) + 1


def check_name(name):
    """Refuses a model name that is not a plain directory name (TF Serving's `model_name`)."""
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]*", name):
        raise ValueError(
            "name must be a plain directory name (letters, digits, '_', '-', '.'); "
            f"received {name!r}"
        )


def write_new_version(export_dir, name, version, write, verify):
    """Writes `<export_dir>/<name>/<version>/` whole or not at all; never replaces a version.

    `write(temporary)` writes the SavedModel into a hidden sibling directory and returns
    anything `verify(temporary, written)` needs to load and check it; only then is the
    directory renamed into place. On any failure the partial directory is removed (and the
    model directory, if this call created it and it is empty), so existing versions stay
    untouched.

    Args:
        export_dir: str or `os.PathLike`, the model base directory's parent.
        name: str, the model name, a plain directory name.
        version: int >= 0 or None (1 + the highest existing numeric version).
        write: callable(temporary path) → anything.
        verify: callable(temporary path, what `write` returned); raises when the export fails.

    Returns:
        str, the final version directory.
    """
    check_name(name)
    if version is not None:
        check_int("version", version, minimum=0, expected="an int >= 0 or None")
    check_export_dir(export_dir)
    model_dir = os.path.join(os.fspath(export_dir), name)
    check_export_dir(model_dir, "the model directory")
    if version is None:
        version = next_version(model_dir)
    final = os.path.join(model_dir, str(version))
    if os.path.exists(final):
        raise ValueError(
            f"version {version} of model {name!r} already exists at {final}; "
            "expected a new version (versions are never replaced)"
        )
    created = not os.path.isdir(model_dir)
    try:
        os.makedirs(model_dir, exist_ok=True)
    except OSError as error:
        raise ValueError(
            f"cannot create the model directory {model_dir!r}: {error.strerror}"
        ) from None
    try:
        with new_directory(final) as temporary:
            written = write(temporary)
            verify(temporary, written)
    except FileExistsError:
        raise ValueError(
            f"version {version} of model {name!r} appeared at {final} during "
            "the export; expected a new version (versions are never replaced)"
        ) from None
    finally:  # a failed first export leaves no empty model directory behind
        if created and not os.listdir(model_dir):
            os.rmdir(model_dir)
    return final
