"""`kbert pretrain`: pretrain a model from scratch on one's own text.

    kbert pretrain --objective masked --corpus books.txt --budget-minutes 2 --output-dir enc
    kbert finetune --task trec --model enc --output-dir runs/trec

One of four objectives (`kbert.models.pretraining_models`): causal, masked, ELECTRA or T5's span
corruption, on text or JSON-lines files or a named corpus, with a tokenizer trained on the corpus
(`kbert.text.corpus_tokenizers`) or given, for a budget of steps or of minutes (timed here,
`kbert.train.plan_time_budget`). The output directory holds

    encoder.keras        the pretrained encoder (causal, masked; ELECTRA's discriminator), or
    model.keras          the encoder-decoder (span corruption)
    vocab.txt            the WordPiece vocabulary, or tokenizer.json (BPE, unigram)
    pretrain.json        what the run was given and what it measured
    history.csv, learning_curve.png, tensorboard/ (+ plan.json for a minutes budget)

so that `kbert finetune --model DIR` and `kbert export --model DIR` take an encoder trained with a
WordPiece vocabulary. Everything is written into a hidden sibling of the output directory that
is moved into place at the end (`kbert.runs.ResumableRunDirectory`); a run killed with kill -9
keeps its checkpoints there, and the same command with `--resume` continues it.
"""

import json
import math
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from kbert.arguments import add_recipe_arguments
from kbert.cli.choices import (
    CORPUS_FORMATS,
    DOCUMENT_SEPARATORS,
    ENCODER_DECODER_PRESETS,
    ENCODER_PRESETS,
    NAMED_CORPORA,
    PRETRAINING_DTYPES,
    PRETRAINING_OBJECTIVES,
    PRETRAINING_RECIPE,
    PRETRAINING_SCHEDULES,
    STRATEGIES,
    TOKENIZER_KINDS,
)
from kbert.files import atomic_write_text
from kbert.runs import ResumableRunDirectory, check_output_dir, interrupted_runs

DESCRIPTION = (
    "Pretrains a model from scratch on a corpus with one objective (causal, masked, electra, "
    "span_corruption), a tokenizer trained on the corpus (or given), for a budget of steps or "
    "minutes. Writes the encoder (encoder.keras; span_corruption: the encoder-decoder as "
    "model.keras), its tokenizer, pretrain.json, history.csv, learning_curve.png and "
    "tensorboard/ to --output-dir, which `kbert finetune --model` and `kbert export --model` "
    "read (encoders with a WordPiece vocabulary). The directory appears only when training "
    "has finished; a run killed meanwhile continues with --resume."
)
PRETRAIN_FILE = "pretrain.json"
PRETRAIN_MARKER = "kbert_pretrain"  # key of pretrain.json that marks a directory kbert wrote
ENCODER_FILE = "encoder.keras"  # as kbert.checkpoints.pretrained reads it
MODEL_FILE = "model.keras"
PLAN_FILE = "plan.json"
PRETRAIN_FILES = frozenset(
    {
        PRETRAIN_FILE,
        ENCODER_FILE,
        MODEL_FILE,
        "vocab.txt",
        "tokenizer.json",
        "history.csv",
        "learning_curve.png",
        "tensorboard",
        PLAN_FILE,
    }
)
SIZE_FLAGS = ("num_layers", "hidden_dim", "num_heads")
SIZE_DEFAULTS = {"num_layers": 4, "hidden_dim": 256, "num_heads": 4}
# Flags that change neither the model nor its training: a resumed run may differ in them.
NOT_RESUME_SETTINGS = ("resume", "overwrite", "verbose")


