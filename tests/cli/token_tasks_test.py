"""`kbert finetune | evaluate | predict` for CoNLL-2003 NER and SQuAD on a tiny model and tiny
files (fast tier)."""

import contextlib
import io
import json
import shutil

import numpy as np
import pytest

from kbert.checkpoints import save_pretrained
from kbert.cli.main import main
from kbert.data.conll2003 import CONLL2003_TAGS
from kbert.models import Encoder
from kbert.text import WordPieceTokenizer

WORDS = [
    "peter",
    "blackburn",
    "flew",
    "to",
    "brussels",
    "paris",
    "zurich",
    "eu",
    "rejects",
    "german",
    "lamb",
    "the",
    "in",
    "who",
    "where",
    "did",
    "fly",
    ".",
    "?",
]
VOCABULARY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + WORDS
SENTENCES = [
    [
        ("peter", "B-PER"),
        ("blackburn", "I-PER"),
        ("flew", "O"),
        ("to", "O"),
        ("brussels", "B-LOC"),
        (".", "O"),
    ],
    [("eu", "B-ORG"), ("rejects", "O"), ("german", "B-MISC"), ("lamb", "O"), (".", "O")],
    [("the", "O"), ("peter", "B-PER"), ("flew", "O"), ("to", "O"), ("paris", "B-LOC")],
]
RUN_FILES = (
    "config.json",
    "labels.json",
    "preprocessor.json",
    "model.keras",
    "history.csv",
    "metrics.json",
    "learning_curve.png",
)
# Word spans the forced predictions mark, the same for every method: words 0-1 and word 4.
FORCED = {(0, 2): "PER", (4, 5): "LOC"}


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "tiny"
    encoder = Encoder.from_preset("tiny", vocabulary_size=len(VOCABULARY), max_sequence_length=128)
    return save_pretrained(encoder, WordPieceTokenizer(VOCABULARY), path)


def _write_conll(path, sentences):
    """A 4-column CoNLL-2003 file (`word POS chunk NER`), with a document marker."""
    lines = ["-DOCSTART- -X- -X- O", ""]
    for sentence in sentences:
        lines += [f"{word} NN I-NP {tag}" for word, tag in sentence] + [""]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines))


def _conll_dir(root, train=SENTENCES):
    for name, sentences in (("train", train), ("valid", SENTENCES), ("test", SENTENCES)):
        _write_conll(root / "conll2003" / f"{name}.txt", sentences)
    return root


def _qa(id_, context, question, answer, start=None):
    start = context.index(answer) if start is None else start
    return {"id": id_, "question": question, "answers": [{"text": answer, "answer_start": start}]}


def _squad_dir(root, bad_offset=False):
    """dev-v1.1.json with 2 articles: --train-articles 1 trains on the first, scores the second."""
    # Long enough (over 80 subwords) for two windows at --sequence-length 80.
    first = (
        "peter blackburn flew to brussels . the eu rejects german lamb . " * 6
        + "peter flew to paris . the german flew to zurich ."
    )
    second = "the eu flew to paris . peter blackburn flew to zurich ."
    articles = [
        {
            "title": "First",
            "paragraphs": [
                {
                    "context": first,
                    "qas": [
                        _qa("a1", first, "who flew to brussels ?", "peter blackburn"),
                        _qa(
                            "a2",
                            first,
                            "where did peter fly ?",
                            "paris",
                            start=len(first) + 5 if bad_offset else None,
                        ),
                    ],
                }
            ],
        },
        {
            "title": "Second",
            "paragraphs": [
                {
                    "context": second,
                    "qas": [
                        _qa("b1", second, "who flew to zurich ?", "peter blackburn"),
                        _qa("b2", second, "where did the eu fly ?", "paris"),
                    ],
                }
            ],
        },
    ]
    path = root / "squad_v1.1" / "dev-v1.1.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"version": "1.1", "data": articles}))
    return root


