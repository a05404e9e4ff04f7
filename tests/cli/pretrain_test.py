"""`kbert pretrain` on a tiny corpus and model (fast tier), and as a user runs it (slow tier)."""

import csv
import json
import os
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

from kbert.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
SENTENCES = [
    "The old man looked at the sea and the boat.",
    "She opened the letter and read it by the fire.",
    "It was a dark and stormy night on the hill.",
    "The dog ran along the river to the mill.",
    "They talked of ships and of the long winter.",
]
TINY = [
    "--vocabulary-size",
    "120",
    "--num-layers",
    "1",
    "--hidden-dim",
    "16",
    "--num-heads",
    "2",
    "--block-length",
    "16",
    "--batch-size",
    "4",
    "--warmup-steps",
    "1",
    "--validation-steps",
    "1",
    "--verbose",
    "0",
]


def _corpus(path, documents=12):
    """Plain text: `documents` documents of three sentences, a blank line between them."""
    lines = []
    for index in range(documents):
        lines += [SENTENCES[(index + k) % len(SENTENCES)] for k in range(3)] + [""]
    path.write_text("\n".join(lines))
    return str(path)


def _pretrain(tmp_path, *extra, corpus=None, output="out"):
    argv = ["pretrain", "--corpus", corpus or _corpus(tmp_path / "corpus.txt")]
    argv += [*TINY, "--output-dir", str(tmp_path / output), *extra]
    if not any(flag in extra for flag in ("--budget-steps", "--budget-minutes")):
        argv += ["--budget-steps", "2", "--checkpoint-every", "1"]
    if "--objective" not in extra:
        argv += ["--objective", "masked"]
    return main(argv)


def _entries(tmp_path):
    return sorted(path.name for path in tmp_path.iterdir())


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--budget-steps", "0"], "--budget-steps must be an int >= 1; received 0"),
        (["--budget-minutes", "-1"], "--budget-minutes must be a number > 0; received -1"),
        (["--block-length", "4"], "--block-length must be an int >= 8; received 4"),
        (["--learning-rate", "0"], "--learning-rate must be a positive number"),
        (["--mask-rate", "1.5"], "--mask-rate must be a number in (0, 1); received 1.5"),
        (["--fine-tuning-dropout", "1"], "--fine-tuning-dropout must be in [0, 1); received 1"),
        (["--discriminator-weight", "0"], "--discriminator-weight must be a number > 0"),
        (["--generator-width-factor", "0"], "--generator-width-factor must be an int >= 1"),
        (
            ["--objective", "electra", "--generator-width-factor", "3", "--num-heads", "8"],
            "--hidden-dim 16 / 3 must be a multiple of --num-heads 8 / 3",
        ),
        (["--preset", "bert_base"], "--preset bert_base fixes the sizes; drop --num-layers"),
        (["--hidden-dim", "18", "--num-heads", "4"], "must be a multiple of --num-heads 4"),
        (["--tokenizer", "bpe", "--tokenizer-file", "x"], "not both"),
        (["--tokenizer-file", "no/such/vocab.txt"], "--tokenizer-file 'no/such/vocab.txt'"),
        (["--validation-corpus", "no/such.txt"], "--validation-corpus 'no/such.txt' is not"),
        (
            ["--objective", "span_corruption", "--tokenizer", "unigram"],
            "use --tokenizer wordpiece, not unigram",
        ),
        (
            ["--objective", "span_corruption", "--tokenizer-file", "tok.json"],
            "'tok.json' is a BPE or unigram tokenizer, expected a vocab.txt",
        ),
    ],
)
def test_bad_flags_are_refused_and_nothing_is_written(tmp_path, capsys, extra, message):
    corpus = _corpus(tmp_path / "corpus.txt")
    before = _entries(tmp_path)
    assert _pretrain(tmp_path, *extra, corpus=corpus) == 2
    assert message in capsys.readouterr().err
    assert _entries(tmp_path) == before


def test_a_preset_of_the_other_model_family_is_refused(tmp_path, capsys):
    argv = ["pretrain", "--corpus", _corpus(tmp_path / "c.txt"), "--budget-steps", "1"]
    argv += ["--objective", "span_corruption", "--preset", "bert_base", "--output-dir", "x"]
    assert main(argv) == 2
    assert "no preset for --objective span_corruption; expected one of t5_small" in (
        capsys.readouterr().err
    )


