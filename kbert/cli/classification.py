"""`kbert finetune | evaluate | predict` for sentence and sentence-pair classification.

The run directory is `kbert.runs`' format, shared with the token tasks: `config.json`,
`labels.json` (class id = position), `preprocessor.json` (tokenizer and packer, vocabulary
included), `model.keras` (the classifier at its best validation epoch), `history.csv`,
`tensorboard/`, `learning_curve.png`, `metrics.json` (validation and test reports of that model)
and `confusion_matrix.png` on the test split.
"""

import json
import os

from kbert.cli.choices import (
    CLASSIFICATION_TASK_NAMES,
    CLASSIFIER_POOLING,
    FILES_TASK,
    LONG_INPUT_STRATEGIES,
    TOKEN_TASKS,
)
from kbert.cli.run_settings import (
    check_sequence_length,
    check_training_arguments,
    flag_settings,
    training_settings,
)
from kbert.cli.token_tasks import add_token_task_arguments
from kbert.runs import (
    MODEL_FILE,
    RunConfig,
    StagedRunDirectory,
    check_output_dir,
    read_config,
    read_run,
    software_versions,
    write_run_start,
)


def add_finetune_arguments(parser):
    """The flags of `kbert finetune`."""
    task = parser.add_argument_group("task and data")
    task.add_argument(
        "--task",
        required=True,
        choices=list(CLASSIFICATION_TASK_NAMES) + [FILES_TASK] + list(TOKEN_TASKS),
        help="built-in classification task, 'files' with --train-file/--test-file "
        "(TSV lines 'text<TAB>label' or 'text_a<TAB>text_b<TAB>label'), or a "
        "token/span task: conll2003 (NER), squad (extractive QA)",
    )
    task.add_argument("--train-file", help="with --task files: labelled training TSV")
    task.add_argument("--test-file", help="with --task files: labelled test TSV")
    task.add_argument(
        "--validation-file",
        help="with --task files: labelled validation TSV (default: a held-out slice of train)",
    )
    task.add_argument(
        "--data-dir",
        help="dataset directory (default: $KBERT_DATA_DIR, then "
        "../shared/data; else the public originals download)",
    )
    task.add_argument(
        "--validation-fraction",
        type=float,
        default=0.1,
        help="share of the training file held out for validation (default 0.1)",
    )
    task.add_argument(
        "--max-train-examples",
        type=int,
        help="train on a seeded random sample of this many examples (conll2003 "
        "and squad: the first ones)",
    )
    model = parser.add_argument_group("model")
    model.add_argument(
        "--model",
        default="minilm_l6",
        help="'minilm_l6', a Hugging Face BERT directory, or a kbert directory "
        "(encoder.keras + vocab.txt, e.g. saved_models/lab01_masked or `kbert pretrain`'s output)",
    )
    model.add_argument(
        "--pooling",
        default="trained",
        choices=("trained",) + CLASSIFIER_POOLING,
        help="how the classifier reads the sequence (default trained: the way the checkpoint was "
        "trained to be read, from its 1_Pooling/config.json: mean for minilm_l6; cls for a plain "
        "BERT; last for a causal model)",
    )
    model.add_argument("--dropout", type=float, default=0.1, help="head dropout (default 0.1)")
    model.add_argument(
        "--hidden-units",
        type=int,
        nargs="*",
        default=[],
        help="hidden layers of the head (default none: a linear head)",
    )
    model.add_argument(
        "--sequence-length",
        type=int,
        default=None,
        help="maximum tokens per example (default 128; 384 for squad). "
        "Classification truncates longer inputs; NER and QA split them into "
        "overlapping windows",
    )
    add_long_input_arguments(model, default="head")
    train = parser.add_argument_group("training")
    train.add_argument("--epochs", type=int, default=3, help="(default 3)")
    train.add_argument(
        "--batch-size",
        type=int,
        default=32,
        help="examples per forward/backward pass (default 32)",
    )
    train.add_argument(
        "--gradient-accumulation-steps",
        type=int,
        default=1,
        help="average the gradients of N batches before each update: batch-size x N "
        "examples per update in the memory of one batch (default 1, no accumulation)",
    )
    train.add_argument(
        "--learning-rate",
        type=float,
        default=None,
        help="peak AdamW rate after warmup, then linear decay to 0 (default 5e-5 "
        "for classification, 3e-4 for conll2003, 2e-4 for squad)",
    )
    train.add_argument(
        "--warmup-fraction",
        type=float,
        default=0.1,
        help="share of steps spent warming up (default 0.1)",
    )
    train.add_argument("--weight-decay", type=float, default=0.01, help="(default 0.01)")
    train.add_argument(
        "--dtype",
        default="float32",
        choices=("float32", "mixed_bfloat16", "mixed_float16"),
        help="compute precision: mixed_bfloat16 is about 2x faster on CPUs with "
        "AVX512-BF16 and on recent GPUs (default float32)",
    )
    train.add_argument(
        "--jit",
        action="store_true",
        help="compile the train step with XLA (helps on GPU; one compile per length bucket)",
    )
    train.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seeds weights, dropout, shuffling and the validation split",
    )
    add_token_task_arguments(parser)
    out = parser.add_argument_group("output")
    out.add_argument("--output-dir", required=True, help="the run directory to create")
    out.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an existing run directory (otherwise refuse)",
    )
    out.add_argument(
        "--verbose",
        type=int,
        default=1,
        choices=(0, 1, 2),
        help="Keras progress output: 0 silent, 1 progress bar, 2 one line per epoch",
    )


