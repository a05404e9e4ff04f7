"""The flags of a fine-tuning run, checked before anything is loaded or written.

Both task families of `kbert finetune` (classification, token tasks) check their flags here;
what a run was given is then recorded as a `kbert.runs.RunConfig`.
"""


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


def flag_settings(args):
    """The parsed flags a run records as `RunConfig.settings`: every value, without the
    command's functions (`handler`, `precheck`) and the task (a field of its own)."""
    return {
        key: value for key, value in vars(args).items() if key != "task" and not callable(value)
    }


def training_settings(args, callbacks, **extra):
    """The `kbert.train.TrainingSettings` the flags ask for, with the run's callbacks and any
    task-specific setting in `extra` (e.g. `jit_compile`); imports training code on first call,
    so `--help` and flag errors stay free of TensorFlow."""
    from kbert.train import TrainingSettings

    return TrainingSettings(
        epochs=args.epochs,
        batch_size=args.batch_size,
        gradient_accumulation_steps=args.gradient_accumulation_steps,
        learning_rate=args.learning_rate,
        warmup_fraction=args.warmup_fraction,
        weight_decay=args.weight_decay,
        seed=args.seed,
        verbose=args.verbose,
        callbacks=callbacks,
        **extra,
    )
