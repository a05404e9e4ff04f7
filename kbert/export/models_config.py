"""Configuration files and the `docker run` line for serving exports with TF Serving.

`kbert export` writes `<export_dir>/<name>/<version>/saved_model.pb`; TF Serving serves one such
model with `--model_name` / `--model_base_path`, or several with `--model_config_file`, whose
text-format `ModelServerConfig` this module writes:

    model_config_list {
      config {
        name: "trec"
        base_path: "/models/trec"
        model_platform: "tensorflow"
        model_version_policy {
          latest {
            num_versions: 1
          }
        }
      }
    }

`base_path` is where the server sees the model, i.e. inside the container (`/models/<name>`
when the export directory is mounted at `/models`), not where it lies on this machine.

Server-side batching (`--enable_batching --batching_parameters_file`) merges concurrent requests
into one batch; `batching_parameters_text` writes that file. Its fields are
`google.protobuf.Int64Value` wrappers, hence `max_batch_size { value: 32 }`.

`docker_run_command` prints the matching `docker run` line; it is documentation help, kbert never
runs it. Docker reads each `--mount` value as one CSV record, so a path holding a comma or a
double quote is written as a quoted CSV field (`"source=/data/a,b"`, with `"` doubled); a path
holding a line break is refused.

What `find_model_versions` (and so `write_models_config`) counts as a version, read the way TF
Serving reads a model directory (it parses every all-digit child as an int64 version):

- `<name>/<digits>/` holding a non-empty `saved_model.pb` or `saved_model.pbtxt`. A `variables/`
  folder is not required: TF Serving loads a SavedModel without variables.
- Leading zeros name the same number (`007` is version 7). Two directories with one number
  (`1` and `01`) are a ValueError naming both: TF Serving would load one of them arbitrarily.
- A number above 2**63 - 1 is a ValueError: TF Serving versions are int64.
- A version directory without a SavedModel, or with only an empty one, is skipped with a
  warning.
"""

import dataclasses
import json
import os
import posixpath
import re
import shlex
import warnings
from pathlib import Path

from kbert.files import atomic_write_text

# `kbert.export.saved_model_files.SETTINGS_RECORD`, here so that this module needs no TensorFlow
# (a test checks the two agree).
SETTINGS_RECORD = os.path.join("assets.extra", "kbert_export.json")

MODELS_CONFIG_FILE = "models.config"
BATCHING_PARAMETERS_FILE = "batching_parameters.txt"
VERSION_POLICIES = ("latest", "all", "specific")
CONTAINER_MODEL_BASE_PATH = "/models"
CONTAINER_CONFIG_DIR = "/config"
SAVED_MODEL_FILES = ("saved_model.pb", "saved_model.pbtxt")
# Model names end up in URLs (/v1/models/<name>) and paths; keep them to one safe word.
_NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*")
_VERSION_PATTERN = re.compile(r"[0-9]+")
MAX_VERSION = 2**63 - 1  # TF Serving's versions are int64