# QA rows at the sizes that fit the library's fixed 64-subword question budget:
# sequence_length >= 64 + 4 and stride < sequence_length - 64 - 3.
SQUAD_SIZES = ("--train-articles", "1", "--sequence-length", "80", "--stride", "4")


def _finetune(task, data_dir, model, output_dir, *extra):
    return main(
        [
            "finetune",
            "--task",
            task,
            "--data-dir",
            str(data_dir),
            "--model",
            str(model),
            "--output-dir",
            str(output_dir),
            "--epochs",
            "1",
            "--batch-size",
            "4",
            "--verbose",
            "0",
            "--learning-rate",
            "1e-3",
            *extra,
        ]
    )


def _json_lines(text):
    def refuse(constant):  # NaN and Infinity are not JSON
        raise ValueError(f"not JSON: {constant}")

    return [json.loads(line, parse_constant=refuse) for line in text.splitlines()]


@pytest.fixture(scope="module", params=("softmax", "crf", "span"))
def ner_run(request, tmp_path_factory, tiny_model):
    """A finished conll2003 run per method, and the last stdout line of `finetune`."""
    root = tmp_path_factory.mktemp(f"ner_{request.param}")
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        status = _finetune(
            "conll2003",
            _conll_dir(root / "data"),
            tiny_model,
            root / "run",
            "--method",
            request.param,
        )
    assert status == 0
    return root / "run", request.param, json.loads(stdout.getvalue().splitlines()[-1])


def test_ner_finetune_writes_a_complete_run(ner_run):
    run, method, summary = ner_run
    for name in RUN_FILES:
        assert (run / name).is_file(), name
    assert not list(run.glob(".*partial*"))
    config = json.loads((run / "config.json").read_text())
    assert config["method"] == method and config["task_family"] == "token"
    assert json.loads((run / "labels.json").read_text()) == list(CONLL2003_TAGS)
    metrics = json.loads((run / "metrics.json").read_text())
    for split in ("validation", "test"):
        entity = metrics[split]["entity"]
        assert 0 <= entity["f1"] <= 1 and entity["num_gold"] == 6, split
    assert summary["test_f1"] == metrics["test"]["entity"]["f1"]
    assert summary["validation_f1"] == metrics["validation"]["entity"]["f1"]