def add_long_input_arguments(group, default=None):
    """`--long-inputs`, `--head-tokens`, `--window-stride`, `--max-windows` (single texts)."""
    run_default = "the run's" if default is None else f"default {default}"
    group.add_argument(
        "--long-inputs",
        choices=LONG_INPUT_STRATEGIES,
        default=default,
        help="how a text longer than --sequence-length is read "
        f"({run_default}): head = its first tokens; head_tail = the first "
        "quarter of the window from its start, the rest from its end (Sun "
        "et al. 2019); window_mean / window_max = every window of the text "
        "(training: each window an example with the text's label; "
        "prediction: the windows' logits averaged or max-pooled)",
    )
    group.add_argument(
        "--head-tokens",
        type=int,
        default=None,
        help="head_tail: tokens from the start (default a quarter of the window)",
    )
    group.add_argument(
        "--window-stride",
        type=int,
        default=None,
        help="window_*: tokens between window starts (default half a window)",
    )
    group.add_argument(
        "--max-windows",
        type=int,
        default=None,
        help="window_*: most windows per text (default all)",
    )


def make_preprocessor(tokenizer, sequence_length, args, base=None):
    """The run's preprocessor: a BertPreprocessor (head) or a LongTextPreprocessor.

    Args:
        tokenizer: the run's WordPieceTokenizer.
        sequence_length: int.
        args: flags with `long_inputs`, `head_tokens`, `window_stride`, `max_windows` (None
            keeps `base`'s strategy and settings).
        base: the run's saved preprocessor, default None.
    """
    from kbert.text import BertPreprocessor, LongTextPreprocessor

    strategy = getattr(args, "long_inputs", None)
    if strategy is None:
        if base is not None:
            return base
        strategy = "head"
    settings = {
        "head_tokens": getattr(args, "head_tokens", None),
        "stride": getattr(args, "window_stride", None),
        "max_windows": getattr(args, "max_windows", None),
    }
    if strategy == "head" and not any(value is not None for value in settings.values()):
        return BertPreprocessor(tokenizer, sequence_length=sequence_length)
    return LongTextPreprocessor(
        tokenizer, sequence_length=sequence_length, strategy=strategy, **settings
    )


def check_long_input_arguments(args, is_pair, sequence_length):
    """Refuses long-input flags that cannot apply, naming the flag."""
    strategy = getattr(args, "long_inputs", None)
    flags = (
        ("--head-tokens", getattr(args, "head_tokens", None), 0, "head_tail"),
        ("--window-stride", getattr(args, "window_stride", None), 1, None),
        ("--max-windows", getattr(args, "max_windows", None), 1, None),
    )
    for flag, value, minimum, needs in flags:
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise ValueError(f"{flag} must be an int >= {minimum}; received {value!r}")
        wanted = (needs,) if needs else ("window_mean", "window_max")
        if strategy not in wanted:
            raise ValueError(
                f"{flag} applies to --long-inputs {' or '.join(wanted)}; "
                f"received --long-inputs {strategy}"
            )
    if sequence_length is not None:
        budget = sequence_length - 2
        for flag, value in (
            ("--head-tokens", getattr(args, "head_tokens", None)),
            ("--window-stride", getattr(args, "window_stride", None)),
        ):
            if value is not None and value > budget:
                raise ValueError(
                    f"{flag} must be at most --sequence-length - 2 = {budget}; received {value}"
                )
    if is_pair and strategy not in (None, "head"):
        raise ValueError(
            f"--long-inputs {strategy} reads single texts; this task classifies "
            "text pairs (pairs are cut longest-first to fit)"
        )


