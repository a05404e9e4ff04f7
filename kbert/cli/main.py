"""`kbert`: fine-tune pretrained encoders from the command line, then evaluate and predict.

    kbert finetune --task trec --model minilm_l6 --output-dir runs/trec
    kbert evaluate runs/trec --split test
    kbert predict runs/trec "How far is it from Denver to Aspen?"
    kbert predict runs/rte "A man is playing." --pair "Somebody plays."
    kbert finetune --task conll2003 --method crf --output-dir runs/ner
    kbert predict runs/ner "Peter Blackburn flew to Brussels."
    kbert finetune --task squad --output-dir runs/qa
    kbert predict runs/qa "Who flew?" --context "Peter Blackburn flew to Brussels."
    kbert export runs/trec --name trec --models-config
    kbert pretrain --objective masked --corpus books.txt --budget-minutes 2 --output-dir enc

`kbert <command> --help` explains every flag. Options and texts come in any order; a command
given no input lines prints nothing; SIGTERM or Ctrl-C removes what a command left unfinished
and exits with 128 + the signal's number.
"""

import argparse
import json
import os
import signal
import sys

from kbert.cli.choices import TOKEN_TASKS
from kbert.cli.intermixed_parser import IntermixedArgumentParser
from kbert.cli.stop_signals import Stopped, signals_raise
from kbert.runs import read_config
from kbert.startup import quiet_tensorflow


