"""lab09_dialog as a user runs it: a tiny causal model with a real vocabulary stands in for
lab01's, on a few PERSONA-CHAT dialogs."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kbert.checkpoints import load_hf_bert_tokenizer, save_pretrained
from kbert.models import Encoder

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_dialog_lab_trains_both_starts_and_scores_them(tmp_path, data_root, minilm_dir):
    tokenizer = load_hf_bert_tokenizer(minilm_dir)
    causal = Encoder.from_preset(
        "tiny",
        causal=True,
        norm_first=True,
        num_segments=0,
        vocabulary_size=tokenizer.vocabulary_size(),
        max_sequence_length=64,
    )
    model_dir = save_pretrained(causal, tokenizer, tmp_path / "causal")
    record = tmp_path / "lab09.json"
    result = subprocess.run(
        [
            sys.executable,
            "labs/lab09_dialog.py",
            "--lab01-model",
            str(model_dir),
            "--train-dialogs",
            "8",
            "--epochs",
            "1",
            "--seeds",
            "2",
            "--eval-examples",
            "12",
            "--validation-examples",
            "8",
            "--learning-rates",
            "1e-3,3e-3",
            "--candidates",
            "4",
            "--samples",
            "1",
            "--verbose",
            "0",
            "--record",
            str(record),
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "KBERT_DATA_DIR": str(data_root)},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert set(report["hits_at_1"]) == set(report["perplexity"]) == {"pretrained", "random"}
    for name in ("pretrained", "random"):
        assert 0.0 <= report["hits_at_1"][name] <= 1.0 and report["perplexity"][name] > 1.0
    assert report["candidates"] == 4
    recorded = json.loads(record.read_text())["results"]
    assert recorded["held_out_replies"] == 12 and recorded["settings"]["sequence_length"] == 64
    assert set(recorded["samples"][0]) == {"persona", "partner", "pretrained", "random"}
    # Two seeds per start, their mean ± sd, and the starts' seed-paired difference.
    for name in ("pretrained", "random"):
        runs = recorded["results"][name]["runs"]
        assert [run["seed"] for run in runs] == [0, 1]
        assert recorded["results"][name]["hits_at_1"] == pytest.approx(
            sum(run["hits_at_1"] for run in runs) / 2
        )
        assert recorded["results"][name]["perplexity_sd"] is not None
    differences = recorded["differences"]
    assert differences["hits_at_1"]["n"] == 2 and differences["log_perplexity_reduction"]["n"] == 2
    assert "paired by seed" in result.stdout
    assert "held-out perplexity" in result.stdout and "persona:" in result.stdout
    # Each start's rate: both tried at the first seed, the lower validation perplexity kept.
    assert recorded["validation_replies"] == 8
    for name, choice in recorded["rate_choices"].items():
        best = min(choice["tried"], key=lambda row: row["validation_perplexity"])
        assert [row["learning_rate"] for row in choice["tried"]] == [1e-3, 3e-3]
        runs = recorded["results"][name]["runs"]
        assert [run["learning_rate"] for run in runs] == [best["learning_rate"]] * 2
        assert runs[0]["perplexity"] == best["perplexity"]
    assert "peak rate" in result.stdout
