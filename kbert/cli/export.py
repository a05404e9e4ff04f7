"""`kbert export`: a fine-tuned run (or a pretrained encoder) as a TF Serving SavedModel.

    kbert export runs/trec --name trec                  # saved_models/trec/<next version>/
    kbert export runs/ner --name ner --version 3 --models-config
    kbert export --model minilm_l6 --name minilm        # the `embed` signature only
    kbert export runs/trec --name trec --dtype bfloat16 # matmuls in bfloat16, outputs float32
    kbert export runs/trec --name trec --xla-rows 4     # 1-4 texts a call through XLA

The run directory's kind decides the signatures: a classifier gets `classify` (the default
signature), a BIO tagger `tag`, an extractive QA model `answer`; all also get `embed` and
`token_ids`. See `kbert.export.export_saved_model`.
"""

from pathlib import Path

from kbert.cli import classification, token_tasks
from kbert.cli.choices import EXPORT_DTYPES
from kbert.cli.classification import add_long_input_arguments
from kbert.cli.run_settings import check_sequence_length
from kbert.runs import read_config, read_run

# As `kbert finetune --sequence-length`: shorter windows leave a text hardly a token.
MIN_SEQUENCE_LENGTH = 8
# kbert.export.export_settings.MAX_XLA_ROWS, here so that `--help` needs no TensorFlow (a test
# checks the two agree).
MAX_XLA_ROWS = 32


def add_export_arguments(parser):
    parser.add_argument(
        "run_dir", nargs="?", help="a directory written by `kbert finetune` (or use --model)"
    )
    parser.add_argument(
        "--model",
        help="export a pretrained encoder instead of a run: a "
        "checkpoint name (minilm_l6) or directory",
    )
    parser.add_argument("--name", required=True, help="model name: saved_models/<name>/")
    parser.add_argument(
        "--version",
        type=int,
        default=None,
        help="version number (default: one more than the highest existing); "
        "an existing version is never overwritten",
    )
    parser.add_argument(
        "--export-dir", default="saved_models", help="the TF Serving model base directory"
    )
    parser.add_argument(
        "--sequence-length",
        type=int,
        default=None,
        help=f"tokens per input in the serving graph, from {MIN_SEQUENCE_LENGTH} "
        "to the model's position table (default: the run's; for --model "
        "128 or the position table if shorter)",
    )
    parser.add_argument(
        "--dtype",
        default="float32",
        choices=EXPORT_DTYPES,
        help="what the exported model computes in (outputs are float32 either way): "
        "bfloat16 serves faster on CPUs with AVX-512 BF16 or AMX and on GPUs with bfloat16 "
        "units, slower elsewhere; auto picks bfloat16 where this machine has them, by its "
        "features, not by timing (default float32)",
    )
    parser.add_argument(
        "--xla-rows",
        type=int,
        default=0,
        help="run batches of at most this many rows through XLA, from 0 (off, the default) "
        f"to {MAX_XLA_ROWS}: faster small requests on a CPU; writes TF Serving's warm-up "
        "requests (every shape compiles while the server loads the model) and needs "
        "tensorflow_model_server --xla_cpu_compilation_enabled=true",
    )
    add_long_input_arguments(
        parser.add_argument_group(
            "long inputs (classification runs; `classify` applies it in the graph)"
        )
    )
    parser.add_argument(
        "--models-config",
        action="store_true",
        help="also (re)write <export-dir>/models.config for "
        "tensorflow_model_server --model_config_file",
    )


def check_export_flags(args):
    """Refuses a bad combination of flags or a directory that is no run, before TensorFlow is
    imported; the sequence length's upper bound needs the model's position table, later."""
    if (args.run_dir is None) == (args.model is None):
        raise ValueError(
            "give exactly one of RUN_DIR (a `kbert finetune` run directory) and "
            "--model (a pretrained checkpoint)"
        )
    if args.sequence_length is not None and args.sequence_length < MIN_SEQUENCE_LENGTH:
        raise ValueError(
            f"--sequence-length must be an int >= {MIN_SEQUENCE_LENGTH} (as for "
            f"`kbert finetune`); received {args.sequence_length}"
        )
    if not 0 <= args.xla_rows <= MAX_XLA_ROWS:
        raise ValueError(
            f"--xla-rows must be an int from 0 (off) to {MAX_XLA_ROWS}; received {args.xla_rows}"
        )
    if args.run_dir is not None:
        read_config(args.run_dir)  # names the directory and what it lacks


