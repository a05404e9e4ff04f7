"""What a fine-tuning run was given, checked before anything is loaded, and read back later.

Both task families of `kbert finetune` (classification, token tasks) check their flags here and
record `software_versions()` in their run's `config.json`. `DataSettings` is the part of a run's
config that says where its data came from: `kbert evaluate` rebuilds it from the run's
`config.json` (instead of an ad-hoc namespace) to read the same splits again.
"""

import dataclasses
import platform


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

    @classmethod
    def from_run(cls, config, **overrides):
        """The settings recorded in a run's `config.json` dict, with some replaced.

        Raises:
            ValueError: the config names no task.
        """
        if "task" not in config:
            raise ValueError("the run's config.json names no task; is it a kbert run?")
        names = {field.name for field in dataclasses.fields(cls)}
        values = {key: value for key, value in config.items() if key in names}
        return cls(**{**values, **overrides})


def check_training_arguments(args):
    """Refuses hyperparameters no run can use, before anything is loaded or written."""
    checks = (
        ("--epochs", args.epochs, 1),
        ("--batch-size", args.batch_size, 1),
        ("--gradient-accumulation-steps", getattr(args, "gradient_accumulation_steps", 1), 1),
        ("--sequence-length", args.sequence_length, 8),
    )
    for flag, value, minimum in checks:
        if value is not None and value < minimum:
            raise ValueError(f"{flag} must be an int >= {minimum}; received {value}")
    if not args.learning_rate > 0:
        raise ValueError(
            f"--learning-rate must be a positive number; received {args.learning_rate}"
        )
    if not 0 <= args.warmup_fraction < 1:
        raise ValueError(f"--warmup-fraction must be in [0, 1); received {args.warmup_fraction}")
    if args.weight_decay < 0:
        raise ValueError(f"--weight-decay must be >= 0; received {args.weight_decay}")
    if not 0 <= args.dropout < 1:
        raise ValueError(f"--dropout must be in [0, 1); received {args.dropout}")
    if getattr(args, "max_train_examples", None) is not None and args.max_train_examples < 1:
        raise ValueError(
            f"--max-train-examples must be an int >= 1; received {args.max_train_examples}"
        )
    if not 0 < args.validation_fraction < 1:
        raise ValueError(
            f"--validation-fraction must be in (0, 1); received {args.validation_fraction}"
        )


def check_sequence_length(sequence_length, encoder, model):
    """Refuses a `--sequence-length` above the model's position table."""
    limit = getattr(getattr(encoder, "config", None), "max_sequence_length", None)
    if limit is not None and sequence_length > limit:
        raise ValueError(
            f"--sequence-length {sequence_length} is longer than model {model!r} "
            f"can read: its position table has {limit} positions; use at most "
            f"{limit}"
        )


def software_versions():
    """The Python, TensorFlow and Keras versions a run was made with (for its config.json)."""
    import keras
    import tensorflow as tf

    return {
        "python": platform.python_version(),
        "tensorflow": tf.__version__,
        "keras": keras.__version__,
    }