def add_pretrain_arguments(parser):
    """The flags of `kbert pretrain`."""
    corpus = parser.add_argument_group("corpus (one of --corpus and --corpus-name)")
    source = corpus.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--corpus",
        nargs="+",
        metavar="FILE",
        help="training text: plain text (a blank line between documents) or JSON lines "
        "(.jsonl / .ndjson, the text in --text-field)",
    )
    source.add_argument(
        "--corpus-name",
        choices=NAMED_CORPORA,
        help="a corpus of the course data (--data-dir), with its held-out split",
    )
    corpus.add_argument(
        "--validation-corpus",
        nargs="+",
        metavar="FILE",
        help="held-out text files, scored after every checkpoint interval (default: none "
        "with --corpus; the corpus's own held-out split with --corpus-name)",
    )
    corpus.add_argument(
        "--corpus-format",
        choices=CORPUS_FORMATS,
        default="auto",
        help="auto = jsonl for .jsonl/.ndjson names, text otherwise",
    )
    corpus.add_argument("--text-field", default="text", help="the JSON-lines field with the text")
    corpus.add_argument(
        "--document-separator",
        choices=DOCUMENT_SEPARATORS,
        default="blank_line",
        help="text files: blank_line = a document is a run of non-blank lines; line = every "
        "line is a document",
    )
    corpus.add_argument("--data-dir", help="course data (default: $KBERT_DATA_DIR)")
    corpus.add_argument(
        "--max-documents",
        type=int,
        default=0,
        help="keep the first N training documents (0 = all)",
    )
    tokenizer = parser.add_argument_group("tokenizer (trained on the corpus, or given)")
    tokenizer.add_argument(
        "--tokenizer",
        choices=TOKENIZER_KINDS,
        default=None,
        help="subword tokenizer to train on the corpus (default wordpiece, the only one "
        "`kbert finetune` reads)",
    )
    tokenizer.add_argument(
        "--tokenizer-file",
        metavar="FILE",
        help="use this tokenizer instead: a WordPiece vocab.txt or a kbert BPE/unigram "
        "tokenizer.json (with [PAD], [CLS], [SEP], [MASK])",
    )
    tokenizer.add_argument("--vocabulary-size", type=int, default=8000)
    model = parser.add_argument_group("model")
    model.add_argument(
        "--objective",
        required=True,
        choices=PRETRAINING_OBJECTIVES,
        help="causal (next token), masked (BERT's MLM), electra (replaced-token detection; "
        "keeps the discriminator) or span_corruption (T5's; an encoder-decoder, which "
        "`kbert finetune` cannot start from)",
    )
    model.add_argument(
        "--preset",
        help=f"a named size instead of the three flags below: {', '.join(ENCODER_PRESETS)} "
        f"(encoders); {', '.join(ENCODER_DECODER_PRESETS)} (span_corruption)",
    )
    model.add_argument("--num-layers", type=int, help="blocks (default 4; span_corruption: each)")
    model.add_argument("--hidden-dim", type=int, help="width (default 256)")
    model.add_argument("--num-heads", type=int, help="attention heads (default 4)")
    add_recipe_arguments(model)
    model.add_argument(
        "--block-length",
        type=int,
        default=PRETRAINING_RECIPE["block_length"],
        help="tokens per training sequence",
    )
    train = parser.add_argument_group("budget and training")
    budget = train.add_mutually_exclusive_group(required=True)
    budget.add_argument("--budget-steps", type=int, help="train this many batches")
    budget.add_argument(
        "--budget-minutes",
        type=float,
        help="train the steps that fit in this many minutes (timed on this machine first)",
    )
    train.add_argument(
        "--checkpoint-every",
        type=int,
        default=100,
        help="steps per checkpoint interval: validation, history row and the checkpoint a "
        "--resume continues from (--budget-steps is rounded up to whole intervals)",
    )
    train.add_argument("--batch-size", type=int, default=32)
    train.add_argument(
        "--gradient-accumulation",
        type=int,
        default=1,
        help="batches averaged per update",
    )
    train.add_argument("--learning-rate", type=float, default=1e-3, help="peak AdamW rate")
    train.add_argument("--warmup-steps", type=int, default=200, help="updates of warmup")
    train.add_argument(
        "--schedule",
        choices=PRETRAINING_SCHEDULES,
        default=PRETRAINING_RECIPE["schedule"],
        help="decay to 0 after warmup: linear (BERT's, Cramming's) or cosine (the tutorial's)",
    )
    train.add_argument(
        "--validation-steps",
        type=int,
        default=20,
        help="held-out batches scored per interval (0 = all)",
    )
    train.add_argument(
        "--dtype",
        choices=PRETRAINING_DTYPES,
        default="float32",
        help="auto = mixed_bfloat16 where the hardware computes it and it trains faster here",
    )
    train.add_argument("--jit", action="store_true", help="compile the train step with XLA")
    train.add_argument("--strategy", choices=STRATEGIES, default="default")
    train.add_argument("--seed", type=int, default=0)
    out = parser.add_argument_group("output")
    out.add_argument("--output-dir", required=True, help="the directory to create")
    out.add_argument(
        "--overwrite", action="store_true", help="replace a directory `kbert pretrain` wrote"
    )
    out.add_argument(
        "--resume",
        action="store_true",
        help="continue the interrupted run (killed, say) of this --output-dir from its last "
        "checkpoint interval, given the same flags; without one, start a new run",
    )
    out.add_argument(
        "--verbose",
        type=int,
        choices=(0, 1, 2),
        default=1,
        help="Keras progress: 0 silent, 1 progress bar, 2 one line per interval",
    )


