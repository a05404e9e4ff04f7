"""`kbert finetune | evaluate | predict` for token and span tasks: CoNLL-2003 NER, SQuAD QA.

The run directory is `kbert.runs`' format, shared with classification: `config.json`,
`labels.json` (the tag set, tag id = position; [] for QA), `preprocessor.json` (the WordPiece
tokenizer, vocabulary included), `model.keras` (the model at its last epoch), `history.csv`,
`learning_curve.png` and `metrics.json` (entity scores per type for NER, EM/F1 for QA, on the
held-out splits).
"""

import json
import os

from kbert.cli.choices import NER_METHODS
from kbert.cli.run_settings import (
    check_sequence_length,
    check_training_arguments,
    flag_settings,
    training_settings,
)
from kbert.files import atomic_path
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

_DEFAULTS = {
    "conll2003": {"learning_rate": 3e-4, "sequence_length": 128},
    "squad": {"learning_rate": 2e-4, "sequence_length": 384},
}


def add_token_task_arguments(parser):
    """The flags of `kbert finetune` that only token and span tasks read."""
    group = parser.add_argument_group("token and span tasks (conll2003, squad)")
    group.add_argument(
        "--method",
        default="softmax",
        choices=NER_METHODS,
        help="conll2003: softmax over BIO tags, BIO + CRF, or span-based (default softmax)",
    )
    group.add_argument(
        "--max-span-length",
        type=int,
        default=8,
        help="span method: longest candidate entity in words (default 8)",
    )
    group.add_argument(
        "--stride",
        type=int,
        default=None,
        help="tokens shared by consecutive windows of a long input (default 32 "
        "for conll2003, 128 for squad)",
    )
    group.add_argument(
        "--max-answer-length",
        type=int,
        default=30,
        help="squad: most tokens in an answer (default 30)",
    )
    group.add_argument(
        "--train-articles",
        type=int,
        default=40,
        help="squad without train-v1.1.json: dev articles used for training, the "
        "rest are evaluated (default 40 of 48)",
    )


def _resolve(args):
    for key, value in _DEFAULTS[args.task].items():
        if getattr(args, key, None) is None:
            setattr(args, key, value)
    if args.stride is None:
        args.stride = 128 if args.task == "squad" else None


def _load_data(args, max_train=None):
    """`{split: data}` and the source name; NER data are lists of `TaggedSentence`."""
    if args.task == "conll2003":
        from kbert.data.conll2003 import read_conll2003

        data = {
            split: read_conll2003(split, args.data_dir, max_train if split == "train" else None)
            for split in ("train", "validation", "test")
        }
        return data, "conll2003 (train / valid = testa / test = testb)"
    from kbert.data.squad import load_squad

    train, source = load_squad("train", args.data_dir, args.train_articles)
    evaluation, _ = load_squad("validation", args.data_dir, args.train_articles)
    return {"train": train[:max_train], "test": evaluation}, source


def _save_atomically(model, path):
    with atomic_path(path) as temporary:
        model.save(temporary)


def _score(model, tokenizer, data, config):
    from kbert.tasks import evaluate_ner, evaluate_question_answerer

    if config.task == "squad":
        scores = evaluate_question_answerer(
            model,
            tokenizer,
            data,
            config.setting("sequence_length"),
            config.setting("stride"),
            max_answer_length=config.setting("max_answer_length"),
        )
        scores.pop("answers")
        return scores
    scores = evaluate_ner(
        model,
        tokenizer,
        [s.words for s in data],
        [s.tags for s in data],
        list(config.label_names),
        sequence_length=config.setting("sequence_length"),
        max_span_length=config.setting("max_span_length"),
        stride=config.setting("stride"),
    )
    return {
        "entity": scores["entity"],
        "token_accuracy": scores.get("token_accuracy"),
        "repaired_tags": scores.get("repaired_tags"),
        "seconds": scores["seconds"],
    }