@pytest.mark.parametrize(
    ("content", "name", "message"),
    [
        ("\n\n  \n", "empty.txt", "hold no documents"),
        ('{"text": "fine"}\n{"text": \n', "broken.jsonl", "broken.jsonl:2: malformed JSON"),
        ('{"body": "fine"}\n', "fields.jsonl", "expected the text field 'text'"),
        ("Too short.\n", "short.txt", "fewer than one block"),
        (b"caf\xe9\n", "latin1.txt", "latin1.txt:1: not valid UTF-8"),
    ],
)
def test_corpus_errors_name_the_file_and_write_nothing(tmp_path, capsys, content, name, message):
    corpus = tmp_path / name
    if isinstance(content, bytes):
        corpus.write_bytes(content)
    else:
        corpus.write_text(content)
    before = _entries(tmp_path)
    assert _pretrain(tmp_path, corpus=str(corpus)) == 2
    assert message in capsys.readouterr().err
    assert _entries(tmp_path) == before  # no output directory, no partial sibling


def test_an_existing_directory_is_kept_unless_overwrite_and_ours(tmp_path, capsys):
    mine = tmp_path / "out"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    assert _pretrain(tmp_path) == 2
    assert "exists and is not empty" in capsys.readouterr().err
    assert _pretrain(tmp_path, "--overwrite") == 2
    assert "holds files kbert did not write (notes.txt)" in capsys.readouterr().err
    assert (mine / "notes.txt").read_text() == "mine"


def test_the_recipe_flags_reach_the_model_and_its_record(tmp_path, monkeypatch):
    from kbert.models import pretraining_models

    built = []
    build = pretraining_models.build_pretraining_model

    def spy(objective, settings, vocabulary_size):
        built.append(build(objective, settings, vocabulary_size))
        return built[-1]

    monkeypatch.setattr(pretraining_models, "build_pretraining_model", spy)
    flags = ["--objective", "electra", "--mask-rate", "0.4", "--schedule", "linear"]
    flags += ["--generator-width-factor", "2", "--discriminator-weight", "20", "--tie-embeddings"]
    flags += ["--dropout", "0", "--fine-tuning-dropout", "0.15"]
    assert _pretrain(tmp_path, *flags) == 0
    model = built[-1]
    assert model.generator_encoder.config.hidden_dim == 8 and model.discriminator_weight == 20
    assert model.generator_encoder.embeddings.token_embedding is (
        model.discriminator_encoder.embeddings.token_embedding
    )
    learning_rate = model.optimizer.get_config()["learning_rate"]["config"]
    assert learning_rate["name"] == "warmup_linear_decay"
    settings = json.loads((tmp_path / "out" / "pretrain.json").read_text())["settings"]
    assert (settings["mask_rate"], settings["tie_embeddings"]) == (0.4, True)
    import keras

    # Pretrained without dropout, saved with the dropout its fine-tuning uses.
    assert model.discriminator_encoder.config.dropout == 0.0
    saved = keras.models.load_model(tmp_path / "out" / "encoder.keras")
    assert (saved.config.dropout, saved.config.attention_dropout) == (0.15, 0.15)


@pytest.mark.parametrize("objective", ["causal", "masked", "electra", "span_corruption"])
def test_each_objective_writes_a_model_directory(tmp_path, objective):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert _pretrain(tmp_path, "--objective", objective) == 0
    # No objective reads the pooler: it is frozen while training, not warned about.
    assert not [str(w.message) for w in caught if "Gradients do not exist" in str(w.message)]
    out = tmp_path / "out"
    record = json.loads((out / "pretrain.json").read_text())
    model_file = "model.keras" if objective == "span_corruption" else "encoder.keras"
    assert record["objective"] == objective and record["model_file"] == model_file
    assert record["steps"] == 2 and record["tokenizer_file"] == "vocab.txt"
    assert {model_file, "vocab.txt", "history.csv", "learning_curve.png"} <= set(_entries(out))
    with open(out / "history.csv") as rows:
        assert len(list(csv.DictReader(rows))) == 2  # one row per checkpoint interval
    assert not [name for name in _entries(tmp_path) if ".partial" in name]
    if objective == "span_corruption":
        vocabulary = (out / "vocab.txt").read_text().split("\n")
        assert "<extra_id_0>" in vocabulary and record["sentinel_ids"]
        with pytest.raises(ValueError, match="model.keras but no encoder.keras"):
            from kbert.checkpoints import load_pretrained

            load_pretrained(out)
    else:
        from kbert.checkpoints import load_pretrained

        encoder, tokenizer = load_pretrained(out)
        assert encoder.config.causal == (objective == "causal")
        assert encoder.pooler.trainable  # saved after training: a head that reads it trains it
        assert tokenizer.vocabulary_size() == record["vocabulary_size"]