@dataclasses.dataclass(frozen=True)
class ServedModel:
    """One `config { ... }` entry of a `models.config`.

    Args:
        name: str, the model name clients ask for.
        version_policy: str, which versions the server loads: "latest" (default; the
            `num_versions` highest), "all", or "specific" (exactly `versions`).
        num_versions: int, default 1, versions kept by the "latest" policy.
        versions: tuple of int, default (), the versions of the "specific" policy, each in
            0..2**63 - 1 (TF Serving's int64).
        version_labels: dict of str -> int or None (default), labels such as
            `{"stable": 1, "canary": 2}` that clients can ask for instead of a number.
        base_path: str or None (default), the model directory as the server sees it; None means
            `<model_base_path>/<name>`.

    Raises:
        ValueError: a malformed name, an unknown policy, or versions that do not fit the policy.

    Example:

        >>> ServedModel("trec", version_policy="specific", versions=(1, 2)).versions
        (1, 2)
    """

    name: str
    version_policy: str = "latest"
    num_versions: int = 1
    versions: tuple = ()
    version_labels: dict | None = None
    base_path: str | None = None

    def __post_init__(self):
        if not isinstance(self.name, str) or not _NAME_PATTERN.fullmatch(self.name):
            raise ValueError(
                f"model name must be letters, digits, '_', '.' or '-' (starting "
                f"with a letter or digit); got {self.name!r}"
            )
        if self.version_policy not in VERSION_POLICIES:
            raise ValueError(
                f"model {self.name!r}: version_policy must be one of "
                f"{VERSION_POLICIES}; got {self.version_policy!r}"
            )
        if not _is_count(self.num_versions, minimum=1):
            raise ValueError(
                f"model {self.name!r}: num_versions must be an int >= 1; got {self.num_versions!r}"
            )
        versions = tuple(self.versions)
        object.__setattr__(self, "versions", versions)
        if any(not _is_version(version) for version in versions):
            raise ValueError(
                f"model {self.name!r}: versions must be ints >= 0 and <= 2**63 - 1 "
                f"(TF Serving's int64); got {versions!r}"
            )
        if self.version_policy == "specific" and not versions:
            raise ValueError(
                f"model {self.name!r}: the 'specific' policy needs versions, e.g. versions=(1, 2)"
            )
        if self.version_policy != "specific" and versions:
            raise ValueError(
                f"model {self.name!r}: versions={versions!r} only apply to the "
                f"'specific' policy, not {self.version_policy!r}"
            )
        for label, version in (self.version_labels or {}).items():
            if not isinstance(label, str) or not _NAME_PATTERN.fullmatch(label):
                raise ValueError(
                    f"model {self.name!r}: version label must be a word such as "
                    f"'stable'; got {label!r}"
                )
            if not _is_version(version):
                raise ValueError(
                    f"model {self.name!r}: label {label!r} must point at an int "
                    f"version in 0..2**63 - 1; got {version!r}"
                )
            if self.version_policy == "specific" and version not in versions:
                raise ValueError(
                    f"model {self.name!r}: label {label!r} points at version "
                    f"{version}, which the 'specific' policy {versions} does not "
                    "load"
                )
        if self.base_path is not None and (
            not isinstance(self.base_path, str) or not self.base_path
        ):
            raise ValueError(
                f"model {self.name!r}: base_path must be a non-empty string or "
                f"None; got {self.base_path!r}"
            )


def _is_count(value, minimum):
    return isinstance(value, int) and not isinstance(value, bool) and value >= minimum


def _is_version(value):
    return _is_count(value, minimum=0) and value <= MAX_VERSION


def _served_model(entry):
    if isinstance(entry, ServedModel):
        return entry
    if isinstance(entry, str):
        return ServedModel(entry)
    if isinstance(entry, dict):
        fields = {field.name for field in dataclasses.fields(ServedModel)}
        unknown = sorted(set(entry) - fields)
        if unknown or "name" not in entry:
            raise ValueError(
                f"a model dict needs 'name' and may have {sorted(fields - {'name'})}; "
                f"got the keys {sorted(entry)}"
            )
        entry = dict(entry)
        if "versions" in entry and "version_policy" not in entry:
            entry["version_policy"] = "specific"  # versions alone can only mean these versions
        return ServedModel(**entry)
    raise ValueError(f"each model must be a name, a dict or a ServedModel; got {entry!r}")