def _check_sizes(args, examples, tokenizer, tag_names):
    """Featurizes a training example with the run's sizes, so that a sequence length, stride or
    span length the featurizers refuse fails before any file is written."""
    from kbert.data.question_answering_features import question_answering_features
    from kbert.train.token_task_fine_tuning import ner_features, question_budget

    if args.task == "squad":
        if args.max_answer_length < 1:
            raise ValueError(
                f"--max-answer-length must be at least 1; received {args.max_answer_length}"
            )
        if examples:
            question_answering_features(
                examples,
                tokenizer,
                args.sequence_length,
                args.stride,
                question_budget(args.sequence_length),
            )
    elif examples:
        ner_features(
            args.method,
            [s.words for s in examples],
            tokenizer,
            tag_names,
            None,
            args.sequence_length,
            args.max_span_length,
            stride=args.stride,
        )


def check_finetune_flags(args):
    """Fills the task's default flags and refuses bad ones and a bad --output-dir, before
    TensorFlow is imported (`kbert finetune` answers a typo at once)."""
    _resolve(args)
    check_training_arguments(args)
    check_output_dir(args.output_dir, args.overwrite)


def finetune(args):
    """Fine-tunes an NER or QA model and writes a run directory; returns the metrics dict."""
    check_finetune_flags(args)

    import keras

    from kbert.checkpoints import load_pretrained
    from kbert.data.conll2003 import CONLL2003_TAGS
    from kbert.metrics import learning_curve_png
    from kbert.models import QuestionAnswerer
    from kbert.train.token_task_fine_tuning import (
        build_ner_model,
        fine_tune_ner,
        fine_tune_question_answerer,
    )

    data, source = _load_data(args, args.max_train_examples)  # errors before any file
    keras.utils.set_random_seed(args.seed)
    encoder, tokenizer = load_pretrained(args.model, dtype=args.dtype)
    check_sequence_length(args.sequence_length, encoder, args.model)
    tag_names = list(CONLL2003_TAGS) if args.task == "conll2003" else []
    _check_sizes(args, data["train"][:1], tokenizer, tag_names)
    config = RunConfig(
        task_family="token",
        task=args.task,
        settings=flag_settings(args),
        label_names=tag_names,
        train_examples=len(data["train"]),
        sources={"all": source},
        versions=software_versions(),
    )
    # Everything is written into a hidden sibling and moved to --output-dir only at the end.
    with StagedRunDirectory(args.output_dir) as staged:
        run_dir = staged.path
        write_run_start(run_dir, config, tokenizer)
        callbacks = [keras.callbacks.CSVLogger(str(run_dir / "history.csv"))]
        settings = training_settings(args, callbacks)
        if args.task == "squad":
            model = QuestionAnswerer(encoder, dropout=args.dropout)
            _, seconds, windows = fine_tune_question_answerer(
                model,
                tokenizer,
                data["train"],
                sequence_length=args.sequence_length,
                stride=args.stride,
                settings=settings,
            )
            examples_per_s = windows * args.epochs / seconds
        else:
            model = build_ner_model(args.method, encoder, tag_names, dropout=args.dropout)
            train = data["train"]
            _, seconds = fine_tune_ner(
                model,
                tokenizer,
                [s.words for s in train],
                [s.tags for s in train],
                tag_names,
                sequence_length=args.sequence_length,
                max_span_length=args.max_span_length,
                stride=args.stride,
                settings=settings,
            )
            examples_per_s = len(train) * args.epochs / seconds
        _save_atomically(model, run_dir / MODEL_FILE)
        metrics = {
            "task": args.task,
            "source": source,
            "train_seconds": round(seconds, 1),
            "train_examples_per_s": round(examples_per_s, 1),
        }
        for split in data:
            if split != "train":
                metrics[split] = _score(model, tokenizer, data[split], config)
        (run_dir / "metrics.json").write_text(json.dumps(metrics, indent=2))
        learning_curve_png(
            run_dir / "history.csv",
            run_dir / "learning_curve.png",
            title=f"{args.task}: {args.model}",
        )
        staged.commit()
    return metrics


