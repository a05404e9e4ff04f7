"""TF Hub handles: a local directory or a tfhub.dev / Kaggle handle, resolved and loaded."""

import os
import re
import sys
import types

import tensorflow as tf

_REMOTE = re.compile(r"^(https?://|gs://|tfhub\.dev/|www\.kaggle\.com/|kaggle\.com/)")


def _import_tensorflow_hub():
    """Imports `tensorflow_hub`, which needs `pkg_resources` that setuptools >= 81 dropped.

    tensorflow_hub 0.16 imports `pkg_resources.parse_version` only to check the TF version at
    import time; when it is missing a stand-in built on `packaging` is put in place for that
    import and removed afterwards.
    """
    if "tensorflow_hub" in sys.modules:
        return sys.modules["tensorflow_hub"]
    shimmed = False
    try:
        import pkg_resources  # noqa: F401
    except ImportError:
        from packaging.version import parse

        sys.modules["pkg_resources"] = types.SimpleNamespace(parse_version=parse)
        shimmed = True
    try:
        import tensorflow_hub
    finally:
        if shimmed:
            sys.modules.pop("pkg_resources", None)
    return tensorflow_hub


def resolve_handle(handle):
    """Turns a handle into a local SavedModel directory.

    Args:
        handle: str or os.PathLike. A local directory, or a tfhub.dev / Kaggle / http(s) / gs
            handle, which `tensorflow_hub.resolve` downloads (once; cached under
            `TFHUB_CACHE_DIR`).

    Returns:
        str, a directory holding `saved_model.pb`.

    Raises:
        ValueError: the handle is not a str, the path does not exist, or it is not a TF2
            SavedModel directory.

    Example:
    >>> resolve_handle("/no/such/model")
    Traceback (most recent call last):
    ...
    ValueError: handle '/no/such/model' does not exist; expected a SavedModel directory or a ...
    """
    if not isinstance(handle, (str, os.PathLike)):
        raise ValueError(f"handle must be a str path or URL; received {type(handle).__name__}")
    handle = os.fspath(handle)
    if _REMOTE.match(handle):
        path = _import_tensorflow_hub().resolve(handle)
    else:
        path = os.path.expanduser(handle)
        if not os.path.exists(path):
            raise ValueError(
                f"handle {handle!r} does not exist; expected a SavedModel directory or a "
                "tfhub.dev / Kaggle handle"
            )
    if not os.path.isdir(path):
        raise ValueError(f"handle {handle!r} is a file; expected a SavedModel directory")
    names = set(os.listdir(path))
    if "saved_model.pb" not in names and "saved_model.pbtxt" not in names:
        hint = (
            " (tfhub_module.pb: a TF1 Hub module, which needs TF1-style hub.Module)"
            if "tfhub_module.pb" in names
            else ""
        )
        raise ValueError(
            f"handle {handle!r} is not a SavedModel: expected saved_model.pb in {path}{hint}"
        )
    return path


def load_module(handle):
    """Loads a TF2 SavedModel from a handle (see `resolve_handle`).

    Args:
        handle: str or os.PathLike.

    Returns:
        The restored object (`tf.saved_model.load`).

    Raises:
        ValueError: see `resolve_handle`.

    Example:
    >>> module = load_module("/tmp/enc")  # doctest: +SKIP
    """
    path = resolve_handle(handle)
    with tf.init_scope():  # a layer may be built inside a traced function
        return tf.saved_model.load(path)
