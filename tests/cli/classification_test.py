"""`kbert finetune | evaluate | predict` on a tiny model and tiny TSV files (fast tier)."""

import json
import shutil

import pytest

from kbert.cli.main import main
from tests.cli.toy_sentiment import finetune_arguments, sentiment_rows, write_tsv


def _finetune(tmp_path, model, train, test, *extra):
    """`kbert finetune` into `tmp_path / "run"`: two epochs at 1e-3 unless `extra` says."""
    arguments = ["--epochs", "2", "--learning-rate", "1e-3", "--verbose", "0", *extra]
    return main(finetune_arguments(tmp_path / "run", model, train, test, *arguments))


def test_finetune_writes_a_complete_run_that_evaluate_and_predict_read(
    tmp_path, tiny_model, capsys
):
    train = write_tsv(tmp_path / "train.tsv", sentiment_rows(24))
    test = write_tsv(tmp_path / "test.tsv", sentiment_rows(6))
    assert _finetune(tmp_path, tiny_model, train, test) == 0
    run = tmp_path / "run"
    for name in (
        "config.json",
        "labels.json",
        "preprocessor.json",
        "model.keras",
        "history.csv",
        "metrics.json",
        "learning_curve.png",
        "confusion_matrix.png",
    ):
        assert (run / name).is_file(), name
    assert any((run / "tensorboard").rglob("*tfevents*"))
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["test"]["num_examples"] == 6 and metrics["best_epoch"] in (1, 2)
    assert json.loads((run / "labels.json").read_text()) == ["neg", "pos"]
    capsys.readouterr()

    assert main(["evaluate", str(run), "--split", "test"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["accuracy"] == pytest.approx(metrics["test"]["accuracy"])

    assert main(["predict", str(run), "the movie was good", "bad plot"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["text"] for line in lines] == ["the movie was good", "bad plot"]
    assert all(line["label"] in ("neg", "pos") for line in lines)
    assert all(abs(sum(line["probabilities"].values()) - 1) < 1e-3 for line in lines)

    # Nothing the user had is replaced without --overwrite.
    assert _finetune(tmp_path, tiny_model, train, test) == 2
    assert "exists and is not empty" in capsys.readouterr().err
    assert (run / "model.keras").is_file()


def test_pair_tasks_need_pairs_and_single_tasks_refuse_them(trained_pair_run, capsys):
    run = str(trained_pair_run)
    capsys.readouterr()
    assert main(["predict", run, "the movie was good"]) == 2
    assert "classifies text pairs" in capsys.readouterr().err
    assert main(["predict", run, "the movie was good", "--pair", "fine"]) == 0
    assert json.loads(capsys.readouterr().out)["pair"] == "fine"
    assert main(["predict", run, "a", "b", "--pair", "fine"]) == 2
    assert "text_pairs has 1 texts but texts has 2" in capsys.readouterr().err


def test_bad_input_is_refused_before_anything_is_written(tmp_path, tiny_model, capsys):
    train = write_tsv(tmp_path / "train.tsv", sentiment_rows(8))
    unseen = write_tsv(tmp_path / "unseen.tsv", sentiment_rows(2) + [["the plot was fine", "meh"]])
    assert _finetune(tmp_path, tiny_model, train, unseen) == 2
    error = capsys.readouterr().err
    assert "'meh'" in error and "unseen.tsv" in error
    assert not (tmp_path / "run").exists()
    empty = write_tsv(tmp_path / "empty.tsv", sentiment_rows(2) + [["", "pos"]])
    assert _finetune(tmp_path, tiny_model, train, empty) == 2
    assert "empty.tsv:3" in capsys.readouterr().err
    assert main(["predict", str(tmp_path / "nowhere"), "text"]) == 2
    assert "is not a finished kbert run directory" in capsys.readouterr().err


def test_predict_on_an_empty_list_is_an_error(trained_run, capsys):
    capsys.readouterr()
    assert main(["predict", str(trained_run)]) == 2
    assert "predict needs at least one text" in capsys.readouterr().err


def test_help_explains_every_flag(capsys):
    with pytest.raises(SystemExit):
        main(["finetune", "--help"])
    text = capsys.readouterr().out
    for flag in (
        "--task",
        "--model",
        "--pooling",
        "--epochs",
        "--learning-rate",
        "--dtype",
        "--output-dir",
        "--overwrite",
        "--seed",
        "--max-train-examples",
    ):
        assert flag in text


def _snapshot(folder):
    return {
        path.relative_to(folder): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def test_a_failed_overwrite_keeps_the_previous_run(tmp_path, tiny_model, trained_run, capsys):
    train = write_tsv(tmp_path / "train.tsv", sentiment_rows(8))
    shutil.copytree(trained_run, tmp_path / "run")
    before = _snapshot(tmp_path / "run")
    capsys.readouterr()
    failures = {
        "--model": (
            "is neither 'minilm_l6' nor an existing directory",
            "--model",
            str(tmp_path / "typo"),
        ),
        "--epochs": ("--epochs must be an int >= 1; received 0", "--epochs", "0"),
        "--sequence-length": (
            "--sequence-length 100000 is longer than model",
            "--sequence-length",
            "100000",
        ),
        "--learning-rate": ("--learning-rate must be a positive number", "--learning-rate", "0"),
        "--gradient-accumulation-steps": (
            "--gradient-accumulation-steps must be an int >= 1; received 0",
            "--gradient-accumulation-steps",
            "0",
        ),
        "data": ("missing.tsv", "--test-file", str(tmp_path / "missing.tsv")),
    }
    for name, (message, *flags) in failures.items():
        assert _finetune(tmp_path, tiny_model, train, train, "--overwrite", *flags) == 2, name
        error = capsys.readouterr().err
        assert message in error and "Traceback" not in error, (name, error)
        assert _snapshot(tmp_path / "run") == before, name
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run", "train.tsv"]


def test_gradient_accumulation_from_the_command_line(tmp_path, tiny_model):
    train = write_tsv(tmp_path / "train.tsv", sentiment_rows(16))
    assert _finetune(tmp_path, tiny_model, train, train, "--gradient-accumulation-steps", "2") == 0
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["gradient_accumulation_steps"] == 2 and config["batch_size"] == 4


def test_overwrite_never_deletes_files_kbert_did_not_write(tmp_path, tiny_model, capsys):
    train = write_tsv(tmp_path / "train.tsv", sentiment_rows(8))
    mine = tmp_path / "run"
    mine.mkdir()
    (mine / "thesis.tex").write_text("months of work")
    assert _finetune(tmp_path, tiny_model, train, train, "--overwrite") == 2
    assert "holds files kbert did not write (thesis.tex)" in capsys.readouterr().err
    assert (mine / "thesis.tex").read_text() == "months of work"
    (tmp_path / "file").write_text("a file")
    assert main(finetune_arguments(tmp_path / "file", tiny_model, train, train)) == 2
    assert "is a file" in capsys.readouterr().err


def test_max_train_examples_cuts_only_the_training_split(tmp_path, tiny_model):
    train = write_tsv(tmp_path / "train.tsv", sentiment_rows(24))
    test = write_tsv(tmp_path / "test.tsv", sentiment_rows(8))
    assert (
        _finetune(tmp_path, tiny_model, train, test, "--epochs", "1", "--max-train-examples", "4")
        == 0
    )
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert config["train_examples"] == 4
    assert metrics["test"]["num_examples"] == 8


@pytest.mark.slow
def test_kill_9_during_an_overwrite_leaves_the_previous_run_intact(tmp_path, tiny_model):
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    train = write_tsv(tmp_path / "train.tsv", sentiment_rows(400))
    assert _finetune(tmp_path, tiny_model, train, train, "--epochs", "1") == 0
    run = tmp_path / "run"
    before = _snapshot(run)
    command = [
        sys.executable,
        "-m",
        "kbert.cli.main",
        "finetune",
        "--task",
        "files",
        "--train-file",
        train,
        "--test-file",
        train,
        "--model",
        str(tiny_model),
        "--output-dir",
        str(run),
        "--overwrite",
        "--epochs",
        "200",  # never finished by the last kill, however fast the machine; see below
        "--batch-size",
        "4",
        "--sequence-length",
        "16",
        "--verbose",
        "2",
    ]
    env = {**os.environ, "PYTHONPATH": str(root), "TF_CPP_MIN_LOG_LEVEL": "3"}
    # Killed while importing, loading the model, training and evaluating: each time the
    # previous run is byte for byte what it was.
    for delay in (1.0, 4.0, 7.0, 10.0, 14.0):
        process = subprocess.Popen(
            command, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        time.sleep(delay)
        assert process.poll() is None, f"the run ended before the kill at {delay} s"
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
        assert _snapshot(run) == before, f"killed at {delay} s"
    # Left alone, the same command (6 epochs) replaces the run. The killed runs had 200, so that
    # no kill came after a run had finished and replaced the previous one by design (a fast
    # machine finished 6 epochs within 14 s).
    command[command.index("200")] = "6"
    finished = subprocess.run(
        command, cwd=root, env=env, capture_output=True, text=True, timeout=600
    )
    assert finished.returncode == 0, finished.stderr[-2000:]
    assert _snapshot(run) != before
    assert json.loads((run / "config.json").read_text())["epochs"] == 6
    assert not list(tmp_path.glob(".run.old-*"))
    # The killed runs' partial directories were removed by this one, each named.
    assert not list(tmp_path.glob(".run.partial-*"))
    assert "kbert: removed unfinished" in finished.stderr


def test_predict_reads_a_file_or_stdin_and_reports_truncation(
    tmp_path, trained_run, capsys, monkeypatch
):
    import io
    import sys

    run = str(trained_run)
    capsys.readouterr()
    long_text = " ".join(["the movie was good"] * 10)  # 40 words; the run reads 16 tokens
    inputs = tmp_path / "inputs.txt"
    inputs.write_text(f"the movie was good\n\n{long_text}\nbad plot\n", encoding="utf-8")
    assert main(["predict", run, "--input", str(inputs), "--batch-lines", "2"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["text"] for line in lines] == ["the movie was good", long_text, "bad plot"]
    assert [line["truncated"] for line in lines] == [False, True, False]
    assert lines[0]["tokens"] == 6 and lines[0]["tokens_kept"] == 6  # [CLS] 4 words [SEP]
    assert lines[1]["tokens"] == 42 and lines[1]["tokens_kept"] == 16
    # The same texts as arguments give the same answers.
    assert main(["predict", run, "the movie was good", long_text, "bad plot"]) == 0
    assert [json.loads(line) for line in capsys.readouterr().out.splitlines()] == lines

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"bad plot\n")))
    assert main(["predict", run, "--input", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["text"] == "bad plot"

    bad = {
        "latin1.txt": (b"fine\ncaf\xe9\n", "latin1.txt:2: not valid UTF-8"),
        "tabs.txt": (b"a\tb\n", "tabs.txt:1: expected one text without tabs per line"),
    }
    for name, (content, message) in bad.items():
        (tmp_path / name).write_bytes(content)
        assert main(["predict", run, "--input", str(tmp_path / name)]) == 2, name
        assert message in capsys.readouterr().err, name
    # A filter given no lines prints nothing and succeeds.
    (tmp_path / "blank.txt").write_bytes(b"\n \n")
    assert main(["predict", run, "--input", str(tmp_path / "blank.txt")]) == 0
    assert capsys.readouterr().out == ""
    assert main(["predict", run, "text", "--input", str(inputs)]) == 2
    assert "either as arguments or with --input" in capsys.readouterr().err
    assert main(["predict", run, "--input", str(tmp_path / "missing.txt")]) == 2
    assert "No such file" in capsys.readouterr().err
    assert main(["predict", run, "caf\udce9"]) == 2  # undecodable bytes in argv
    assert "argument 1 is not valid UTF-8" in capsys.readouterr().err


def test_predict_reads_pairs_as_tab_separated_lines(tmp_path, trained_pair_run, capsys):
    capsys.readouterr()
    inputs = tmp_path / "pairs.tsv"
    inputs.write_text("the movie was good\tthe plot was fine\nbad\tgood\n", encoding="utf-8")
    assert main(["predict", str(trained_pair_run), "--input", str(inputs)]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(line["text"], line["pair"]) for line in lines] == [
        ("the movie was good", "the plot was fine"),
        ("bad", "good"),
    ]
    assert lines[0]["tokens"] == 2 + 4 + 1 + 4
    inputs.write_text("only one column\n", encoding="utf-8")
    assert main(["predict", str(trained_pair_run), "--input", str(inputs)]) == 2
    assert "expected 'text<TAB>second text' per line" in capsys.readouterr().err


def _long_rows(count):
    """Reviews of 20-30 words whose verdict comes at the end, past a 16-token window."""
    rows = []
    for i in range(count):
        positive = i % 2 == 0
        filler = " ".join(["the plot was fine"] * (5 + i % 3))
        rows.append(
            [
                f"{filler} the movie was {'good' if positive else 'bad'}",
                "pos" if positive else "neg",
            ]
        )
    return rows


def test_long_input_strategies_at_finetune_predict_evaluate_and_export(
    tmp_path, tiny_model, capsys
):
    from kbert.export import load_exported

    train = write_tsv(tmp_path / "train.tsv", _long_rows(16))
    test = write_tsv(tmp_path / "test.tsv", _long_rows(4))
    assert (
        _finetune(
            tmp_path,
            tiny_model,
            train,
            test,
            "--long-inputs",
            "window_mean",
            "--window-stride",
            "7",
            "--epochs",
            "1",
        )
        == 0
    )
    capsys.readouterr()
    run = tmp_path / "run"
    review = _long_rows(1)[0][0]
    assert main(["predict", str(run), review, "good"]) == 0
    long_line, short_line = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    # 24 tokens + [CLS] and [SEP]; windows of 14 every 7 tokens: 3 windows, nothing cut.
    assert long_line["tokens"] == 26 and long_line["tokens_kept"] == 26
    assert long_line["windows"] == 3 and long_line["truncated"] is False
    assert short_line["windows"] == 1
    # The same run read head-only, at predict time: truncation is reported, never silent.
    assert main(["predict", str(run), review, "--long-inputs", "head"]) == 0
    head = json.loads(capsys.readouterr().out)
    assert head["truncated"] is True and head["tokens_kept"] == 16 and head["windows"] == 1
    for strategy in ("head", "head_tail", "window_max"):
        assert main(["evaluate", str(run), "--long-inputs", strategy]) == 0
        assert json.loads(capsys.readouterr().out)["num_examples"] == 4
    # Export applies the run's strategy in the graph (or the one asked for).
    assert (
        main(["export", str(run), "--name", "long", "--export-dir", str(tmp_path / "models")]) == 0
    )
    capsys.readouterr()
    loaded = load_exported(str(tmp_path / "models" / "long" / "1"))
    import tensorflow as tf

    outputs = loaded.signatures["classify"](text=tf.constant([review]))
    assert outputs["truncated"].numpy().tolist() == [False]
    assert outputs["tokens"].numpy().tolist() == [26]
    assert outputs["probabilities"].numpy()[0].tolist() == pytest.approx(
        [long_line["probabilities"][name] for name in ("neg", "pos")], abs=1e-3
    )


def test_long_input_flags_that_cannot_apply_are_refused(tmp_path, tiny_model, trained_run, capsys):
    train = write_tsv(tmp_path / "train.tsv", sentiment_rows(8))
    test = write_tsv(tmp_path / "test.tsv", sentiment_rows(4))
    pair_train = write_tsv(tmp_path / "pair_train.tsv", sentiment_rows(8, pair=True))
    pair_test = write_tsv(tmp_path / "pair_test.tsv", sentiment_rows(4, pair=True))
    cases = [
        ((train, test, "--window-stride", "4"), "--window-stride applies to --long-inputs"),
        (
            (train, test, "--long-inputs", "head_tail", "--head-tokens", "15"),
            "--head-tokens must be at most --sequence-length - 2 = 14",
        ),
        (
            (train, test, "--long-inputs", "window_max", "--max-windows", "0"),
            "--max-windows must be an int >= 1",
        ),
        ((pair_train, pair_test, "--long-inputs", "head_tail"), "reads single texts"),
    ]
    for arguments, message in cases:
        assert _finetune(tmp_path, tiny_model, *arguments) == 2
        assert message in capsys.readouterr().err
        assert not (tmp_path / "run").exists()
    assert (
        main(
            [
                "finetune",
                "--task",
                "conll2003",
                "--model",
                str(tiny_model),
                "--output-dir",
                str(tmp_path / "ner"),
                "--long-inputs",
                "head_tail",
            ]
        )
        == 2
    )
    assert "--long-inputs and its flags are for classification" in capsys.readouterr().err
    capsys.readouterr()
    assert main(["predict", str(trained_run), "good", "--max-windows", "2"]) == 2
    assert "--max-windows needs --long-inputs" in capsys.readouterr().err


def test_a_format_1_run_is_still_read(tmp_path, trained_run, capsys):
    # Runs written before kbert.runs' format: best.keras, the flags flat, no labels in config.
    run = shutil.copytree(trained_run, tmp_path / "run")
    (run / "model.keras").rename(run / "best.keras")
    config = json.loads((run / "config.json").read_text())
    for name in ("run_format", "label_names", "task_family"):
        config.pop(name)
    (run / "config.json").write_text(json.dumps({**config, "num_classes": 2}))
    metrics = json.loads((run / "metrics.json").read_text())
    capsys.readouterr()
    assert main(["evaluate", str(run), "--split", "test"]) == 0
    assert json.loads(capsys.readouterr().out)["accuracy"] == pytest.approx(
        metrics["test"]["accuracy"]
    )
    assert main(["predict", str(run), "the movie was good"]) == 0
    assert json.loads(capsys.readouterr().out)["label"] in ("neg", "pos")