@pytest.mark.parametrize("kind", ["bpe", "byte_level_bpe", "unigram"])
def test_each_tokenizer_kind_is_trained_and_kept(tmp_path, kind):
    from kbert.checkpoints import load_pretrained
    from kbert.text.corpus_tokenizers import load_tokenizer_file

    assert _pretrain(tmp_path, "--tokenizer", kind, "--vocabulary-size", "300") == 0
    out = tmp_path / "out"
    record = json.loads((out / "pretrain.json").read_text())
    assert record["tokenizer"] == kind and record["tokenizer_file"] == "tokenizer.json"
    tokenizer = load_tokenizer_file(out / "tokenizer.json")
    assert tokenizer.vocabulary_size() == record["vocabulary_size"]
    assert tokenizer.mask_token_id is not None
    assert (out / "encoder.keras").is_file() and not (out / "vocab.txt").exists()
    with pytest.raises(ValueError, match="fine-tuning reads WordPiece vocabularies only"):
        load_pretrained(out)


def test_a_json_lines_corpus_and_a_given_vocabulary(tmp_path):
    lines = [json.dumps({"body": " ".join(SENTENCES[i:] + SENTENCES[:i])}) for i in range(5)]
    corpus = tmp_path / "books.jsonl"
    corpus.write_text("\n".join(lines) + "\n")
    assert _pretrain(tmp_path, "--text-field", "body", corpus=str(corpus), output="a") == 0
    vocabulary = tmp_path / "a" / "vocab.txt"
    assert json.loads((tmp_path / "a" / "pretrain.json").read_text())["train_documents"] == 5
    argv = ["--tokenizer-file", str(vocabulary), "--text-field", "body"]
    assert _pretrain(tmp_path, *argv, corpus=str(corpus), output="b") == 0
    assert (tmp_path / "b" / "vocab.txt").read_text() == vocabulary.read_text()
    assert json.loads((tmp_path / "b" / "pretrain.json").read_text())["tokenizer"] == "given"


def test_a_minutes_budget_is_timed_and_overwrite_replaces_our_directory(tmp_path, capsys):
    assert _pretrain(tmp_path, "--budget-minutes", "0.02", "--checkpoint-every", "2") == 0
    plan = json.loads((tmp_path / "out" / "plan.json").read_text())
    record = json.loads((tmp_path / "out" / "pretrain.json").read_text())
    assert plan["budget_minutes"] == 0.02 and plan["steps"] >= 1
    # Whole intervals of at most --checkpoint-every steps that fit in the planned steps.
    assert record["steps_per_interval"] == min(2, plan["steps"])
    assert plan["steps"] - record["steps_per_interval"] < record["steps"] <= plan["steps"]
    assert "timing training steps" in capsys.readouterr().out
    assert _pretrain(tmp_path, "--objective", "causal", "--overwrite") == 0
    record = json.loads((tmp_path / "out" / "pretrain.json").read_text())
    assert record["objective"] == "causal" and not (tmp_path / "out" / "plan.json").exists()


def _dead_pid():
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def _interrupted_partial(tmp_path, settings):
    partial = tmp_path / ".out.partial-dead"
    partial.mkdir()
    (partial / "resume.json").write_text(json.dumps({"pid": _dead_pid(), "settings": settings}))
    return partial


def test_resume_adopts_a_dead_runs_partial_directory_with_the_same_flags(tmp_path, capsys):
    from kbert.cli.main import build_parser
    from kbert.cli.pretrain import check_pretrain_flags, run_settings

    corpus = _corpus(tmp_path / "corpus.txt")
    argv = ["pretrain", "--corpus", corpus, *TINY, "--output-dir", str(tmp_path / "out")]
    argv += ["--budget-steps", "2", "--objective", "masked"]
    args = build_parser().parse_args(argv)
    check_pretrain_flags(args)  # fills the defaults the run records
    partial = _interrupted_partial(tmp_path, {**run_settings(args), "batch_size": 8})
    assert main([*argv, "--resume"]) == 2
    assert "started with other settings (batch_size: 8 then, 4 now)" in capsys.readouterr().err
    assert partial.is_dir()  # kept for a retry with the right flags
    (partial / "resume.json").unlink()
    partial.rmdir()

    partial = _interrupted_partial(tmp_path, run_settings(args))
    assert main(argv) == 0  # without --resume: a new run, the dead one left alone
    assert "--resume continues it" in capsys.readouterr().err
    assert partial.is_dir()
    assert main([*argv, "--overwrite", "--resume"]) == 0
    assert "resuming the interrupted run" in capsys.readouterr().out
    assert not partial.exists()  # adopted, finished and moved into place
    record = json.loads((tmp_path / "out" / "pretrain.json").read_text())
    assert record["resumed"] is True and not (tmp_path / "out" / "resume.json").exists()