def is_token_run(run_dir):
    """Whether `run_dir` was written for a token or span task."""
    return read_config(run_dir).task_family == "token"


def evaluate(args):
    """Re-scores a token-task run on a split; returns the scores."""
    run = read_run(args.run_dir)
    config = run.config
    data, _ = _load_data(config.data_settings(data_dir=args.data_dir or config.setting("data_dir")))
    if args.split not in data:
        raise ValueError(f"task {config.task} has splits {sorted(data)}; received {args.split!r}")
    return _score(run.model, run.preprocessor, data[args.split], config)


def predict(args, batches=None):
    """Entities (NER) or answers (QA) for raw texts; yields one dict per text.

    Args:
        args: the parsed `kbert predict` flags (`run_dir`, `texts`, `context`).
        batches: iterable of `(texts, contexts)` lists, default None (`args.texts` and
            `args.context` as one batch). The run is loaded once for all of them.
    """
    from kbert.data.squad import SquadExample
    from kbert.tasks import predict_answers, predict_entities

    run = read_run(args.run_dir)
    model, tokenizer, config = run.model, run.preprocessor, run.config
    if batches is None:
        batches = [(list(args.texts), list(args.context) if args.context else None)]
    for texts, contexts in batches:
        if not texts:
            raise ValueError("predict needs at least one text")
        if config.task == "conll2003":
            if contexts:
                raise ValueError("--context is for squad runs; a conll2003 run tags texts alone")
            entities = predict_entities(
                model,
                tokenizer,
                texts,
                list(config.label_names),
                sequence_length=config.setting("sequence_length"),
                max_span_length=config.setting("max_span_length"),
                stride=config.setting("stride"),
            )
            yield from (
                {"text": text, "entities": found}
                for text, found in zip(texts, entities, strict=True)
            )
            continue
        contexts = list(contexts or [])
        if len(contexts) == 1:
            contexts = contexts * len(texts)
        if len(contexts) != len(texts):
            raise ValueError(
                f"a squad run answers questions from a context: give --context "
                f"once (shared) or once per question; received {len(texts)} "
                f"questions and {len(contexts)} contexts"
            )
        examples = [
            SquadExample(id=str(i), title="", context=context, question=question, answers=())
            for i, (question, context) in enumerate(zip(texts, contexts, strict=True))
        ]
        answers = predict_answers(
            model,
            tokenizer,
            examples,
            config.setting("sequence_length"),
            config.setting("stride"),
            max_answer_length=config.setting("max_answer_length"),
        )
        for example in examples:
            answer = answers[example.id]
            yield {
                "question": example.question,
                "answer": answer["text"],
                "start": answer["start"],
                "end": answer["end"],
                "score": round(float(answer["score"]), 4),
                "probability": round(float(answer["probability"]), 4),
            }


def main_finetune(args):
    metrics = finetune(args)
    if args.task == "squad":
        test = metrics["test"]
        print(
            f"{metrics['source']}: exact match {test['exact_match']:.2f}, F1 "
            f"{test['f1']:.2f}; {metrics['train_examples_per_s']} training windows/s"
        )
        summary = {"exact_match": test["exact_match"], "f1": test["f1"]}
    else:
        test = metrics["test"]["entity"]
        print(
            f"CoNLL-2003 test entity F1 {100 * test['f1']:.2f} (precision "
            f"{100 * test['precision']:.2f}, recall {100 * test['recall']:.2f}); "
            f"{metrics['train_examples_per_s']} training sentences/s"
        )
        summary = {"test_f1": test["f1"], "validation_f1": metrics["validation"]["entity"]["f1"]}
    print(f"run directory: {os.path.abspath(args.output_dir)}")
    print(
        json.dumps(
            {"task": args.task, "train_examples_per_s": metrics["train_examples_per_s"]} | summary
        )
    )
