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

`kbert <command> --help` explains every flag.
"""

import argparse
import json
import os
import sys


def build_parser():
    """The argument parser of every subcommand."""
    from kbert.cli import classification, export, token_tasks

    parser = argparse.ArgumentParser(
        prog="kbert", description=__doc__.split("\n\n")[0],
        epilog="Run `kbert <command> --help` for the flags of a command.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="command")

    finetune = commands.add_parser(
        "finetune", help="fine-tune a classifier, tagger or QA model; write a run directory",
        description="Fine-tunes a pretrained encoder with a task head (AdamW, warmup then "
                    "linear decay). Classification keeps the epoch with the best validation "
                    "accuracy and writes config, metrics JSON, plots, TensorBoard logs and "
                    "best.keras; conll2003 (NER: softmax, CRF or span-based) and squad "
                    "(extractive QA) write config, metrics JSON, history, a learning curve and "
                    "model.keras (the last epoch). Everything goes to --output-dir.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    classification.add_finetune_arguments(finetune)

    def run_finetune(args):
        if args.task in token_tasks.TOKEN_TASKS:
            return token_tasks.main_finetune(args)
        return classification.main_finetune(args)

    finetune.set_defaults(handler=run_finetune)

    evaluate = commands.add_parser(
        "evaluate", help="score a run's best model on a split",
        description="Loads RUN_DIR's model and prints its scores on a split as JSON: the "
                    "classification report (accuracy, macro-F1, per-class scores, confusion "
                    "matrix; F1 for MRPC), CoNLL entity precision/recall/F1 per type, or SQuAD "
                    "exact match and F1.")
    evaluate.add_argument("run_dir", help="a directory written by `kbert finetune`")
    evaluate.add_argument("--split", default="test", choices=("train", "validation", "test"),
                          help="which split of the run's task to score (default test)")
    evaluate.add_argument("--data-dir", help="dataset directory, if not the one used to train")

    def print_evaluation(args):
        family = token_tasks if token_tasks.is_token_run(args.run_dir) else classification
        print(json.dumps(family.evaluate(args), indent=2))

    evaluate.set_defaults(handler=print_evaluation)

    predict = commands.add_parser(
        "predict", help="classify texts with a run's best model",
        description="Prints one JSON line per text: the predicted label, its probability and "
                    "every class's probability.")
    predict.add_argument("run_dir", help="a directory written by `kbert finetune`")
    predict.add_argument("texts", nargs="*", help="texts to classify or tag, or questions")
    predict.add_argument("--pair", action="append",
                         help="for pair tasks (RTE, MRPC): the second text, once per text")
    predict.add_argument("--context", action="append",
                         help="for squad runs: the paragraph to answer from, once (shared by "
                              "all questions) or once per question")

    def print_predictions(args):
        token_run = token_tasks.is_token_run(args.run_dir)
        if not token_run and args.context:
            raise ValueError("--context is for squad runs; this run classifies texts")
        if token_run and args.pair:
            raise ValueError("--pair is for sentence-pair classification runs")
        family = token_tasks if token_run else classification
        for result in family.predict(args):
            print(json.dumps(result))

    predict.set_defaults(handler=print_predictions)

    exporter = commands.add_parser(
        "export", help="write a run (or a pretrained encoder) as a TF Serving SavedModel",
        description="Writes saved_models/<name>/<version>/ (TF Serving's layout) with the "
                    "tokenizer inside the graph: signatures classify (the default), tag or "
                    "answer by the run's task, plus embed and token_ids. Never overwrites a "
                    "version; writes to a temporary directory and renames it when complete.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    export.add_export_arguments(exporter)
    exporter.set_defaults(handler=lambda args: print(json.dumps(export.main_export(args))))
    return parser


def main(argv=None):
    """Entry point of the `kbert` script; returns the exit status."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    args = build_parser().parse_args(argv)
    try:
        args.handler(args)
    except ValueError as error:
        print(f"kbert {args.command}: error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