# ------------------------------------------------------------------------------ slow tier


def _kbert(*argv, **kwargs):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "kbert.cli.main", *argv]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, **kwargs)


@pytest.mark.slow
def test_pretrain_masked_then_finetune_the_directory(tmp_path):
    corpus = _corpus(tmp_path / "corpus.txt", documents=40)
    out = str(tmp_path / "encoder")
    result = _kbert(
        "pretrain",
        "--objective",
        "masked",
        "--corpus",
        corpus,
        *TINY,
        "--budget-minutes",
        "0.1",
        "--checkpoint-every",
        "5",
        "--output-dir",
        out,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert f"kbert finetune --model {out}" in result.stdout
    rows = [
        f"the {w} was {'good' if i % 2 else 'bad'}\t{i % 2}" for i, w in enumerate(["sea"] * 24)
    ]
    (tmp_path / "train.tsv").write_text("\n".join(rows) + "\n")
    (tmp_path / "test.tsv").write_text("\n".join(rows[:8]) + "\n")
    result = _kbert(
        "finetune",
        "--task",
        "files",
        "--train-file",
        str(tmp_path / "train.tsv"),
        "--test-file",
        str(tmp_path / "test.tsv"),
        "--model",
        out,
        "--output-dir",
        str(tmp_path / "run"),
        "--epochs",
        "1",
        "--sequence-length",
        "16",
        "--batch-size",
        "8",
        "--verbose",
        "0",
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / "run" / "model.keras").is_file()


@pytest.mark.slow
def test_a_run_killed_with_kill_9_resumes_from_its_last_checkpoint(tmp_path):
    corpus = _corpus(tmp_path / "corpus.txt", documents=40)
    argv = ["pretrain", "--objective", "causal", "--corpus", corpus, *TINY]
    argv += ["--budget-steps", "1500", "--checkpoint-every", "50"]
    argv += ["--output-dir", str(tmp_path / "out")]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-m", "kbert.cli.main", *argv],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline, done = time.monotonic() + 300, 0
    while time.monotonic() < deadline and done < 2 and process.poll() is None:
        states = tmp_path.glob(".out.partial-*/backup/epoch-*")
        done = max([int(path.name.split("-")[1]) for path in states], default=0)
        time.sleep(0.1)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert 2 <= done < 30, f"killed after {done} of 30 checkpoint intervals"
    assert not (tmp_path / "out").exists()  # nothing in place before the run finished
    (partial,) = tmp_path.glob(".out.partial-*")

    result = _kbert(*argv, "--resume", timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "resuming the interrupted run" in result.stdout
    assert not partial.exists()
    record = json.loads((tmp_path / "out" / "pretrain.json").read_text())
    assert record["resumed"] is True and record["steps"] == 1500
    with open(tmp_path / "out" / "history.csv") as rows:
        epochs = [int(row["epoch"]) for row in csv.DictReader(rows)]
    # The killed run's rows, then the resumed run's from the interval after its checkpoint
    # (an interval it finished after that checkpoint is trained and written again).
    assert epochs.count(0) == 1 and set(epochs) == set(range(30)) and epochs[-1] == 29
    drops = [i for i in range(1, len(epochs)) if epochs[i] <= epochs[i - 1]]
    assert len(drops) <= 1
    restart = drops[0] if drops else epochs.index(done)
    assert epochs[restart] >= done and epochs[restart:] == list(range(epochs[restart], 30))


@pytest.mark.slow
def test_a_named_corpus_brings_its_held_out_split(tmp_path, data_root):
    argv = ["pretrain", "--objective", "causal", "--corpus-name", "wikitext2"]
    argv += [
        "--max-documents",
        "8",
        "--data-dir",
        str(data_root),
        *TINY,
        "--vocabulary-size",
        "500",
    ]
    argv += ["--budget-steps", "2", "--output-dir", str(tmp_path / "out")]
    assert main(argv) == 0
    record = json.loads((tmp_path / "out" / "pretrain.json").read_text())
    assert record["train_documents"] == 8 and record["validation_documents"] == 2
    assert record["validation"]["clm_loss"] > 0  # scored on WikiText-2's test articles