def test_ner_evaluate_matches_the_run_metrics(ner_run, capsys):
    run, _, _ = ner_run
    metrics = json.loads((run / "metrics.json").read_text())
    assert main(["evaluate", str(run), "--split", "test"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["entity"]["f1"] == pytest.approx(metrics["test"]["entity"]["f1"])
    assert report["entity"]["num_gold"] == metrics["test"]["entity"]["num_gold"]


def _force_entities(monkeypatch, method):
    """Makes every sentence's words 0-1 a PER and word 4 a LOC, whatever the model says."""
    if method == "span":
        import kbert.tasks.ner as recipes

        original = recipes.predict_span_probabilities
        types = ("NULL", "LOC", "MISC", "ORG", "PER")

        def forced(model, features, batch_size=64):
            probabilities = np.zeros_like(original(model, features, batch_size))
            probabilities[..., 0] = 1
            width = probabilities.shape[1]
            starts = features["span_word_starts"][:, :width]
            ends = features["span_word_ends"][:, :width]
            for (start, end), kind in FORCED.items():
                hit = (starts == start) & (ends == end)
                probabilities[hit] = np.eye(len(types))[types.index(kind)]
            return probabilities

        monkeypatch.setattr(recipes, "predict_span_probabilities", forced)
        return
    from kbert.models.token_classifier import TokenClassifier

    original = TokenClassifier.predict_word_tags

    def forced(self, features, **kwargs):
        rows = original(self, features, **kwargs)
        tags = [["O"] * len(row) for row in rows]
        for row in tags:
            for (start, end), kind in FORCED.items():
                if end <= len(row):
                    row[start:end] = [f"B-{kind}"] + [f"I-{kind}"] * (end - start - 1)
        return [[CONLL2003_TAGS.index(tag) for tag in row] for row in tags]

    monkeypatch.setattr(TokenClassifier, "predict_word_tags", forced)


def test_ner_predict_gives_character_spans_of_the_input(ner_run, capsys, monkeypatch):
    run, method, _ = ner_run
    texts = ["  Peter  Blackburn flew to Zürich", "EU rejects German lamb in Paris.", "   "]
    # What the tiny model finds by itself (maybe nothing), then forced entities.
    assert main(["predict", str(run), *texts]) == 0
    for line, text in zip(_json_lines(capsys.readouterr().out), texts, strict=True):
        assert line["text"] == text
        for entity in line["entities"]:
            assert entity["text"] == text[entity["start"] : entity["end"]]
            assert entity["type"] in ("LOC", "MISC", "ORG", "PER")

    _force_entities(monkeypatch, method)
    assert main(["predict", str(run), *texts]) == 0
    lines = _json_lines(capsys.readouterr().out)
    assert [line["entities"] for line in lines] == [
        [
            {"text": "Peter  Blackburn", "type": "PER", "start": 2, "end": 18},
            {"text": "Zürich", "type": "LOC", "start": 27, "end": 33},
        ],
        [
            {"text": "EU rejects", "type": "PER", "start": 0, "end": 10},
            {"text": "in", "type": "LOC", "start": 23, "end": 25},
        ],
        [],
    ]


def test_ner_run_refuses_context_and_keeps_an_existing_run(ner_run, tiny_model, tmp_path, capsys):
    run, method, _ = ner_run
    assert main(["predict", str(run), "peter flew", "--context", "peter flew to paris"]) == 2
    assert "--context is for squad runs" in capsys.readouterr().err

    before = (run / "model.keras").read_bytes(), (run / "model.keras").stat().st_mtime_ns
    data = _conll_dir(tmp_path / "data")
    assert _finetune("conll2003", data, tiny_model, run, "--method", method) == 2
    assert "exists and is not empty" in capsys.readouterr().err
    assert ((run / "model.keras").read_bytes(), (run / "model.keras").stat().st_mtime_ns) == before


def test_squad_finetune_evaluate_and_predict(tmp_path, tiny_model, capsys):
    data = _squad_dir(tmp_path / "data")
    run = tmp_path / "run"
    assert _finetune("squad", data, tiny_model, run, *SQUAD_SIZES) == 0
    summary = json.loads(capsys.readouterr().out.splitlines()[-1])
    for name in RUN_FILES:
        assert (run / name).is_file(), name
    assert json.loads((run / "labels.json").read_text()) == []
    metrics = json.loads((run / "metrics.json").read_text())
    assert "first 1 articles train / 1 eval" in metrics["source"]
    test = metrics["test"]
    assert 0 <= test["exact_match"] <= 100 and 0 <= test["f1"] <= 100
    assert summary["f1"] == test["f1"]
    config = json.loads((run / "config.json").read_text())
    assert (config["sequence_length"], config["stride"], config["max_answer_length"]) == (80, 4, 30)

    assert main(["evaluate", str(run), "--split", "test"]) == 0
    assert json.loads(capsys.readouterr().out)["f1"] == pytest.approx(test["f1"])

    context = "  Peter Blackburn flew to Zürich. The EU flew to Paris."
    questions = ["who flew to zurich ?", "where did the eu fly ?"]
    assert main(["predict", str(run), *questions, "--context", context]) == 0
    lines = _json_lines(capsys.readouterr().out)
    assert [line["question"] for line in lines] == questions
    for line in lines:
        assert set(line) >= {"answer", "start", "end", "score", "probability"}
        if line["answer"]:
            assert line["answer"] == context[line["start"] : line["end"]]
            assert 0 < line["probability"] <= 1
        else:
            assert line["start"] == line["end"] == -1

    # One context per question works; two contexts for one question do not.
    assert (
        main(
            [
                "predict",
                str(run),
                *questions,
                "--context",
                context,
                "--context",
                "peter flew to paris .",
            ]
        )
        == 0
    )
    assert len(capsys.readouterr().out.splitlines()) == 2
    assert (
        main(
            [
                "predict",
                str(run),
                questions[0],
                "--context",
                context,
                "--context",
                "peter flew to paris .",
            ]
        )
        == 2
    )
    captured = capsys.readouterr()
    assert captured.out == "" and "1 questions and 2 contexts" in captured.err

    assert main(["predict", str(run), questions[0], "--context", " "]) == 2
    assert "empty context" in capsys.readouterr().err


def test_squad_trains_on_short_windows(tmp_path, tiny_model):
    assert (
        _finetune(
            "squad",
            _squad_dir(tmp_path / "data"),
            tiny_model,
            tmp_path / "run",
            "--train-articles",
            "1",
            "--sequence-length",
            "32",
            "--stride",
            "8",
        )
        == 0
    )


def test_bad_conll_tag_is_refused_before_anything_is_written(tmp_path, tiny_model, capsys):
    bad = SENTENCES[:2] + [[("peter", "B-PERSON"), ("flew", "O")]]
    data = _conll_dir(tmp_path / "data", train=bad)
    output = tmp_path / "run"
    assert _finetune("conll2003", data, tiny_model, output) == 2
    error = capsys.readouterr().err
    assert "'B-PERSON'" in error and "'peter'" in error
    assert not output.exists() or not any(output.iterdir())


def test_squad_answer_outside_its_context_is_refused(tmp_path, tiny_model, capsys):
    data = _squad_dir(tmp_path / "data", bad_offset=True)
    output = tmp_path / "run"
    assert _finetune("squad", data, tiny_model, output, *SQUAD_SIZES) == 2
    error = capsys.readouterr().err
    assert "'a2'" in error and "outside the context" in error
    assert not output.exists() or not any(output.iterdir())


@pytest.mark.parametrize(
    "task, sizes, message",
    [
        ("conll2003", ("--sequence-length", "16", "--stride", "14"), "stride must be an int in"),
        ("conll2003", ("--method", "span", "--max-span-length", "0"), "max_span_length must be"),
        (
            "squad",
            ("--train-articles", "1", "--sequence-length", "80", "--stride", "40"),
            "stride (the overlap between windows)",
        ),
        ("squad", SQUAD_SIZES + ("--max-answer-length", "0"), "--max-answer-length must be"),
    ],
)
def test_sizes_the_featurizers_refuse_fail_before_anything_is_written(
    tmp_path, tiny_model, capsys, task, sizes, message
):
    data = _squad_dir(_conll_dir(tmp_path / "data"))
    output = tmp_path / "run"
    assert _finetune(task, data, tiny_model, output, *sizes) == 2
    assert message in capsys.readouterr().err
    assert not output.exists()


def test_finetune_help_names_the_token_tasks_and_their_flags(capsys):
    with pytest.raises(SystemExit):
        main(["finetune", "--help"])
    text = capsys.readouterr().out
    for word in (
        "conll2003",
        "squad",
        "--method",
        "--stride",
        "--max-answer-length",
        "--max-span-length",
        "--train-articles",
    ):
        assert word in text, word


def test_a_format_1_run_is_still_read(ner_run, tmp_path, capsys):
    # Runs written before kbert.runs' format: tokenizer.json, the flags and tag_names flat.
    run, method, _ = ner_run
    old = tmp_path / "old"
    shutil.copytree(run, old)
    (old / "preprocessor.json").rename(old / "tokenizer.json")
    config = json.loads((old / "config.json").read_text())
    config["tag_names"] = config.pop("label_names")
    config["source"] = config.pop("sources")["all"]
    for name in ("run_format", "is_pair", "task_metric", "validation_examples", "test_examples"):
        config.pop(name)
    (old / "config.json").write_text(json.dumps(config))
    metrics = json.loads((run / "metrics.json").read_text())
    assert main(["evaluate", str(old), "--split", "test"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["entity"]["f1"] == pytest.approx(metrics["test"]["entity"]["f1"])
    assert main(["predict", str(old), "Peter flew to Paris"]) == 0
    assert len(_json_lines(capsys.readouterr().out)) == 1