def is_pretrain_dir(path):
    """Whether `path` holds a `pretrain.json` marked as written by `kbert pretrain`."""
    try:
        config = json.loads((Path(path) / PRETRAIN_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(config, dict) and config.get(PRETRAIN_MARKER) is True


def run_settings(args):
    """The flags a resumed run must share with the run it continues (JSON values)."""
    return {
        key: value
        for key, value in vars(args).items()
        if key not in NOT_RESUME_SETTINGS and key != "command" and not callable(value)
    }


def check_pretrain_flags(args):
    """Refuses bad flags, corpus paths and output directories before TensorFlow is imported."""
    positive = (
        ("--vocabulary-size", args.vocabulary_size, 16),
        ("--block-length", args.block_length, 8),
        ("--budget-steps", args.budget_steps, 1),
        ("--checkpoint-every", args.checkpoint_every, 1),
        ("--batch-size", args.batch_size, 1),
        ("--gradient-accumulation", args.gradient_accumulation, 1),
        ("--warmup-steps", args.warmup_steps, 0),
        ("--validation-steps", args.validation_steps, 0),
        ("--max-documents", args.max_documents, 0),
        ("--num-layers", args.num_layers, 1),
        ("--hidden-dim", args.hidden_dim, 1),
        ("--num-heads", args.num_heads, 1),
        ("--generator-width-factor", args.generator_width_factor, 1),
    )
    for flag, value, minimum in positive:
        if value is not None and value < minimum:
            raise ValueError(f"{flag} must be an int >= {minimum}; received {value}")
    if args.budget_minutes is not None and not args.budget_minutes > 0:
        raise ValueError(f"--budget-minutes must be a number > 0; received {args.budget_minutes}")
    if not args.learning_rate > 0:
        raise ValueError(
            f"--learning-rate must be a positive number; received {args.learning_rate}"
        )
    _check_recipe_flags(args)
    _check_model_flags(args)
    _check_tokenizer_flags(args)
    for flag, paths in (("--corpus", args.corpus), ("--validation-corpus", args.validation_corpus)):
        for path in paths or ():
            if not Path(path).is_file():
                raise ValueError(
                    f"{flag} {path!r} is not a file; expected a text or JSON-lines file"
                )
    if args.corpus_name is not None and args.validation_corpus:
        raise ValueError(
            "--validation-corpus goes with --corpus; --corpus-name brings its held-out split"
        )
    check_output_dir(
        args.output_dir,
        args.overwrite,
        run_files=PRETRAIN_FILES,
        is_run=is_pretrain_dir,
        description=f"a `kbert pretrain` directory (no {PRETRAIN_FILE} with {PRETRAIN_MARKER!r})",
    )


def _check_recipe_flags(args):
    """Dropouts, the mask rate (the recipe's for the objective when not given) and λ."""
    for flag, value in (
        ("--dropout", args.dropout),
        ("--fine-tuning-dropout", args.fine_tuning_dropout),
    ):
        if not 0 <= value < 1:
            raise ValueError(f"{flag} must be in [0, 1); received {value}")
    if args.mask_rate is None and args.objective in ("masked", "electra"):
        args.mask_rate = PRETRAINING_RECIPE[f"{args.objective}_mask_rate"]
    if args.mask_rate is not None and not 0 < args.mask_rate < 1:
        raise ValueError(f"--mask-rate must be a number in (0, 1); received {args.mask_rate}")
    if not args.discriminator_weight > 0:
        raise ValueError(
            f"--discriminator-weight must be a number > 0; received {args.discriminator_weight}"
        )


def _check_model_flags(args):
    sized = [flag for flag in SIZE_FLAGS if getattr(args, flag) is not None]
    if args.preset is not None:
        presets = (
            ENCODER_DECODER_PRESETS if args.objective == "span_corruption" else ENCODER_PRESETS
        )
        if args.preset not in presets:
            raise ValueError(
                f"--preset {args.preset!r} is no preset for --objective {args.objective}; "
                f"expected one of {', '.join(presets)}"
            )
        if sized:
            raise ValueError(
                f"--preset {args.preset} fixes the sizes; drop --{sized[0].replace('_', '-')}"
            )
        return
    for flag in SIZE_FLAGS:
        if getattr(args, flag) is None:
            setattr(args, flag, SIZE_DEFAULTS[flag])
    if args.hidden_dim % args.num_heads:
        raise ValueError(
            f"--hidden-dim {args.hidden_dim} must be a multiple of --num-heads {args.num_heads}"
        )
    if args.objective == "electra":  # the generator is --generator-width-factor times narrower
        factor = args.generator_width_factor
        heads = max(1, args.num_heads // factor)
        if args.hidden_dim // factor < 1 or (args.hidden_dim // factor) % heads:
            raise ValueError(
                f"--objective electra trains a generator {factor} times narrower: --hidden-dim "
                f"{args.hidden_dim} / {factor} must be a multiple of --num-heads "
                f"{args.num_heads} / {factor} (at least 1); received "
                f"{args.hidden_dim // factor} and {heads}"
            )


def _check_tokenizer_flags(args):
    given_json = args.tokenizer_file and Path(args.tokenizer_file).suffix.lower() == ".json"
    if args.objective == "span_corruption" and given_json:
        raise ValueError(
            "--objective span_corruption adds T5's sentinel tokens to a WordPiece vocabulary; "
            f"--tokenizer-file {args.tokenizer_file!r} is a BPE or unigram tokenizer, expected "
            "a vocab.txt"
        )
    if args.tokenizer_file is not None:
        if args.tokenizer is not None:
            raise ValueError("give --tokenizer (to train one) or --tokenizer-file, not both")
        if not Path(args.tokenizer_file).is_file():
            raise ValueError(
                f"--tokenizer-file {args.tokenizer_file!r} is not a file; expected a vocab.txt "
                "or tokenizer.json"
            )
    elif args.tokenizer is None:
        args.tokenizer = "wordpiece"
    if args.objective == "span_corruption" and args.tokenizer not in (None, "wordpiece"):
        raise ValueError(
            "--objective span_corruption adds T5's sentinel tokens to a WordPiece vocabulary; "
            f"use --tokenizer wordpiece, not {args.tokenizer}"
        )


def sentinel_count(block_length):
    """T5's sentinels a block needs (one per corrupted span), at least 32 as in lab19."""
    noise = round(block_length * 0.15)
    return max(32, round(noise / 3.0) + 1)


def _read_corpus(args):
    from kbert.data import read_named_corpus, read_text_corpus

    if args.corpus_name is not None:
        return read_named_corpus(args.corpus_name, args.data_dir, args.max_documents)
    options = dict(
        format=args.corpus_format,
        text_field=args.text_field,
        document_separator=args.document_separator,
    )
    train = read_text_corpus(args.corpus, **options)
    if args.max_documents:
        train = train[: args.max_documents]
    valid = read_text_corpus(args.validation_corpus, **options) if args.validation_corpus else None
    return train, valid


def _tokenizer(args, train_documents, directory):
    """The run's tokenizer and its file: kept in `directory` (a resumed run's), given, or
    trained on the corpus into `directory`."""
    from kbert.text.corpus_tokenizers import (
        TOKENIZER_FILE,
        VOCABULARY_FILE,
        load_tokenizer_file,
        train_corpus_tokenizer,
    )
    from kbert.text.seq2seq_noising import sentinel_tokens

    for name in (VOCABULARY_FILE, TOKENIZER_FILE):
        if (directory / name).is_file():
            return load_tokenizer_file(directory / name), directory / name
    if args.tokenizer_file is not None:
        return load_tokenizer_file(args.tokenizer_file), Path(args.tokenizer_file)
    extra = ()
    if args.objective == "span_corruption":
        extra = sentinel_tokens(sentinel_count(args.block_length))
    return train_corpus_tokenizer(
        train_documents, args.tokenizer, args.vocabulary_size, directory, extra
    )


def _sentinel_ids(args, tokenizer):
    from kbert.text.seq2seq_noising import sentinel_tokens

    if args.objective != "span_corruption":
        return None
    wanted = sentinel_tokens(sentinel_count(args.block_length))
    vocabulary = {token: index for index, token in enumerate(tokenizer.get_vocabulary())}
    missing = [token for token in wanted if token not in vocabulary]
    if missing:
        raise ValueError(
            f"--tokenizer-file {args.tokenizer_file!r} lacks T5's sentinel tokens "
            f"({missing[0]} … {missing[-1]}: {len(missing)} of {len(wanted)}); span "
            "corruption needs them (train the tokenizer here instead)"
        )
    return [vocabulary[token] for token in wanted]


def _check_roles(tokenizer, objective, source):
    roles = ["pad_token_id", "cls_token_id", "sep_token_id"]
    if objective in ("masked", "electra"):
        roles.append("mask_token_id")
    missing = [role[: -len("_id")] for role in roles if getattr(tokenizer, role, None) is None]
    if missing:
        raise ValueError(
            f"{source} has no {', '.join(missing)}; --objective {objective} needs [PAD], [CLS], "
            "[SEP] and, for masked and electra, [MASK]"
        )


def pretrain(args):
    """Pretrains a model and writes the output directory; returns the `pretrain.json` dict."""
    check_pretrain_flags(args)

    import keras

    from kbert.data.pretraining_inputs import pretraining_datasets
    from kbert.metrics import learning_curve_png
    from kbert.models.pretraining_models import (
        SIZED_PRESET,
        PretrainingModelSettings,
        build_pretraining_model,
        encoder_for_fine_tuning,
        pretrained_encoder,
    )
    from kbert.runs import software_versions
    from kbert.train import ResumableBackup, make_strategy, plan_time_budget
    from kbert.train.fine_tuning import poolers_frozen
    from kbert.train.precision import resolve_dtype
    from kbert.train.pretraining_optimizer import compile_for_pretraining

    train_documents, valid_documents = _read_corpus(args)  # data errors before any writing
    staged = ResumableRunDirectory(args.output_dir, run_settings(args), resume=args.resume)
    resumable = staged.resumable_path()
    if not args.resume and interrupted_runs(args.output_dir):
        print(
            f"note: an interrupted run of {args.output_dir} is kept beside it; --resume "
            "continues it (this run starts over)",
            file=sys.stderr,
            flush=True,
        )
    keras.utils.set_random_seed(args.seed)
    with tempfile.TemporaryDirectory(prefix="kbert-pretrain-") as scratch:
        tokenizer, tokenizer_path = _tokenizer(args, train_documents, resumable or Path(scratch))
        source = (
            f"--tokenizer-file {args.tokenizer_file!r}"
            if args.tokenizer_file
            else (f"the trained {args.tokenizer} tokenizer")
        )
        _check_roles(tokenizer, args.objective, source)
        sentinel_ids = _sentinel_ids(args, tokenizer)
        train, valid = pretraining_datasets(
            args.objective,
            train_documents,
            valid_documents,
            tokenizer,
            args.block_length,
            args.batch_size,
            seed=args.seed,
            sentinel_ids=sentinel_ids,
            mask_rate=args.mask_rate or 0.15,  # causal and span corruption mask nothing
        )
        settings = PretrainingModelSettings(
            preset=args.preset or SIZED_PRESET,
            num_layers=args.num_layers or SIZE_DEFAULTS["num_layers"],
            hidden_dim=args.hidden_dim or SIZE_DEFAULTS["hidden_dim"],
            num_heads=args.num_heads or SIZE_DEFAULTS["num_heads"],
            layer_norm=args.layer_norm,
            dropout=args.dropout,
            block_length=args.block_length,
            dtype=resolve_dtype(args.dtype),
            seed=args.seed,
            generator_width_factor=args.generator_width_factor,
            discriminator_weight=args.discriminator_weight,
            tie_embeddings=args.tie_embeddings,
        )
        vocabulary_size = tokenizer.vocabulary_size()
        strategy = make_strategy(args.strategy)

        def compiled_model(total_steps):
            with strategy.scope():
                model = build_pretraining_model(args.objective, settings, vocabulary_size)
                compile_for_pretraining(
                    model,
                    args.learning_rate,
                    total_steps,
                    args.warmup_steps,
                    args.gradient_accumulation,
                    jit_compile=args.jit,
                    schedule=args.schedule,
                )
            return model

        plan = None
        if args.budget_minutes is not None:
            plan_path = resumable / PLAN_FILE if resumable else None
            probe = None
            if plan_path is None or not plan_path.is_file():
                print("timing training steps for the minutes budget …", flush=True)
                probe = compiled_model(1000)
            # Planned in single steps, then cut into whole intervals that fit (an interval
            # longer than the budget is shortened), so the budget is not overrun by rounding.
            with poolers_frozen(probe):
                plan = plan_time_budget(probe, train, args.budget_minutes, 1, path=plan_path)
            steps_per_interval = min(args.checkpoint_every, plan["steps"])
            intervals = plan["steps"] // steps_per_interval
        else:
            steps_per_interval = min(args.checkpoint_every, args.budget_steps)
            intervals = math.ceil(args.budget_steps / steps_per_interval)
        total_steps = steps_per_interval * intervals
        model = compiled_model(total_steps)
        print(
            f"{args.objective}: {model.count_params():,} parameters, vocabulary "
            f"{vocabulary_size:,}; {intervals} intervals of {steps_per_interval} steps "
            f"({total_steps} steps"
            + (f", {plan['seconds_per_step']:.3f} s/step)" if plan else ")"),
            flush=True,
        )

        with staged:
            run_dir = staged.path
            if staged.resumed:
                print(f"resuming the interrupted run in {run_dir}", flush=True)
            kept = run_dir / tokenizer_path.name
            if not kept.exists():
                shutil.copyfile(tokenizer_path, kept)
            if plan is not None:  # a resumed run trains to the end this plan set
                atomic_write_text(run_dir / PLAN_FILE, json.dumps(plan))
            started = time.perf_counter()
            with poolers_frozen(model):  # no objective here reads them: no gradient, no warning
                model.fit(
                    train,
                    epochs=intervals,
                    steps_per_epoch=steps_per_interval,
                    shuffle=False,  # the pipeline shuffles, anew every pass over the corpus
                    validation_data=valid,
                    validation_steps=args.validation_steps or None,
                    callbacks=[
                        ResumableBackup(run_dir / "backup"),
                        keras.callbacks.CSVLogger(str(run_dir / "history.csv"), append=True),
                        keras.callbacks.TensorBoard(str(run_dir / "tensorboard")),
                    ],
                    verbose=args.verbose,
                )
            train_seconds = time.perf_counter() - started
            metrics = {}
            if valid is not None:
                scores = model.evaluate(
                    valid, steps=args.validation_steps or None, return_dict=True, verbose=0
                )
                metrics = {key: round(float(value), 4) for key, value in scores.items()}
            encoder = pretrained_encoder(model)
            if encoder is not None:
                encoder = encoder_for_fine_tuning(encoder, args.fine_tuning_dropout)
            saved = ENCODER_FILE if encoder is not None else MODEL_FILE
            (encoder if encoder is not None else model).save(run_dir / saved)
            learning_curve_png(
                run_dir / "history.csv",
                run_dir / "learning_curve.png",
                title=f"kbert pretrain --objective {args.objective}",
                xlabel=f"checkpoint interval ({steps_per_interval} steps)",
            )
            record = {
                PRETRAIN_MARKER: True,
                "objective": args.objective,
                "model_file": saved,
                "tokenizer_file": kept.name,
                "tokenizer": args.tokenizer or "given",
                "vocabulary_size": vocabulary_size,
                "sentinel_ids": sentinel_ids,
                "parameters": model.count_params(),
                "dtype": settings.dtype,
                "steps": total_steps,
                "steps_per_interval": steps_per_interval,
                "train_documents": len(train_documents),
                "validation_documents": len(valid_documents or []),
                # this process's training time (a resumed run's part only)
                "train_seconds": round(train_seconds, 1),
                "resumed": staged.resumed,
                "validation": metrics,
                "settings": run_settings(args),
                "versions": software_versions(),
            }
            (run_dir / PRETRAIN_FILE).write_text(json.dumps(record, indent=2))
            staged.commit()
    return record


def main_pretrain(args):
    record = pretrain(args)
    finetunable = record["model_file"] == ENCODER_FILE and record["tokenizer_file"] == "vocab.txt"
    print(f"output directory: {os.path.abspath(args.output_dir)}")
    if finetunable:
        print(f"fine-tune it with: kbert finetune --model {args.output_dir} --task ...")
    summary = {key: record[key] for key in ("objective", "steps", "train_seconds", "model_file")}
    print(json.dumps({**summary, "validation": record["validation"]}))
