"""lab01 as a user runs it: a smoke run, and a run killed with kill -9 that resumes."""

import csv
import datetime
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from benchmarks import redate_keras_file

ROOT = Path(__file__).resolve().parents[2]
SMALL = [
    "--max-documents",
    "4",
    "--vocabulary-size",
    "600",
    "--num-layers",
    "1",
    "--eval-steps",
    "2",
    "--hidden-dim",
    "32",
    "--num-heads",
    "2",
    "--block-length",
    "32",
    "--batch-size",
    "8",
    "--warmup-steps",
    "2",
    "--generate-tokens",
    "5",
    "--validation-steps",
    "2",
]


def _command(tmp_path, *extra):
    return [
        sys.executable,
        "labs/lab01_pretraining.py",
        *SMALL,
        "--run-dir",
        str(tmp_path / "run"),
        "--save-dir",
        str(tmp_path / "saved"),
        *extra,
    ]


def _env(data_root):
    return {**os.environ, "PYTHONPATH": str(ROOT), "KBERT_DATA_DIR": str(data_root)}


def _run_lab(tmp_path, data_root, *extra):
    """lab01 at the small size with `extra` flags; its completed process."""
    return subprocess.run(
        _command(tmp_path, *extra),
        cwd=ROOT,
        env=_env(data_root),
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.slow
def test_both_parts_train_save_and_print_the_table(tmp_path, data_root):
    result = _run_lab(
        tmp_path,
        data_root,
        "--epochs",
        "2",
        "--steps-per-epoch",
        "3",
        "--record",
        str(tmp_path / "r.json"),
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert set(report) == {"causal", "masked"}
    # The record pins what the run read (the books, by content) beside what it wrote.
    record = json.loads((tmp_path / "r.json").read_text())
    assert record["results"]["causal"]["saved_files"] == report["causal"]["saved_files"]
    books = [label for label in record["inputs"] if label.startswith("$KBERT_DATA_DIR/")]
    assert books and all(len(record["inputs"][label]) == 64 for label in books)
    for part in ("causal", "masked"):
        assert (tmp_path / "saved" / f"lab01_{part}" / "encoder.keras").is_file()
        assert (tmp_path / "saved" / f"lab01_{part}" / "vocab.txt").is_file()
        # What it wrote, pinned by content: a later lab's record of reading it must match.
        saved = tmp_path / "saved" / f"lab01_{part}"
        assert report[part]["saved_files"] == {
            str(path.resolve()): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in (saved / "encoder.keras", saved / "vocab.txt")
        }
        assert (tmp_path / "run" / part / "learning_curve.png").stat().st_size > 1000
        assert any((tmp_path / "run" / part / "tensorboard").rglob("*tfevents*"))
    assert all(f"[{s}]" in result.stdout for s in ("greedy", "top_k ", "top_p "))
    # ELECTRA at a time budget: the plan (timed steps → intervals) is written and reused.
    electra = _run_lab(
        tmp_path,
        data_root,
        *("--part", "electra", "--budget-minutes", "0.02", "--steps-per-epoch", "2"),
        # ELECTRA's own choices (`--tie-embeddings`, a generator half as wide) and the
        # recipe's flags reach the run.
        *("--tie-embeddings", "--generator-width-factor", "2", "--mask-rate", "0.3"),
        *("--schedule", "linear", "--dtype", "float32"),
    )
    assert electra.returncode == 0, electra.stderr[-3000:]
    plan = json.loads((tmp_path / "run" / "electra" / "plan.json").read_text())
    assert plan["budget_minutes"] == 0.02 and plan["epochs"] >= 1
    assert plan["seconds_per_step"] > 0
    assert json.loads(electra.stdout.strip().splitlines()[-1])["electra"]["rtd_accuracy"] > 0
    assert (tmp_path / "saved" / "lab01_electra" / "encoder.keras").is_file()
    # The transfer benchmark runs on what lab01 saved (each start vs random init).
    record = tmp_path / "transfer.json"
    transfer = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.transfer",
            "--pretrained-dir",
            str(tmp_path / "saved"),
            "--seeds",
            "2",
            "--sizes",
            "24",
            "--headline-size",
            "24",
            "--learning-rates",
            "1e-3",
            "3e-4",
            "--min-steps",
            "2",
            "--sequence-length",
            "32",
            "--figure",
            str(tmp_path / "curve.png"),
            "--record",
            str(record),
        ],
        cwd=ROOT,
        env=_env(data_root),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert transfer.returncode == 0, transfer.stderr[-3000:]
    summary = json.loads(transfer.stdout.strip().splitlines()[-1])
    assert summary["seeds"] == 2 and summary["headline_size"] == 24
    assert set(summary["curve"]) == {
        "causal",
        "masked",
        "electra",
        "random_causal",
        "random_bidirectional",
    }
    assert len(summary["curve"]["masked"]["24"]["runs"]) == 2
    # The rate is chosen per start and size on validation, by seed 0's runs at each rate.
    for name, by_size in summary["learning_rates"].items():
        scores = by_size["24"]
        assert set(scores) == {"1e-03", "3e-04"}
        assert summary["chosen_learning_rate"][name]["24"] == max(scores, key=scores.get)
    gaps = summary["gaps"]  # each start against its own control, at the declared size
    assert set(gaps) == {"causal", "masked", "electra"}
    assert gaps["causal"]["control"] == "random_causal"
    for gap in gaps.values():
        assert 0.0 <= gap["pretrained_acc"] <= 1.0 and 0.0 <= gap["random_acc"] <= 1.0
        expected = 100 * (gap["pretrained_acc"] - gap["random_acc"])
        assert gap["gap_points"] == pytest.approx(expected, abs=0.051)
        assert gap["difference"]["n"] == 2
        assert gap["difference"]["mean"] == pytest.approx(expected / 100, abs=1e-3)
    assert (tmp_path / "curve.png").stat().st_size > 1000
    assert json.loads(record.read_text())["results"]["gaps"] == gaps
    # Linear probes per layer on the frozen starts, each beside random weights of its own shape.
    saved = tmp_path / "saved"
    probes = subprocess.run(
        [sys.executable, "-m", "benchmarks.transfer_probes"]
        + [f"--start={name}={saved / f'lab01_{name}'}" for name in ("causal", "masked")]
        + ["--train-size", "30", "--control-seeds", "1", "--figure", str(tmp_path / "p.png")],
        cwd=ROOT,
        env=_env(data_root),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert probes.returncode == 0, probes.stderr[-3000:]
    found = json.loads(probes.stdout.strip().splitlines()[-1])
    assert found["control_of"]["masked"].startswith("random_bidirectional")
    assert found["control_of"]["causal"] == "random_causal_pre_ln"
    layers = len(found["probe_accuracy"]["causal"])
    assert layers >= 2 and all(len(v) == layers for v in found["probe_accuracy"].values())
    assert (tmp_path / "p.png").stat().st_size > 1000
    # A second run must not replace the saved models unless told to.
    again = _run_lab(
        tmp_path, data_root, "--part", "causal", "--epochs", "1", "--steps-per-epoch", "1"
    )
    assert again.returncode != 0 and "pass --overwrite" in again.stderr


def _epochs(history):
    if not history.exists():
        return []
    with history.open() as handle:
        return [int(row["epoch"]) for row in csv.DictReader(handle)]


@pytest.mark.slow
def test_a_second_run_gives_back_the_bytes_the_first_wrote(tmp_path, data_root):
    """Records that read lab01's model pin its archive's SHA-256. A machine that lost
    `saved_models/` trains it again at the same commit and seed: training is bit for bit the
    same on one machine, and `benchmarks.redate_keras_file` puts back the save time Keras wrote
    into the archive, giving the pinned bytes."""
    saved = []
    for run in ("first", "second"):
        flags = ("--part", "causal", "--epochs", "1", "--steps-per-epoch", "3")
        result = _run_lab(tmp_path / run, data_root, *flags)
        assert result.returncode == 0, result.stderr[-3000:]
        saved.append(tmp_path / run / "saved" / "lab01_causal" / "encoder.keras")
    first, second = (zipfile.ZipFile(path) for path in saved)
    assert first.read("model.weights.h5") == second.read("model.weights.h5")
    assert first.read("config.json") == second.read("config.json")
    when = datetime.datetime.strptime(
        json.loads(first.read("metadata.json"))["date_saved"], "%Y-%m-%d@%H:%M:%S"
    )
    pinned = hashlib.sha256(saved[0].read_bytes()).hexdigest()
    window = [
        *("--from", (when - datetime.timedelta(seconds=5)).isoformat()),
        *("--to", (when + datetime.timedelta(seconds=5)).isoformat()),
    ]
    assert redate_keras_file.main([str(saved[1]), "--sha256", pinned, *window]) == 0
    assert saved[1].read_bytes() == saved[0].read_bytes()


@pytest.mark.slow
def test_a_run_killed_with_sigkill_continues_from_its_last_checkpoint(tmp_path, data_root):
    # Many short intervals, so the kill surely lands mid-run whatever the machine's speed.
    command = _command(tmp_path, "--part", "causal", "--epochs", "40", "--steps-per-epoch", "2")
    history = tmp_path / "run" / "causal" / "history.csv"
    process = subprocess.Popen(
        command, cwd=ROOT, env=_env(data_root), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.time() + 300
    while len(_epochs(history)) < 2 and process.poll() is None and time.time() < deadline:
        time.sleep(0.2)
    assert process.poll() is None, "the run ended before it could be killed"
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    done_before = _epochs(history)
    assert 2 <= len(done_before) < 40

    result = subprocess.run(
        command, cwd=ROOT, env=_env(data_root), capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr[-3000:]
    epochs = _epochs(history)
    resumed = epochs[len(done_before) :]
    # It starts again after the last checkpointed epoch, not at epoch 0, and finishes all 40.
    assert resumed and resumed[0] >= 1 and resumed[-1] == 39, epochs
    assert resumed[0] >= done_before[-1], epochs


@pytest.mark.slow
@pytest.mark.parametrize(
    "kind, part", [("bpe", "masked"), ("byte_level_bpe", "causal"), ("unigram", "masked")]
)
def test_pretraining_with_bpe_byte_level_bpe_and_unigram(tmp_path, data_root, kind, part):
    flags = ("--tokenizer", kind, "--part", part, "--epochs", "1", "--steps-per-epoch", "2")
    result = _run_lab(tmp_path, data_root, *flags)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])[part]
    assert report["tokenizer"] == kind and report["vocabulary_size"] <= 600
    loss = report[{"causal": "clm_loss", "masked": "mlm_loss"}[part]]
    assert 0 < loss < 2 * np.log(report["vocabulary_size"])  # finite, near or below uniform
    # Saved under its own name (the WordPiece start of later labs is never replaced), with the
    # tokenizer it was trained with, which loads and tokenizes as in training.
    saved = tmp_path / "saved" / f"lab01_{part}_{kind}"
    assert (saved / "encoder.keras").is_file() and not (
        tmp_path / "saved" / f"lab01_{part}"
    ).exists()
    from kbert.text import BytePairTokenizer, UnigramTokenizer

    loaded = (UnigramTokenizer if kind == "unigram" else BytePairTokenizer).load(
        saved / "tokenizer.json"
    )
    assert (
        loaded.get_config()
        == type(loaded).load(tmp_path / "run" / kind / "tokenizer.json").get_config()
    )
    assert loaded.pad_token == "[PAD]" and loaded.mask_token_id == loaded.vocabulary_size() - 1
    if part == "causal":
        assert all(f"[{s}]" in result.stdout for s in ("greedy", "top_k ", "top_p "))