def _quote(text):
    """A text-format protobuf string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def models_config_text(models, model_base_path=CONTAINER_MODEL_BASE_PATH):
    """Writes TF Serving's `--model_config_file` (a text-format `ModelServerConfig`).

    Args:
        models: list of model names, dicts with `ServedModel`'s fields (a dict with `versions`
            and no `version_policy` means the "specific" policy), or `ServedModel`s.
        model_base_path: str, default "/models", the directory holding one subdirectory per
            model as the server sees it (inside the container).

    Returns:
        The config text, one `config { ... }` per model in the given order.

    Raises:
        ValueError: no models, a repeated name, or a malformed entry (see `ServedModel`).

    Example:

        >>> print(models_config_text(["trec"]))  # doctest: +ELLIPSIS
        model_config_list {
          config {
            name: "trec"
            base_path: "/models/trec"
        ...
    """
    if isinstance(models, (str, dict, ServedModel)):
        models = [models]
    models = [_served_model(entry) for entry in models]
    if not models:
        raise ValueError("models is empty; expected at least one model name or entry")
    names = [model.name for model in models]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(f"model names must be unique; {repeated} appear more than once")
    if not isinstance(model_base_path, str) or not model_base_path:
        raise ValueError(f"model_base_path must be a non-empty string; got {model_base_path!r}")
    lines = ["model_config_list {"]
    for model in models:
        base_path = model.base_path or posixpath.join(model_base_path, model.name)
        lines += [
            "  config {",
            f"    name: {_quote(model.name)}",
            f"    base_path: {_quote(base_path)}",
            '    model_platform: "tensorflow"',
            "    model_version_policy {",
        ]
        if model.version_policy == "all":
            lines.append("      all {}")
        elif model.version_policy == "specific":
            lines.append("      specific {")
            lines += [f"        versions: {version}" for version in model.versions]
            lines.append("      }")
        else:
            lines += ["      latest {", f"        num_versions: {model.num_versions}", "      }"]
        lines.append("    }")
        for label, version in sorted((model.version_labels or {}).items()):
            lines += [
                "    version_labels {",
                f"      key: {_quote(label)}",
                f"      value: {version}",
                "    }",
            ]
        lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def find_model_versions(export_dir):
    """Lists the servable versions under an export directory.

    A version is a directory `<export_dir>/<name>/<digits>/` holding a non-empty
    `saved_model.pb` (or `.pbtxt`); its number is the directory name read as an int, as TF
    Serving reads it (`007` is version 7). Hidden entries (an export in progress) and files are
    ignored; a model directory with an unusable name or without a complete version, and version
    directories without a SavedModel or with an empty one, are skipped with a warning.

    Args:
        export_dir: str or `os.PathLike`, the directory `kbert export` writes into.

    Returns:
        A dict of model name -> sorted list of int versions, names in sorted order.

    Raises:
        ValueError: `export_dir` is not a directory; two version directories of one model name
            the same number (`1` and `01`), which TF Serving would pick between arbitrarily; or
            a version directory's number is above 2**63 - 1 (TF Serving versions are int64).

    Example:

        find_model_versions("saved_models")  # {"ner": [1], "trec": [1, 2]}
    """
    export_dir = Path(export_dir)
    if not export_dir.is_dir():
        raise ValueError(
            f"export_dir {str(export_dir)!r} is not a directory; expected the "
            "directory holding <name>/<version>/saved_model.pb"
        )
    found = {}
    for model_dir in sorted(export_dir.iterdir()):
        if not model_dir.is_dir() or model_dir.name.startswith("."):
            continue
        if not _NAME_PATTERN.fullmatch(model_dir.name):
            warnings.warn(
                f"{model_dir}: {model_dir.name!r} is not a usable model name (letters, "
                "digits, '_', '.', '-'); skipped",
                stacklevel=2,
            )
            continue
        directories = {}  # version number -> directory names; TF Serving sees each of them
        versions, incomplete = [], []
        for version_dir in sorted(model_dir.iterdir()):
            if not version_dir.is_dir() or not _VERSION_PATTERN.fullmatch(version_dir.name):
                continue
            version = int(version_dir.name)
            if version > MAX_VERSION:
                raise ValueError(
                    f"{model_dir}: version directory {version_dir.name!r} is above "
                    f"2**63 - 1 = {MAX_VERSION}, the largest version TF Serving "
                    "reads (versions are int64); renumber it"
                )
            directories.setdefault(version, []).append(version_dir.name)
            if _holds_saved_model(version_dir):
                versions.append(version)
            else:
                incomplete.append(version_dir.name)
        for version, names in sorted(directories.items()):
            if len(names) > 1:
                raise ValueError(
                    f"{model_dir}: version directories {sorted(names)} are all "
                    f"version {version}; TF Serving would load one of them "
                    "arbitrarily. Keep one directory per version number"
                )
        if incomplete:
            # Only the 'specific' policy pins the versions found here; TF Serving's own scan
            # still sees these directories.
            risk = (
                "; skipped here, but TF Serving's 'all' policy (and 'latest', where one is "
                "the highest) still tries to load them: remove them or finish the export"
                if versions
                else "; skipped"
            )
            warnings.warn(
                f"{model_dir}: version directories {sorted(incomplete)} hold no "
                f"saved_model.pb, or an empty saved_model.pb{risk}",
                stacklevel=2,
            )
        if not versions:
            warnings.warn(
                f"{model_dir}: no numeric version directory with a non-empty "
                "saved_model.pb; not a servable model, skipped",
                stacklevel=2,
            )
            continue
        found[model_dir.name] = sorted(versions)
    return found


def _holds_saved_model(version_dir):
    """Whether a version directory holds a non-empty `saved_model.pb` or `saved_model.pbtxt`."""
    for name in SAVED_MODEL_FILES:
        path = version_dir / name
        if path.is_file() and path.stat().st_size > 0:
            return True
    return False


def write_models_config(
    export_dir, path=None, model_base_path=CONTAINER_MODEL_BASE_PATH, version_policy="latest"
):
    """Scans an export directory and writes its `models.config`, atomically.

    Args:
        export_dir: str or `os.PathLike`, the directory `kbert export` writes into.
        path: str, `os.PathLike` or None (default: `<export_dir>/models.config`), the file to
            write.
        model_base_path: str, default "/models", where the server sees `export_dir`.
        version_policy: str, default "latest", applied to every model: "latest" serves each
            model's highest version (and picks up new ones as they are exported), "all" serves
            every version, "specific" pins the versions present now.

    Returns:
        The `Path` written.

    Raises:
        ValueError: `export_dir` is not a directory, holds no servable model or a version
            directory `find_model_versions` refuses (two names for one number, a number above
            2**63 - 1), or `version_policy` is unknown.

    Example:

        write_models_config("saved_models")  # PosixPath('saved_models/models.config')
    """
    if version_policy not in VERSION_POLICIES:
        raise ValueError(
            f"version_policy must be one of {VERSION_POLICIES}; got {version_policy!r}"
        )
    found = find_model_versions(export_dir)
    if not found:
        raise ValueError(
            f"export_dir {os.fspath(export_dir)!r} holds no servable model; expected "
            "<name>/<version number>/saved_model.pb (run `kbert export` first)"
        )
    models = [
        ServedModel(
            name,
            version_policy=version_policy,
            versions=tuple(versions) if version_policy == "specific" else (),
        )
        for name, versions in found.items()
    ]
    text = models_config_text(models, model_base_path=model_base_path)
    # Whole or not at all: a server polling the file sees the old or the new one.
    return atomic_write_text(Path(export_dir) / MODELS_CONFIG_FILE if path is None else path, text)


def batching_parameters_text(
    max_batch_size=32,
    batch_timeout_micros=1000,
    num_batch_threads=None,
    max_enqueued_batches=None,
    allowed_batch_sizes=None,
    pad_variable_length_inputs=False,
):
    """Writes TF Serving's `--batching_parameters_file` (a text-format `BatchingParameters`).

    Args:
        max_batch_size: int, default 32, the largest merged batch.
        batch_timeout_micros: int, default 1000, how long a request may wait for others to fill a
            batch; the latency paid for throughput.
        num_batch_threads: int or None (default: the server's default), batches run in parallel;
            TF Serving's guide suggests the number of CPU cores.
        max_enqueued_batches: int or None (default: the server's default), batches allowed to
            wait; requests beyond fail fast instead of queueing without bound.
        allowed_batch_sizes: list of int or None (default), the only batch sizes formed
            (requests are padded up to one); increasing, ending with `max_batch_size`.
        pad_variable_length_inputs: bool, default False, pad inputs of different lengths to
            merge them; kbert's string signatures do not need it.

    Returns:
        The parameters text.

    Raises:
        ValueError: a count below 1 (or a negative timeout), or bad `allowed_batch_sizes`.

    Example:

        >>> print(batching_parameters_text(max_batch_size=8), end="")
        max_batch_size { value: 8 }
        batch_timeout_micros { value: 1000 }
    """
    counts = {
        "max_batch_size": (max_batch_size, 1),
        "batch_timeout_micros": (batch_timeout_micros, 0),
        "max_enqueued_batches": (max_enqueued_batches, 1),
        "num_batch_threads": (num_batch_threads, 1),
    }
    lines = []
    for name, (value, minimum) in counts.items():
        if value is None and name not in ("max_batch_size", "batch_timeout_micros"):
            continue
        if not _is_count(value, minimum):
            raise ValueError(f"{name} must be an int >= {minimum}; got {value!r}")
        lines.append(f"{name} {{ value: {value} }}")
    if allowed_batch_sizes is not None:
        sizes = list(allowed_batch_sizes)
        if (
            not sizes
            or any(not _is_count(size, 1) for size in sizes)
            or sizes != sorted(set(sizes))
            or sizes[-1] != max_batch_size
        ):
            raise ValueError(
                f"allowed_batch_sizes must be increasing ints >= 1 ending with "
                f"max_batch_size={max_batch_size}; got {allowed_batch_sizes!r}"
            )
        lines += [f"allowed_batch_sizes: {size}" for size in sizes]
    if pad_variable_length_inputs:
        lines.append("pad_variable_length_inputs: true")
    return "\n".join(lines) + "\n"


def write_batching_parameters(path, **parameters):
    """Writes `batching_parameters_text(**parameters)` to `path`, atomically.

    Args:
        path: str or `os.PathLike`, the file to write (e.g.
            `saved_models/batching_parameters.txt`).
        **parameters: the arguments of `batching_parameters_text`.

    Returns:
        The `Path` written.

    Raises:
        ValueError: see `batching_parameters_text`.

    Example:

        write_batching_parameters("saved_models/batching_parameters.txt", max_batch_size=16)
    """
    return atomic_write_text(path, batching_parameters_text(**parameters))


def _mount_argument(source, target, readonly=False):
    """The value of one docker `--mount type=bind`: a CSV record, quoted where a field needs it.

    Docker parses `--mount` with Go's `encoding/csv`: a field holding a comma or a double quote
    must be quoted, with `"` doubled inside. A line break would be rewritten by the CSV reader
    (`\r\n` -> `\n`), so a path holding one is refused.
    """
    fields = ["type=bind", f"source={source}", f"target={target}"]
    if readonly:
        fields.append("readonly")
    quoted = []
    for field in fields:
        if "\n" in field or "\r" in field:
            raise ValueError(f"a docker --mount path cannot hold a line break; got {field!r}")
        if "," in field or '"' in field:
            field = '"' + field.replace('"', '""') + '"'
        quoted.append(field)
    return ",".join(quoted)


def docker_run_command(
    export_dir,
    model_name=None,
    gpu=False,
    rest_port=8501,
    grpc_port=8500,
    models_config=None,
    batching=None,
    xla_cpu=None,
):
    """Returns the `docker run` line that serves an export directory with TF Serving.

    One model (`model_name`): `<export_dir>/<model_name>` is mounted at `/models/<model_name>` and
    the image's entry point serves it from `MODEL_NAME`. Several models (`models_config`): the
    whole export directory is mounted at `/models` and the server reads the config file. A config
    or batching file outside the mounted directory gets its own read-only mount under `/config`.

    Args:
        export_dir: str or `os.PathLike`, the directory `kbert export` writes into; made
            absolute, as bind mounts require.
        model_name: str or None (default), the one model to serve.
        gpu: bool, default False: `tensorflow/serving:latest-gpu` with `--gpus all` instead of
            `tensorflow/serving:latest`.
        rest_port: int, default 8501, the host port for REST.
        grpc_port: int, default 8500, the host port for gRPC.
        models_config: str, `os.PathLike`, True or None (default), the `models.config` to serve
            several models from; True means `<export_dir>/models.config`.
        batching: str, `os.PathLike`, True or None (default): a batching parameters file adds
            `--enable_batching --batching_parameters_file=...`; True adds `--enable_batching`
            alone (the server's default parameters).
        xla_cpu: bool or None (default): add `--xla_cpu_compilation_enabled=true`, which an
            export with small batches through XLA (`ExportSettings(xla_rows=...)`) needs to load.
            None turns it on when a served version's `assets.extra/kbert_export.json` records
            `xla_rows` above 0.

    Returns:
        The command as one shell-quoted line (`shlex.split` gives back the arguments). A mount
        path holding a comma or a double quote is a quoted CSV field inside `--mount`
        (`type=bind,"source=/data/a,b",target=/models`), as docker reads it.

    Raises:
        ValueError: neither or both of `model_name` and `models_config`, a malformed model name,
            a port outside 1..65535, or a mounted path holding a line break.

    Example:

        >>> docker_run_command("/srv/saved_models", model_name="trec")  # doctest: +ELLIPSIS
        'docker run --rm -p 8501:8501 -p 8500:8500 --mount type=bind,source=/srv/saved_models/trec,...'
    """
    if (model_name is None) == (models_config is None):
        raise ValueError(
            f"give exactly one of model_name (serve one model) and models_config "
            f"(serve several); got model_name={model_name!r}, "
            f"models_config={models_config!r}"
        )
    for name, port in (("rest_port", rest_port), ("grpc_port", grpc_port)):
        if not _is_count(port, 1) or port > 65535:
            raise ValueError(f"{name} must be an int in 1..65535; got {port!r}")
    export_dir = Path(export_dir).expanduser().absolute()
    arguments = ["docker", "run", "--rm", "-p", f"{rest_port}:8501", "-p", f"{grpc_port}:8500"]
    if gpu:
        arguments += ["--gpus", "all"]
    mounts = []  # (host directory or file, container path)

    def container_path(host_file):
        host_file = Path(host_file).expanduser().absolute()
        for source, target in mounts:
            if host_file.is_relative_to(source):
                return posixpath.join(target, host_file.relative_to(source).as_posix())
        target = posixpath.join(CONTAINER_CONFIG_DIR, host_file.name)
        mounts.append((host_file, target))
        arguments.extend(["--mount", _mount_argument(host_file, target, readonly=True)])
        return target

    server_flags = []
    if model_name is not None:
        ServedModel(model_name)  # the name check
        source, target = export_dir / model_name, posixpath.join("/models", model_name)
        mounts.append((source, target))
        arguments += ["--mount", _mount_argument(source, target), "-e", f"MODEL_NAME={model_name}"]
    else:
        mounts.append((export_dir, "/models"))
        arguments += ["--mount", _mount_argument(export_dir, "/models")]
        config = export_dir / MODELS_CONFIG_FILE if models_config is True else models_config
        server_flags.append(f"--model_config_file={container_path(config)}")
    if batching:
        server_flags.append("--enable_batching")
        if batching is not True:
            server_flags.append(f"--batching_parameters_file={container_path(batching)}")
    served = f"{model_name}/*" if model_name is not None else "*/*"
    if xla_cpu or (xla_cpu is None and _exported_with_xla(export_dir, served)):
        server_flags.append("--xla_cpu_compilation_enabled=true")
    image = "tensorflow/serving:latest-gpu" if gpu else "tensorflow/serving:latest"
    return shlex.join(arguments + [image] + server_flags)


def _exported_with_xla(export_dir, versions):
    """Whether a version directory matching `export_dir/versions` records `xla_rows` > 0."""
    for record in Path(export_dir).glob(f"{versions}/{SETTINGS_RECORD}"):
        try:
            if int(json.loads(record.read_text()).get("xla_rows") or 0) > 0:
                return True
        except (OSError, ValueError, TypeError, AttributeError):
            continue  # an unreadable record says nothing; the caller can pass xla_cpu
    return False