def build_parser():
    """The argument parser of every subcommand."""
    from kbert.cli import classification, export, pretrain, token_tasks

    parser = argparse.ArgumentParser(
        prog="kbert",
        description=__doc__.split("\n\n")[0],
        epilog="Run `kbert <command> --help` for the flags of a command.",
    )
    commands = parser.add_subparsers(
        dest="command", required=True, metavar="command", parser_class=IntermixedArgumentParser
    )

    finetune = commands.add_parser(
        "finetune",
        help="fine-tune a classifier, tagger or QA model; write a run directory",
        description="Fine-tunes a pretrained encoder with a task head (AdamW, warmup then "
        "linear decay). Classification keeps the epoch with the best validation "
        "accuracy and writes config, metrics JSON, plots, TensorBoard logs and "
        "model.keras (its best validation epoch); conll2003 (NER: softmax, CRF or span-based) and squad "
        "(extractive QA) write config, metrics JSON, history, a learning curve and "
        "model.keras (the last epoch). Everything goes to --output-dir.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    classification.add_finetune_arguments(finetune)

    def run_finetune(args):
        if args.task in TOKEN_TASKS:
            if args.long_inputs != "head" or any(
                getattr(args, flag) is not None
                for flag in ("head_tokens", "window_stride", "max_windows")
            ):
                raise ValueError(
                    f"--long-inputs and its flags are for classification; "
                    f"{args.task} splits long inputs into windows itself"
                )
            return token_tasks.main_finetune(args)
        return classification.main_finetune(args)

    def check_finetune(args):
        family = token_tasks if args.task in TOKEN_TASKS else classification
        family.check_finetune_flags(args)

    finetune.set_defaults(handler=run_finetune, precheck=check_finetune)

    evaluate = commands.add_parser(
        "evaluate",
        help="score a run's best model on a split",
        description="Loads RUN_DIR's model and prints its scores on a split as JSON: the "
        "classification report (accuracy, macro-F1, per-class scores, confusion "
        "matrix; F1 for MRPC), CoNLL entity precision/recall/F1 per type, or SQuAD "
        "exact match and F1.",
    )
    evaluate.add_argument("run_dir", help="a directory written by `kbert finetune`")
    evaluate.add_argument(
        "--split",
        default="test",
        choices=("train", "validation", "test"),
        help="which split of the run's task to score (default test)",
    )
    evaluate.add_argument("--data-dir", help="dataset directory, if not the one used to train")
    classification.add_long_input_arguments(
        evaluate.add_argument_group(
            "long inputs (classification runs; default: the run's strategy)"
        )
    )

    def print_evaluation(args):
        token_run = token_tasks.is_token_run(args.run_dir)
        if token_run:
            _refuse_long_input_flags(args)
        family = token_tasks if token_run else classification
        print(json.dumps(family.evaluate(args), indent=2))

    evaluate.set_defaults(handler=print_evaluation, precheck=_check_run_dir)

    predict = commands.add_parser(
        "predict",
        help="classify, tag or answer texts with a run's model",
        description="Prints one JSON line per input as soon as its batch is done: the "
        "predicted label, its probability, every class's probability and whether "
        "the text was longer than the run's sequence length (classification reads "
        "its first tokens only: 'truncated', 'tokens', 'tokens_kept'); the entities "
        "of a conll2003 run; the answer of a squad run. Texts come as arguments or, "
        "with --input, one per line from a file or standard input (TSV "
        "'text<TAB>second text' for pair runs, 'question<TAB>context' for squad).",
    )
    predict.add_argument("run_dir", help="a directory written by `kbert finetune`")
    predict.add_argument("texts", nargs="*", help="texts to classify or tag, or questions")
    predict.add_argument(
        "--pair", action="append", help="for pair tasks (RTE, MRPC): the second text, once per text"
    )
    predict.add_argument(
        "--context",
        action="append",
        help="for squad runs: the paragraph to answer from, once (shared by "
        "all questions) or once per question",
    )
    predict.add_argument(
        "--input",
        metavar="FILE",
        help="read the inputs from FILE ('-' for standard input), one per line "
        "(UTF-8); blank lines are skipped",
    )
    predict.add_argument(
        "--batch-lines",
        type=int,
        default=256,
        help="lines predicted (and printed) together with --input (default 256)",
    )
    classification.add_long_input_arguments(
        predict.add_argument_group("long inputs (classification runs; default: the run's strategy)")
    )

    def print_predictions(args):
        token_run = token_tasks.is_token_run(args.run_dir)
        if not token_run and args.context:
            raise ValueError("--context is for squad runs; this run classifies texts")
        if token_run and args.pair:
            raise ValueError("--pair is for sentence-pair classification runs")
        if token_run:
            _refuse_long_input_flags(args)
        for position, text in enumerate(args.texts + (args.pair or []) + (args.context or [])):
            _check_utf8(text, f"argument {position + 1}")
        family = token_tasks if token_run else classification
        batches = None
        if args.input is not None:
            if args.texts or args.pair or args.context:
                raise ValueError("give the inputs either as arguments or with --input, not both")
            if args.batch_lines < 1:
                raise ValueError(f"--batch-lines must be an int >= 1; received {args.batch_lines}")
            two_columns = (
                token_run
                and read_config(args.run_dir).task == "squad"
                or (not token_run and classification.is_pair_run(args.run_dir))
            )
            batches = _input_batches(args.input, two_columns, args.batch_lines)
        for result in family.predict(args, batches):
            print(json.dumps(result), flush=True)

    predict.set_defaults(handler=print_predictions, precheck=_check_run_dir)

    pretrainer = commands.add_parser(
        "pretrain",
        help="pretrain an encoder from scratch on your text; write a model directory",
        description=pretrain.DESCRIPTION,
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    pretrain.add_pretrain_arguments(pretrainer)
    pretrainer.set_defaults(handler=pretrain.main_pretrain, precheck=pretrain.check_pretrain_flags)

    exporter = commands.add_parser(
        "export",
        help="write a run (or a pretrained encoder) as a TF Serving SavedModel",
        description="Writes saved_models/<name>/<version>/ (TF Serving's layout) with the "
        "tokenizer inside the graph: signatures classify (the default), tag or "
        "answer by the run's task, plus embed and token_ids. Never overwrites a "
        "version; writes to a temporary directory and renames it when complete.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    export.add_export_arguments(exporter)
    exporter.set_defaults(
        handler=lambda args: print(json.dumps(export.main_export(args))),
        precheck=export.check_export_flags,
    )
    return parser


def _check_run_dir(args):
    read_config(args.run_dir)  # names the directory and what it lacks


def _refuse_long_input_flags(args):
    for flag in ("long_inputs", "head_tokens", "window_stride", "max_windows"):
        if getattr(args, flag, None) is not None:
            raise ValueError(
                f"--{flag.replace('_', '-')} is for classification runs; "
                f"{args.run_dir} is a token-task run (it reads long inputs in "
                "overlapping windows itself)"
            )


def _check_utf8(text, where):
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ValueError(
            f"{where} is not valid UTF-8 (byte {text[error.start]!r} at character "
            f"{error.start}); expected UTF-8 text"
        ) from None


def _input_batches(path, two_columns, size):
    """Yields `(firsts, seconds)` lists of at most `size` lines from `path` ('-': stdin); none
    when it holds no input lines."""
    name = "standard input" if path == "-" else path
    if path == "-":
        lines = sys.stdin.buffer
    else:
        try:
            lines = open(path, "rb")  # noqa: SIM115 (closed below; read lazily)
        except OSError as error:
            raise ValueError(f"--input {path!r}: {error.strerror}") from None
    try:
        firsts, seconds = [], []
        for number, raw in enumerate(lines, start=1):
            try:
                line = raw.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError as error:
                raise ValueError(
                    f"{name}:{number}: not valid UTF-8 (byte offset {error.start} "
                    "of the line); expected UTF-8 text"
                ) from None
            if not line.strip():
                continue
            fields = line.split("\t")
            expected = 2 if two_columns else 1
            if len(fields) != expected:
                shape = "'text<TAB>second text'" if two_columns else "one text without tabs"
                raise ValueError(
                    f"{name}:{number}: expected {shape} per line; found "
                    f"{len(fields)} tab-separated field(s)"
                )
            firsts.append(fields[0])
            if two_columns:
                seconds.append(fields[1])
            if len(firsts) == size:
                yield firsts, seconds if two_columns else None
                firsts, seconds = [], []
        if firsts:  # the last lines (none at all: no batch, so no output)
            yield firsts, seconds if two_columns else None
    finally:
        if path != "-":
            lines.close()


def main(argv=None):
    """Entry point of the `kbert` script; returns the exit status.

    0 on success; 2 for bad arguments or input (named on stderr); 128 + the signal's number when
    SIGTERM or SIGINT stopped the command, after its partial output was removed; 141 (128 +
    SIGPIPE) when the program reading the output closed it first.
    """
    command = "kbert"
    with signals_raise():
        try:
            # --help and flag errors end here, without TensorFlow.
            args = build_parser().parse_args(argv)
            command = f"kbert {args.command}"
            args.precheck(args)  # bad values and paths too: TensorFlow comes only after this
            quiet_tensorflow()
            args.handler(args)
        except ValueError as error:
            print(f"{command}: error: {error}", file=sys.stderr)
            return 2
        except Stopped as stop:
            print(f"{command}: stopped by {stop.name}", file=sys.stderr)
            return stop.exit_status
        except BrokenPipeError:  # the reader (`| head -1`) is gone: stop quietly, as filters do
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # exit flushes it
            return 128 + signal.SIGPIPE
    return 0


if __name__ == "__main__":
    sys.exit(main())