def _load_splits(args):
    from kbert.data import (
        CLASSIFICATION_TASKS,
        classification_task_from_files,
        load_classification_task,
    )

    if args.task == FILES_TASK:
        if not args.train_file or not args.test_file:
            raise ValueError("--task files needs --train-file and --test-file")
        task, splits = classification_task_from_files(
            args.train_file,
            args.test_file,
            args.validation_file,
            validation_fraction=args.validation_fraction,
            seed=args.seed,
            max_examples=args.max_train_examples,
        )
        return task, splits
    task = CLASSIFICATION_TASKS[args.task]
    splits = {
        split: load_classification_task(
            args.task,
            split,
            data_dir=args.data_dir,
            validation_fraction=args.validation_fraction,
            seed=args.seed,
            max_examples=args.max_train_examples if split == "train" else None,
        )
        for split in ("train", "validation", "test")
    }
    return task, splits


def _report(classifier, preprocessor, examples, task):
    from kbert.tasks import evaluate_classifier

    report = evaluate_classifier(
        classifier,
        preprocessor,
        examples,
        positive_label=task.positive_label if task.metric == "f1" else None,
    )
    report.pop("predictions")
    return report


def check_finetune_flags(args):
    """Fills the task's default flags and refuses bad ones and a bad --output-dir, before
    TensorFlow is imported (`kbert finetune` answers a typo at once)."""
    if args.sequence_length is None:
        args.sequence_length = 128
    if args.learning_rate is None:
        args.learning_rate = 5e-5
    check_training_arguments(args)
    check_output_dir(args.output_dir, args.overwrite)


def finetune(args):
    """Fine-tunes a classifier and writes a run directory; returns the metrics dict."""
    check_finetune_flags(args)

    import keras

    from kbert.checkpoints import load_pretrained, trained_pooling
    from kbert.metrics import confusion_matrix_png, learning_curve_png
    from kbert.models import SequenceClassifier
    from kbert.train import BestCheckpoint, fine_tune_classifier

    task, splits = _load_splits(args)  # data errors come before any file is written
    check_long_input_arguments(args, task.is_pair, args.sequence_length)
    keras.utils.set_random_seed(args.seed)
    encoder, tokenizer = load_pretrained(args.model, dtype=args.dtype)
    check_sequence_length(args.sequence_length, encoder, args.model)
    preprocessor = make_preprocessor(tokenizer, args.sequence_length, args)
    if args.pooling == "trained":  # recorded resolved, so the run says how it read the model
        args.pooling = trained_pooling(args.model, causal=encoder.config.causal)
    classifier = SequenceClassifier(
        encoder,
        len(task.label_names),
        pooling=args.pooling,
        dropout=args.dropout,
        hidden_units=args.hidden_units,
    )
    train, validation, test = splits["train"], splits["validation"], splits["test"]

    config = RunConfig(
        task_family="classification",
        task=args.task,
        settings=flag_settings(args),
        label_names=task.label_names.names,
        is_pair=task.is_pair,
        task_metric=task.metric,
        train_examples=len(train),
        validation_examples=len(validation),
        test_examples=len(test),
        sources={split: examples.source for split, examples in splits.items()},
        versions=software_versions(),
    )
    # Everything is written into a hidden sibling and moved to --output-dir only at the end.
    with StagedRunDirectory(args.output_dir) as staged:
        run_dir = staged.path
        write_run_start(run_dir, config, preprocessor)
        best = BestCheckpoint(run_dir / MODEL_FILE, monitor="val_accuracy")
        callbacks = [
            best,
            keras.callbacks.CSVLogger(str(run_dir / "history.csv")),
            keras.callbacks.TensorBoard(str(run_dir / "tensorboard")),
        ]
        settings = training_settings(args, callbacks, jit_compile=args.jit)
        _, train_seconds = fine_tune_classifier(
            classifier, preprocessor, train, validation, settings=settings
        )

        classifier = keras.saving.load_model(run_dir / MODEL_FILE, compile=False)
        metrics = {
            "task": task.name,
            "best_epoch": best.best_epoch,
            "train_seconds": round(train_seconds, 1),
            "train_examples_per_s": round(len(train) * args.epochs / train_seconds, 1),
            "validation": _report(classifier, preprocessor, validation, task),
            "test": _report(classifier, preprocessor, test, task),
        }
        (run_dir / "metrics.json").write_text(json.dumps(metrics, indent=2))
        learning_curve_png(
            run_dir / "history.csv",
            run_dir / "learning_curve.png",
            title=f"{task.name}: {args.model}",
        )
        confusion_matrix_png(
            metrics["test"]["confusion_matrix"],
            metrics["test"]["label_names"],
            run_dir / "confusion_matrix.png",
            title=f"{task.name} test",
        )
        staged.commit()
    return metrics


def is_pair_run(run_dir):
    """Whether a classification run classifies text pairs (read from its config.json)."""
    return run_is_pair(read_config(run_dir))


def run_is_pair(config, default=False):
    """The run's `is_pair`; the oldest runs did not record it, and their task tells."""
    if config.is_pair is not None:
        return bool(config.is_pair)
    from kbert.data import CLASSIFICATION_TASKS

    task = CLASSIFICATION_TASKS.get(config.task)
    return bool(task.is_pair) if task else default


