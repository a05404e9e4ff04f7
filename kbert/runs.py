"""A `kbert finetune` run directory: its one format, its writer and its one reader.

Every task family (classification, NER, QA) writes the same files into `--output-dir`:

    config.json          `RunConfig`: task family and task, every resolved flag, label names,
                         what training found (examples per split, data sources), versions
    labels.json          the label names (classification), tag names (NER) or [] (QA)
    preprocessor.json    the text preprocessing the model needs: a `BertPreprocessor`
                         (classification) or the tokenizer (token tasks), with its vocabulary
    model.keras          the model: its best validation epoch (classification), its last epoch
                         (token tasks)
    history.csv, metrics.json, learning_curve.png (+ confusion_matrix.png, tensorboard/)

`read_run` is what `kbert evaluate`, `predict` and `export` load a run with; `read_config` reads
`config.json` alone (no TensorFlow). Runs written before this format (format 1: classification
kept `best.keras`, token tasks `tokenizer.json`, and the config was the flag namespace as
JSON) are read too.

The directory is replaced only once the new run has finished. `kbert finetune --output-dir
DIR` trains into a hidden sibling of DIR (`.DIR.partial-<pid>-<id>`) and moves it into place at
the end, so a typo, a data error, SIGTERM, Ctrl-C or a kill -9 during training leaves the
previous run (or the user's files) exactly as they were; the partial is deleted on the way out,
or, after a kill -9, by the next run on DIR once its process is gone. `--overwrite` replaces only a directory that kbert wrote:
one whose `config.json` says it is a kbert run, holding only files kbert writes; anything else
in it is never deleted.

Replacing is two renames (the old run aside, the new one in) and then deleting the old run; a
kill in the microseconds between the renames leaves the old run under `.DIR.old-<id>`, which
the next `kbert finetune` on DIR puts back before anything else.
"""

import dataclasses
import json
import os
import platform
import shutil
import uuid
from collections.abc import Mapping
from pathlib import Path

from kbert import partial_directories
from kbert.files import atomic_write_text, replace_directory, restore_interrupted_directory

RUN_FORMAT = 2
RUN_MARKER = "kbert_run"  # key of config.json that marks a directory written by kbert
CONFIG_FILE = "config.json"
LABELS_FILE = "labels.json"
PREPROCESSOR_FILE = "preprocessor.json"
MODEL_FILE = "model.keras"
# Format 1's names for the model (classification) and the preprocessing (token tasks).
_FORMAT_1_FILES = {
    "classification": ("best.keras", PREPROCESSOR_FILE),
    "token": (MODEL_FILE, "tokenizer.json"),
}
TASK_FAMILIES = ("classification", "token")

# What `kbert finetune` writes into a run directory, this format's and format 1's names.
RUN_FILES = frozenset(
    {
        CONFIG_FILE,
        LABELS_FILE,
        PREPROCESSOR_FILE,
        MODEL_FILE,
        "history.csv",
        "metrics.json",
        "learning_curve.png",
        "confusion_matrix.png",
        "tensorboard",
        "tokenizer.json",
        "best.keras",
    }
)


@dataclasses.dataclass(frozen=True)
class DataSettings:
    """Where a run's data are: the task, its files or directory, and how train was split.

    Args:
        task: str. A classification task, "files", "conll2003" or "squad".
        data_dir: str or None, default None. The course data directory (`KBERT_DATA_DIR`).
        train_file, validation_file, test_file: str or None. `--task files`' TSV files.
        validation_fraction: float or None, default None. Share of train held out.
        seed: int, default 0. The seed of that split.
        max_train_examples: int or None, default None. Train examples kept.
        train_articles: int or None, default None. SQuAD articles read.
    """

    task: str
    data_dir: str | None = None
    train_file: str | None = None
    validation_file: str | None = None
    test_file: str | None = None
    validation_fraction: float | None = None
    seed: int = 0
    max_train_examples: int | None = None
    train_articles: int | None = None


