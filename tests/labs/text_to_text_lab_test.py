"""lab19_text_to_text as a user runs it, on two books, seconds of pretraining and a few labels."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import tensorflow as tf

from kbert.data import load_classification_task
from kbert.export import load_exported
from kbert.metrics.majority_class import NEAR_MAJORITY, majority_accuracy

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_text_to_text_lab_runs_every_part_and_its_export_answers_as_keras(tmp_path, data_root):
    record = tmp_path / "lab19.json"
    arguments = (
        "--max-documents 2 --vocabulary-size 1500 --budget-minutes 0.03 --steps-per-epoch 2 "
        "--sizes 16 --seeds 1 --epochs 1 --min-steps 2 --learning-rates 1e-3 "
        "--extra-examples 16 --eval-examples 4 --trec-eval-examples 16 --verbose 0 "
        # Smaller models: each fit's cost here is tracing, which grows with the layers.
        "--hidden-dim 64 --num-heads 2 --encoder-layers 2 --t5-layers 1 --block-length 64"
    ).split()
    result = subprocess.run(
        [sys.executable, "labs/lab19_text_to_text.py", *arguments]
        + ["--run-dir", str(tmp_path / "run"), "--export-dir", str(tmp_path / "models")]
        + ["--record", str(record)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "KBERT_DATA_DIR": str(data_root)},
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    for key in ("text_to_text_trec_acc", "encoder_trec_acc", "parameters", "pretrain_seconds"):
        assert key in report
    # One parameter count: the encoder-decoder's feed-forward width is the multiple of 64 that
    # comes nearest the encoder's count, so they differ by at most half a step of 64 units,
    # each adding (2 x hidden + 1) weights per layer (here 1 encoder + 1 decoder layer of 64).
    # That is 0.6% at the lab's default sizes, up to 4% at these small ones.
    sizes = report["parameters"]
    assert sizes["encoder_decoder_intermediate_dim"] % 64 == 0
    assert abs(sizes["encoder_decoder"] - sizes["encoder"]) <= 32 * (2 * 64 + 1) * 2
    # One budget, both families pretrained.
    assert set(report["pretrain_seconds"]) == {"encoder_decoder", "encoder"}
    assert set(report["curve"]) == {
        "encoder_decoder_pretrained",
        "encoder_decoder_random",
        "encoder_pretrained",
        "encoder_random",
    }
    assert {"sst2_pretrained", "squad_random"} <= set(report["other_tasks"])
    # Each start's scores on the other tasks over its seeds (one here), the runs kept for pairing.
    sst2, squad = report["other_tasks"]["sst2_pretrained"], report["other_tasks"]["squad_random"]
    assert sst2["runs"]["accuracy"] == [sst2["accuracy"]] and sst2["accuracy_sd"] is None
    assert squad["runs"]["f1"] == [squad["f1"]] and squad["test_questions"] == 4
    _check_majority_counts(report, result.stdout, data_root)
    assert report["export"]["served_equals_keras"] is True
    outputs = load_exported(report["export"]["path"]).signatures["generate"](
        text=tf.constant(["trec question: Who was Galileo ?"])
    )
    assert outputs["text"].shape == (1,)
    assert json.loads(record.read_text())["results"]["labelled"] == 16


def _check_majority_counts(report, stdout, data_root):
    """The majority class of the 16 test questions scored, and each cell's runs counted at it."""
    test = load_classification_task("trec", "test", data_dir=data_root)
    majority = round(majority_accuracy(test.labels[:16]), 4)
    assert report["majority_accuracy"] == majority
    assert f"majority class {majority:.3f})" in stdout
    for name, row in report["curve"].items():
        cell = row["16"]
        assert len(cell["at_majority"]) == len(cell["runs"]) == 1, name
        assert all(isinstance(flag, bool) for flag in cell["at_majority"]), name
        assert cell["runs_at_majority"] == sum(cell["at_majority"]), name
        # At or below the majority class (within a point) is always counted as there; accuracy
        # is a multiple of 1/16 here, exact at the record's four digits.
        for accuracy, flag in zip(cell["runs"], cell["at_majority"], strict=True):
            if accuracy <= majority + NEAR_MAJORITY:
                assert flag, (name, accuracy, majority)
        assert f"({cell['runs_at_majority']} of 1)" in stdout, name