def evaluate(args):
    """Re-scores a run's best model on a split; returns the report."""
    from kbert.data import CLASSIFICATION_TASKS, ClassificationTask, LabelVocabulary

    run = read_run(args.run_dir)
    config, label_names = run.config, list(run.config.label_names)
    preprocessor = override_long_inputs(run.preprocessor, args, config)
    settings = config.data_settings(
        data_dir=args.data_dir or config.setting("data_dir"), max_train_examples=None
    )
    task, splits = _load_splits(settings)
    if list(task.label_names.names) != label_names and config.task != FILES_TASK:
        raise ValueError(f"the run's labels {label_names} differ from task {task.name}'s")
    if config.task == FILES_TASK:
        task = ClassificationTask(FILES_TASK, LabelVocabulary(label_names), task.is_pair)
    elif task.name in CLASSIFICATION_TASKS:
        task = CLASSIFICATION_TASKS[task.name]
    return _report(run.model, preprocessor, splits[args.split], task)


def predict(args, batches=None):
    """Classifies texts (or pairs) with a run's best model; yields one dict per input.

    Args:
        args: the parsed `kbert predict` flags (`run_dir`, `texts`, `pair`).
        batches: iterable of `(texts, pairs)` lists, default None (`args.texts` and
            `args.pair` as one batch). The run is loaded once for all of them.

    Each result says whether its input was longer than the run's sequence length: "tokens" is
    the input's length in tokens with [CLS] and [SEP], "tokens_kept" what the model read, and
    "truncated" whether the rest was cut (classification reads the first tokens only).
    """
    import numpy as np

    from kbert.tasks import classifier_logits

    run = read_run(args.run_dir)
    config, classifier, label_names = run.config, run.model, list(run.config.label_names)
    preprocessor = override_long_inputs(run.preprocessor, args, config)
    is_pair = run_is_pair(config, default=bool(args.pair))
    if batches is None:
        batches = [(list(args.texts), list(args.pair) if args.pair else None)]
    for texts, pairs in batches:
        if not texts:
            raise ValueError("predict needs at least one text")
        if is_pair and pairs is None:
            raise ValueError(
                f"task {config.task} classifies text pairs: give each text its "
                "second text with --pair (once per text, in order), or "
                "'text<TAB>second text' lines with --input"
            )
        if not is_pair and pairs is not None:
            raise ValueError(f"task {config.task} classifies single texts; drop --pair")
        scored = classifier_logits(classifier, preprocessor, texts, pairs)
        logits = scored["logits"]
        probabilities = np.exp(logits - logits.max(axis=-1, keepdims=True))
        probabilities /= probabilities.sum(axis=-1, keepdims=True)
        for index, row in enumerate(probabilities):
            best = int(np.argmax(row))
            tokens, kept = int(scored["tokens"][index]), int(scored["tokens_kept"][index])
            yield {
                "text": texts[index],
                **({"pair": pairs[index]} if pairs else {}),
                "label": label_names[best],
                "probability": round(float(row[best]), 4),
                "probabilities": {
                    name: round(float(p), 4) for name, p in zip(label_names, row, strict=True)
                },
                "tokens": tokens,
                "tokens_kept": kept,
                "truncated": kept < tokens,
                "windows": int(scored["rows"][index]),
            }


def override_long_inputs(preprocessor, args, config):
    """The run's preprocessor, or one with the --long-inputs flags given to evaluate/predict."""
    if getattr(args, "long_inputs", None) is None:
        for flag in ("head_tokens", "window_stride", "max_windows"):
            if getattr(args, flag, None) is not None:
                raise ValueError(f"--{flag.replace('_', '-')} needs --long-inputs")
        return preprocessor
    check_long_input_arguments(args, run_is_pair(config), preprocessor.sequence_length)
    return make_preprocessor(preprocessor.tokenizer, preprocessor.sequence_length, args)


def main_finetune(args):
    metrics = finetune(args)
    metric = "f1" if "f1" in metrics["test"] else "accuracy"
    print(
        f"best epoch {metrics['best_epoch']}: validation accuracy "
        f"{metrics['validation']['accuracy']:.4f}, test {metric} {metrics['test'][metric]:.4f} "
        f"(macro-F1 {metrics['test']['macro_f1']:.4f}); "
        f"{metrics['train_examples_per_s']} training examples/s"
    )
    print(f"run directory: {os.path.abspath(args.output_dir)}")
    print(
        json.dumps(
            {key: metrics[key] for key in ("task", "best_epoch", "train_examples_per_s")}
            | {
                "test_accuracy": metrics["test"]["accuracy"],
                "test_macro_f1": metrics["test"]["macro_f1"],
            }
        )
    )