@dataclasses.dataclass(frozen=True)
class RunConfig:
    """What a run was given and what it found: the content of its `config.json`.

    The file is one flat JSON object (the flags by their names beside these fields), so a
    user can read `jq .learning_rate config.json`; `to_json`/`from_json` convert.

    Args:
        task_family: str. "classification" or "token" (NER and QA).
        task: str. The `--task` (a classification task, "files", "conll2003", "squad").
        settings: mapping. Every resolved `kbert finetune` flag by its name (`epochs`,
            `learning_rate`, `sequence_length`, `model`, ...), JSON values.
        label_names: tuple of str, default (). Class names, BIO tag names, or () for QA.
        is_pair: bool or None, default False. Whether the classifier reads text pairs (None:
            a format 1 run that did not say; the task tells).
        task_metric: str or None. The task's headline metric ("accuracy", "f1").
        train_examples, validation_examples, test_examples: int or None. Examples per split.
        sources: mapping, default {}. Where each split's data came from.
        versions: mapping, default {}. `software_versions()` of the run.
        run_format: int, default `RUN_FORMAT`.

    Raises:
        ValueError: an unknown task family, an empty task, or a setting that repeats a field.
    """

    task_family: str
    task: str
    settings: Mapping = dataclasses.field(default_factory=dict)
    label_names: tuple = ()
    is_pair: bool | None = False
    task_metric: str | None = None
    train_examples: int | None = None
    validation_examples: int | None = None
    test_examples: int | None = None
    sources: Mapping = dataclasses.field(default_factory=dict)
    versions: Mapping = dataclasses.field(default_factory=dict)
    run_format: int = RUN_FORMAT

    def __post_init__(self):
        if self.task_family not in TASK_FAMILIES:
            raise ValueError(
                f"task_family must be one of {TASK_FAMILIES}; received {self.task_family!r}"
            )
        if not isinstance(self.task, str) or not self.task:
            raise ValueError(f"task must be a non-empty str; received {self.task!r}")
        clashes = sorted(set(self.settings) & (_field_names() | {RUN_MARKER}))
        if clashes:
            raise ValueError(f"settings {clashes} repeat RunConfig fields; give them as fields")
        object.__setattr__(self, "label_names", tuple(self.label_names))

    def setting(self, name, default=None):
        """The flag `name` the run was given (`default` if the run predates that flag)."""
        return self.settings.get(name, default)

    def data_settings(self, **overrides):
        """The `DataSettings` this run read its data with, some replaced (e.g. `data_dir`)."""
        names = {field.name for field in dataclasses.fields(DataSettings)} - {"task"}
        values = {key: value for key, value in self.settings.items() if key in names}
        return DataSettings(task=self.task, **{**values, **overrides})

    def to_json(self):
        """The flat dict written as `config.json`."""
        fields = {name: getattr(self, name) for name in _field_names() - {"settings"}}
        fields["label_names"] = list(self.label_names)
        return {RUN_MARKER: True, **self.settings, **fields, "sources": dict(self.sources)}

    @classmethod
    def from_json(cls, data, label_names=None):
        """Reads a `config.json` dict, this format's or format 1's.

        Args:
            data: dict. The parsed file.
            label_names: list or None. `labels.json`, for format 1 classification runs, whose
                config did not hold them.

        Raises:
            ValueError: the dict names no task (not a kbert run).
        """
        if not isinstance(data, dict) or not data.get("task"):
            raise ValueError("the run's config.json names no task; is it a kbert run?")
        data = dict(data)
        data.pop(RUN_MARKER, None)
        values = {name: data.pop(name) for name in _field_names() - {"settings"} if name in data}
        if "run_format" not in values:  # format 1
            values["run_format"] = 1
            values.setdefault("task_family", data.pop("task_family", "classification"))
            tags = data.pop("tag_names", None)
            labels = tags if tags is not None else label_names
            values["label_names"] = tuple(labels or ())
            if "source" in data:
                values["sources"] = {"all": data.pop("source")}
            data.pop("num_classes", None)
            values.setdefault("is_pair", None)  # the oldest runs: read from the task
        return cls(settings=data, **values)


