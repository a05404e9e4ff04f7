"""One setting for where datasets live: `KBERT_DATA_DIR`."""

import os
from pathlib import Path

ENV_VAR = "KBERT_DATA_DIR"


def data_dir(path=None, required=False):
    """Returns the local dataset directory, or None when there is none.

    The order is: the `path` argument, the `KBERT_DATA_DIR` environment variable, then
    `../shared/data` relative to the working directory or to this repository (the layout of the
    course machines). Readers that get None download the public originals instead.

    Args:
        path: str or Path, default None. An explicit directory, which must exist.
        required: bool, default False. Raise instead of returning None when nothing is found.

    Returns:
        A `Path`, or None.

    Example:
    >>> root = data_dir()  # e.g. PosixPath('../shared/data') on the course machines
    """
    if path is not None:
        path = Path(path).expanduser()
        if not path.is_dir():
            raise ValueError(f"data directory {str(path)!r} does not exist or is not a directory")
        return path
    if os.environ.get(ENV_VAR):
        path = Path(os.environ[ENV_VAR]).expanduser()
        if not path.is_dir():
            raise ValueError(f"{ENV_VAR}={str(path)!r} does not exist or is not a directory")
        return path
    repo_root = Path(__file__).resolve().parents[2]
    for candidate in (Path.cwd() / "../shared/data", repo_root / "../shared/data"):
        if candidate.is_dir():
            return candidate.resolve()
    if required:
        raise ValueError(
            f"no dataset directory found: set {ENV_VAR} or pass a path "
            "(expected a folder such as ../shared/data holding trec/, sst2/, ...)"
        )
    return None