def main_export(args):
    """Exports and returns a JSON-ready summary."""
    from kbert.export import ExportSettings, export_saved_model, read_export_settings
    from kbert.export.models_config import write_models_config
    from kbert.export.saved_model_files import check_export_dir

    check_export_flags(args)
    check_export_dir(args.export_dir, "--export-dir")

    def checked_length(encoder, default):
        if args.sequence_length is None:
            return default
        check_sequence_length(args.sequence_length, encoder, args.model or args.run_dir)
        return args.sequence_length

    long_flags = [
        flag
        for flag in ("long_inputs", "head_tokens", "window_stride", "max_windows")
        if getattr(args, flag, None) is not None
    ]
    token_run = args.model is None and token_tasks.is_token_run(args.run_dir)
    if long_flags and (args.model is not None or token_run):
        raise ValueError(
            f"--{long_flags[0].replace('_', '-')} is for classification runs; "
            f"{args.model or args.run_dir} is not one"
        )
    common = {"export_dir": args.export_dir, "name": args.name, "version": args.version}
    if args.model is not None:
        from kbert.checkpoints import load_pretrained

        encoder, tokenizer = load_pretrained(args.model)
        length = checked_length(encoder, min(128, encoder.config.max_sequence_length))
        path = export_saved_model(
            encoder,
            tokenizer,
            settings=ExportSettings(
                task="embed", sequence_length=length, dtype=args.dtype, xla_rows=args.xla_rows
            ),
            **common,
        )
    elif token_run:
        run = read_run(args.run_dir)
        model, tokenizer, config = run.model, run.preprocessor, run.config
        sequence_length = checked_length(
            getattr(model, "encoder", None), config.setting("sequence_length")
        )
        if config.task == "squad":
            path = export_saved_model(
                model,
                tokenizer,
                settings=ExportSettings(
                    task="answer",
                    sequence_length=sequence_length,
                    max_answer_length=config.setting("max_answer_length"),
                    dtype=args.dtype,
                    xla_rows=args.xla_rows,
                ),
                **common,
            )
        elif config.setting("method") == "span":
            raise ValueError(
                f"{args.run_dir} holds a span-based NER model; the `tag` signature "
                "decodes BIO taggers (fine-tune with --method softmax or crf)"
            )
        else:
            path = export_saved_model(
                model,
                tokenizer,
                settings=ExportSettings(
                    task="tag",
                    label_names=list(config.label_names),
                    sequence_length=sequence_length,
                    dtype=args.dtype,
                    xla_rows=args.xla_rows,
                ),
                **common,
            )
    else:
        run = read_run(args.run_dir)
        model, config = run.model, run.config
        preprocessor = classification.override_long_inputs(run.preprocessor, args, config)
        reader = preprocessor if hasattr(preprocessor, "aggregation") else preprocessor.tokenizer
        path = export_saved_model(
            model,
            reader,
            settings=ExportSettings(
                task="classify",
                label_names=list(config.label_names),
                pair=classification.run_is_pair(config),
                sequence_length=checked_length(model.encoder, preprocessor.sequence_length),
                dtype=args.dtype,
                xla_rows=args.xla_rows,
            ),
            **common,
        )
    summary = {
        "path": str(path),
        "name": args.name,
        "version": int(Path(path).name),
        "dtype": read_export_settings(path)["dtype"],  # what "auto" chose
        "xla_rows": args.xla_rows,
    }
    if args.models_config:
        summary["models_config"] = str(write_models_config(args.export_dir))
    return summary