def _field_names():
    return {field.name for field in dataclasses.fields(RunConfig)}


@dataclasses.dataclass(frozen=True)
class Run:
    """A finished run, loaded: its directory, config, model and preprocessing."""

    path: Path
    config: RunConfig
    model: object
    preprocessor: object


def software_versions():
    """The Python, TensorFlow and Keras versions a run was made with (for its config.json)."""
    import keras
    import tensorflow as tf

    return {
        "python": platform.python_version(),
        "tensorflow": tf.__version__,
        "keras": keras.__version__,
    }


def write_run_start(run_dir, config, preprocessor):
    """Writes what a run knows before training: `config.json`, `labels.json`, `preprocessor.json`.

    Args:
        run_dir: Path. The staged run directory (`StagedRunDirectory.path`).
        config: `RunConfig`.
        preprocessor: the Keras-serializable preprocessing the model reads its text with.
    """
    import keras

    run_dir = Path(run_dir)
    (run_dir / CONFIG_FILE).write_text(json.dumps(config.to_json(), indent=2))
    (run_dir / LABELS_FILE).write_text(json.dumps(list(config.label_names)))
    (run_dir / PREPROCESSOR_FILE).write_text(
        json.dumps(keras.saving.serialize_keras_object(preprocessor))
    )


def _not_a_run(run_dir, missing):
    return ValueError(
        f"{run_dir} is not a finished kbert run directory: it lacks {', '.join(missing)} "
        "(written by `kbert finetune --output-dir`)"
    )


def read_config(run_dir):
    """The `RunConfig` of a finished run, from its `config.json` alone (no TensorFlow).

    Raises:
        ValueError: naming the directory: no `config.json`, or one that is no kbert run's.
    """
    run_dir = Path(run_dir)
    path = run_dir / CONFIG_FILE
    if not path.is_file():
        raise _not_a_run(run_dir, [CONFIG_FILE])
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise ValueError(f"{path}: not a valid JSON run config ({error})") from None
    labels = None  # this format's config holds them; format 1's classification runs did not
    if isinstance(data, dict) and "run_format" not in data and (run_dir / LABELS_FILE).is_file():
        labels = json.loads((run_dir / LABELS_FILE).read_text(encoding="utf-8"))
    return RunConfig.from_json(data, label_names=labels)


def read_run(run_dir):
    """Loads a finished run (this format or format 1): its config, model and preprocessing.

    Raises:
        ValueError: naming the directory and the files it lacks.
    """
    import keras

    import kbert.layers  # noqa: F401  (registers kbert's classes for deserialization)
    import kbert.models  # noqa: F401
    import kbert.text  # noqa: F401

    run_dir = Path(run_dir)
    config = read_config(run_dir)
    model_file, preprocessor_file = MODEL_FILE, PREPROCESSOR_FILE
    if config.run_format == 1:
        model_file, preprocessor_file = _FORMAT_1_FILES[config.task_family]
    missing = [
        name
        for name in (LABELS_FILE, preprocessor_file, model_file)
        if not (run_dir / name).is_file()
    ]
    if missing:
        raise _not_a_run(run_dir, missing)
    preprocessor = keras.saving.deserialize_keras_object(
        json.loads((run_dir / preprocessor_file).read_text(encoding="utf-8"))
    )
    model = keras.saving.load_model(run_dir / model_file, compile=False)
    return Run(run_dir, config, model, preprocessor)


