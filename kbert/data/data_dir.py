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


def locate(relative_path, url=None, data_dir_path=None, extract_member=None):
    """Finds a dataset file locally, or downloads the public original when online.

    Args:
        relative_path: str. Path under the data directory, e.g. "trec/TREC_10.label".
        url: str, default None. Where the public original lives (a file, or a zip or tar.gz
            archive holding `extract_member`). None means local only.
        data_dir_path: str or Path, default None. See `data_dir`.
        extract_member: str, default None. Path inside the downloaded archive: a file, or a
            folder (IMDb's "aclImdb/train"), which is then returned as a folder.

    Returns:
        A `Path` to a readable file, or to the extracted folder `extract_member` names.
    """
    root = data_dir(data_dir_path)
    if root is not None and (root / relative_path).is_file():
        return root / relative_path
    if url is None:
        raise ValueError(
            f"{relative_path} not found under data directory {str(root)!r} and "
            "there is no public download for it"
        )
    import keras

    cache = Path(os.environ.get("KBERT_CACHE_DIR", Path.home() / ".cache" / "kbert"))
    name = relative_path.replace("/", "_") if extract_member is None else Path(url).name
    try:
        downloaded = Path(
            keras.utils.get_file(
                name,
                url,
                cache_dir=str(cache),
                cache_subdir="datasets",
                extract=extract_member is not None,
            )
        )
    except Exception as error:  # no network, HTTP error
        raise ValueError(
            f"{relative_path} is not under data directory {str(root)!r} and downloading {url} "
            f"failed ({error}); set {ENV_VAR} to a folder that holds it"
        ) from None
    if extract_member is None:
        return downloaded
    # Match the whole member path: two archives in the cache can hold files of the same name
    # (wikitext-2-raw/wiki.valid.raw and wikitext-103-raw/wiki.valid.raw).
    root = downloaded if downloaded.is_dir() else downloaded.parent
    member = Path(extract_member).as_posix()
    matches = sorted(
        path
        for path in root.rglob(Path(extract_member).name)
        if path.as_posix().endswith("/" + member)
    )
    if not matches:
        raise ValueError(f"{url} does not contain {extract_member}")
    return matches[0]
