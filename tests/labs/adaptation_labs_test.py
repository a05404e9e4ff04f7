"""Labs 3–6, lab15_peft, lab16_distillation and benchmarks/adaptation.py as a user runs them.

Tiny encoders with MiniLM's real vocabulary stand in for lab01's causal model and MiniLM-L6,
on real TREC-6 (and SST-2) with small budgets: enough steps that every unfreezing schedule
fits, so each lab runs its whole story.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kbert.checkpoints import load_hf_bert_tokenizer, save_pretrained
from kbert.models import Encoder

ROOT = Path(__file__).resolve().parents[2]
BUDGET = [
    "--train-examples",
    "192",
    "--batch-size",
    "16",
    "--epochs",
    "1",
    "--sequence-length",
    "24",
]


def _run(arguments, data_root, run_dir):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "KBERT_DATA_DIR": str(data_root)}
    result = subprocess.run(
        [sys.executable, *arguments, *BUDGET, "--run-dir", str(run_dir)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout, json.loads(result.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory, minilm_dir):
    """(causal, bidirectional) kbert checkpoint directories: the lab01 and BERT stand-ins."""
    tokenizer = load_hf_bert_tokenizer(minilm_dir)
    root = tmp_path_factory.mktemp("starts")
    # Hidden 64: wide enough for the labs' 32-unit adapter bottleneck.
    size = {
        "vocabulary_size": tokenizer.vocabulary_size(),
        "max_sequence_length": 32,
        "hidden_dim": 64,
        "num_heads": 2,
        "intermediate_dim": 128,
    }
    causal = Encoder.from_preset("tiny", causal=True, norm_first=True, num_segments=0, **size)
    bidirectional = Encoder.from_preset("tiny", **size)
    return (
        save_pretrained(causal, tokenizer, root / "causal"),
        save_pretrained(bidirectional, tokenizer, root / "bert"),
    )


def _starts(tiny_models):
    causal, bert = tiny_models
    return ["--starts", f"lab01,{bert}", "--lab01-model", str(causal)]


def _check_report(report, tiny_models, labels):
    bert = str(tiny_models[1])
    for label in labels:
        for start in ("lab01", bert):
            key = f"{start}/{label}"
            if label == "ewc" and start == bert:
                assert key not in report  # no pretraining head to estimate the Fisher with
                continue
            row = report[key]
            assert set(row) == {"trainable_pct", "acc_mean", "acc_sd", "train_s"}
            assert 0.0 <= row["acc_mean"] <= 1.0 and row["train_s"] > 0


@pytest.mark.slow
def test_lab03_adapters(tmp_path, data_root, tiny_models):
    stdout, report = _run(["labs/lab03_adapters.py", *_starts(tiny_models)], data_root, tmp_path)
    _check_report(
        report, tiny_models, ["full", "feature_extraction", "adapters", "adapters_pfeiffer"]
    )
    assert (
        report["lab01/feature_extraction"]["trainable_pct"]
        < report["lab01/adapters"]["trainable_pct"]
        < report["lab01/full"]["trainable_pct"]
        == 100
    )
    # Reloaded adapter-only weights and a second task on the same base change no logit.
    lines = [line for line in stdout.splitlines() if "reloaded into a fresh base" in line]
    assert len(lines) == 2
    for line in lines:
        reloaded, after_second = map(float, re.findall(r"\d\.\d+e[+-]\d+", line))
        assert reloaded < 1e-4 and after_second < 1e-4, line


@pytest.mark.slow
def test_lab04_gradual_unfreezing(tmp_path, data_root, tiny_models):
    stdout, report = _run(
        ["labs/lab04_gradual_unfreezing.py", *_starts(tiny_models)], data_root, tmp_path
    )
    _check_report(report, tiny_models, ["full", "top_2", "gradual_unfreezing", "chain_thaw"])
    assert "GradualUnfreezing from step    0" in stdout and "ChainThaw from step" in stdout


@pytest.mark.slow
def test_lab05_discriminative_lr(tmp_path, data_root, tiny_models):
    stdout, report = _run(
        ["labs/lab05_discriminative_lr.py", *_starts(tiny_models)], data_root, tmp_path
    )
    _check_report(
        report, tiny_models, ["full", "discriminative_lr", "layerwise_decay", "l2_sp", "ewc"]
    )
    assert "peak learning rate per layer group" in stdout


@pytest.mark.slow
def test_lab06_multitask(tmp_path, data_root, tiny_models):
    stdout, report = _run(["labs/lab06_multitask.py", *_starts(tiny_models)], data_root, tmp_path)
    _check_report(report, tiny_models, ["full", "multitask", "multitask_annealed", "sequential"])
    assert "trec_test_accuracy" in stdout


@pytest.mark.slow
def test_lab_peft(tmp_path, data_root, tiny_models):
    stdout, report = _run(["labs/lab15_peft.py", *_starts(tiny_models)], data_root, tmp_path)
    _check_report(report, tiny_models, ["full", "lora", "prefix_tuning", "prompt_tuning"])
    for start in ("lab01", str(tiny_models[1])):
        assert report[f"{start}/lora"]["trainable_pct"] < 50
    assert stdout.count("same prediction on 100.0% of the test set") == 2


@pytest.mark.slow
def test_lab_distillation_and_the_benchmark(tmp_path, data_root, tiny_models):
    _, report = _run(
        ["labs/lab16_distillation.py", *_starts(tiny_models)], data_root, tmp_path / "lab"
    )
    _check_report(
        report,
        tiny_models,
        ["full", "student_labels_only", "distillation", "distillation_hidden_cosine"],
    )
    assert report["lab01/ensemble"]["acc_sd"] is None  # one ensemble of the 2 seeds' models
    assert report["lab01/ensemble"]["trainable_pct"] == pytest.approx(200.0)

    # The all-labs command: a subset of methods, then a rerun that resumes from its file.
    arguments = [
        "benchmarks/adaptation.py",
        *_starts(tiny_models),
        "--seeds",
        "2",
        "--methods",
        "full,adapters,ensemble",
    ]
    stdout, report = _run(arguments, data_root, tmp_path / "bench")
    assert "| start | method | trainable params |" in stdout
    assert len(report) == 6 and report["lab01/adapters"]["acc_sd"] is not None
    lines = (tmp_path / "bench" / "results.jsonl").read_text().splitlines()
    assert len(lines) == 10  # 2 starts x (2 seeds x 2 methods + 1 ensemble)
    _, again = _run(arguments, data_root, tmp_path / "bench")
    assert again == report
    assert len((tmp_path / "bench" / "results.jsonl").read_text().splitlines()) == 10