def _is_kbert_run(path):
    """Whether `path/config.json` is a kbert run's (marked, or an older run's task + versions)."""
    try:
        config = json.loads((path / CONFIG_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(config, dict) and bool(
        config.get(RUN_MARKER) or ("task" in config and "versions" in config)
    )


def check_output_dir(path, overwrite, run_files=RUN_FILES, is_run=None, description=None):
    """Checks that `path` may receive a new run; touches nothing.

    Args:
        path: str or Path. The `--output-dir`.
        overwrite: bool. Whether an existing kbert run there may be replaced.
        run_files: set of str, default `RUN_FILES`. The names the command writes there (a
            directory holding any other name is never replaced).
        is_run: callable or None, default None (a `kbert finetune` run: `config.json` marked
            `kbert_run`). Whether a directory, given as a `Path`, is one the command wrote.
        description: str or None. What `is_run` recognizes, for the error message.

    Returns:
        The `Path`.

    Raises:
        ValueError: `path` is a file; its parent is not a writable directory; it is a non-empty
            directory and `overwrite` is False; or, with `overwrite`, it holds files kbert did
            not write (named) or is not a kbert run directory.
    """
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ValueError(
            f"--output-dir {str(path)!r} is a file; expected a directory to create "
            "(or a kbert run directory to replace with --overwrite)"
        )
    parent = path.absolute().parent
    if not parent.is_dir():
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise ValueError(
                f"cannot create the parent of --output-dir {str(path)!r}: {error.strerror}"
            ) from None
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ValueError(f"--output-dir {str(path)!r}: its folder {str(parent)!r} is not writable")
    if path.is_dir() and any(path.iterdir()):
        if not overwrite:
            raise ValueError(
                f"run directory {str(path)!r} exists and is not empty; choose "
                "another --output-dir or pass --overwrite to replace it"
            )
        foreign = sorted(entry.name for entry in path.iterdir() if entry.name not in run_files)
        if foreign:
            raise ValueError(
                f"--overwrite refuses to replace {str(path)!r}: it holds files kbert "
                f"did not write ({', '.join(foreign[:5])}); move them or choose "
                "another --output-dir"
            )
        if not (is_run or _is_kbert_run)(path):
            description = (
                description or f"a kbert run directory (no config.json with {RUN_MARKER!r})"
            )
            raise ValueError(
                f"--overwrite refuses to replace {str(path)!r}: it is not {description}"
            )
    return path


class StagedRunDirectory:
    """Writes a run beside its destination and moves it into place only when it is complete.

    Use it as a context manager: inside, write into `.path` (a hidden sibling); `commit()` moves
    it to the destination (replacing an earlier kbert run there); leaving the block without
    `commit()` (an error, Ctrl-C, SIGTERM through `kbert.cli.stop_signals`) deletes the partial
    run and keeps the destination untouched. Entering first deletes the partial directories of
    earlier runs whose process is gone (`kbert.partial_directories`: after a kill -9, say) and
    reports each partial found, removed or kept (a live run's, say).

    Args:
        destination: str or Path. The `--output-dir`, already checked by `check_output_dir`.
        report: callable or None, default None. Receives one line per partial directory found;
            None writes them to stderr.

    Example:
    >>> with StagedRunDirectory("runs/trec") as run:  # doctest: +SKIP
    ...     (run.path / "metrics.json").write_text("{}")
    ...     run.commit()
    """

    def __init__(self, destination, report=None):
        self.destination = Path(destination)
        self.report = report
        self.path = None
        self._claim = None
        self._committed = False

    def __enter__(self):
        restore_interrupted_directory(self.destination)
        parent = self.destination.absolute().parent
        parent.mkdir(parents=True, exist_ok=True)
        partial_directories.remove_abandoned(self.destination, self.report)
        prefix = partial_directories.partial_prefix(self.destination)
        self.path = parent / f"{prefix}{uuid.uuid4().hex[:12]}"
        self.path.mkdir()  # not `mkdtemp`'s 0700: the finished run keeps the user's umask
        try:
            self._claim = partial_directories.claim(self.path)
        except BaseException:  # no `with` body runs, so `__exit__` will not: clean up here
            shutil.rmtree(self.path, ignore_errors=True)
            raise
        return self

    def commit(self):
        """Moves the finished run to the destination; an earlier kbert run there is removed."""
        partial_directories.release(self._claim, self.path)
        self._claim = None
        destination = replace_directory(self.path, self.destination)
        self._committed = True
        return destination

    def __exit__(self, *exc_info):
        if not self._committed and self.path is not None:
            shutil.rmtree(self.path, ignore_errors=True)
        if self._claim is not None:
            partial_directories.release(self._claim)
            self._claim = None
        return False


RESUME_FILE = partial_directories.RESUME_FILE


def interrupted_runs(destination):
    """The partial directories of `destination` left by resumable runs that died (a kill -9, a
    crash) or gave up (a resumed run that failed).

    A resumable run writes `resume.json` (its settings) into its partial directory and claims it
    as every staged run does (`kbert.partial_directories`: a `flock` held while it writes, and
    an owner record); one whose owner is gone is interrupted.

    Args:
        destination: str or Path. The `--output-dir`.

    Returns:
        list of `(path, settings)`, the newest first.
    """
    destination = Path(destination)
    parent = destination.absolute().parent
    if not parent.is_dir():
        return []
    found = []
    for path in parent.glob(f".{destination.name}.partial-*"):
        try:
            state = json.loads((path / RESUME_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(state, dict) or not isinstance(state.get("settings"), dict):
            continue
        if partial_directories.owner_gone(path)[0]:
            found.append((path, state["settings"]))
    return sorted(found, key=lambda entry: entry[0].stat().st_mtime, reverse=True)


class ResumableRunDirectory(StagedRunDirectory):
    """A `StagedRunDirectory` that a later run continues after the writer was killed.

    The partial directory holds `resume.json` (the `settings`); with `resume=True`, entering
    adopts the newest partial directory of `destination` whose owner is gone
    (`interrupted_runs`), after checking it was started with the same `settings`; with none, a
    new one is
    made. Checkpoints written into `.path` (e.g. by `kbert.train.ResumableBackup`) then carry
    the training on. An adopted directory is kept when the block fails, so its training is not
    lost; one made here is removed, as `StagedRunDirectory` does.

    Args:
        destination: str or Path. The `--output-dir`, already checked.
        settings: dict of JSON values. What a resumed run must have been started with.
        resume: bool, default False.

    Raises:
        ValueError: on entering with `resume`, an interrupted run started with other settings
            (the message names them).
    """

    def __init__(self, destination, settings, resume=False):
        super().__init__(destination)
        self.settings = json.loads(json.dumps(dict(settings)))  # as resume.json reads back
        self.resume = resume
        self.resumed = False

    def resumable_path(self):
        """The partial directory entering adopts: with `resume`, the newest interrupted run of
        the destination; None when there is none (or without `resume`). Writes nothing.

        Raises:
            ValueError: that run was started with other settings (the message names them).
        """
        interrupted = interrupted_runs(self.destination) if self.resume else []
        if not interrupted:
            return None
        path, settings = interrupted[0]
        changed = sorted(
            key
            for key in set(settings) | set(self.settings)
            if settings.get(key) != self.settings.get(key)
        )
        if changed:
            described = ", ".join(
                f"{key}: {settings.get(key)!r} then, {self.settings.get(key)!r} now"
                for key in changed[:5]
            )
            raise ValueError(
                f"--resume: the interrupted run in {str(path)!r} was started with other "
                f"settings ({described}); rerun with its flags, or without --resume to "
                "start over"
            )
        return path

    def __enter__(self):
        path = self.resumable_path()
        if path is None:
            super().__enter__()
        else:
            self._claim = partial_directories.adopt(path)
            if self._claim is None:
                raise ValueError(
                    f"--resume: the interrupted run in {str(path)!r} was just taken by another "
                    "process; wait for it or choose another --output-dir"
                )
            restore_interrupted_directory(self.destination)
            self.path, self.resumed = path, True
        atomic_write_text(self.path / RESUME_FILE, json.dumps({"settings": self.settings}))
        return self

    def commit(self):
        """Moves the finished run to the destination, without its `resume.json`."""
        (self.path / RESUME_FILE).unlink(missing_ok=True)
        return super().commit()

    def __exit__(self, *exc_info):
        if self.resumed and not self._committed:
            # Keep the adopted run's checkpoints for another try, given up for it.
            partial_directories.give_up(self._claim, self.path)
            self._claim = None
            return False
        return super().__exit__(*exc_info)
