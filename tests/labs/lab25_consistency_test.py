"""lab25_consistency as a user runs it: its whole story on a tiny start and budget."""

import json
from pathlib import Path

import pytest

from tests.labs.lab_process import run_lab

ROOT = Path(__file__).resolve().parents[2]
LAB = "labs/lab25_consistency.py"


def _run(arguments, data_root, timeout=600):
    return run_lab(LAB, arguments, data_root, timeout)


@pytest.mark.slow
def test_lab25_runs_its_story_and_records_it(tmp_path, data_root, tiny_models):
    record = tmp_path / "lab25.json"
    result = _run(
        [
            "--model",
            str(tiny_models[1]),
            "--labels",
            "16",
            "--perturbations",
            "both",
            "--confidence-threshold",
            "-1",
            "--mask-rate",
            "0.5",
            "--replace-rate",
            "0.5",
            "--unlabelled-examples",
            "40",
            "--unlabelled-ratio",
            "2",
            "--validation-examples",
            "24",
            "--eval-examples",
            "30",
            "--sequence-length",
            "16",
            "--batch-size",
            "8",
            "--epochs",
            "1",
            "--min-steps",
            "4",
            "--seeds",
            "1",
            "--learning-rates",
            "1e-3,3e-3",
            "--run-dir",
            str(tmp_path),
            "--record",
            str(record),
        ],
        data_root,
    )
    # One seed, one label count, two arms at two rates: four short fits of the tiny encoder.
    # Its predictions are near uniform over 6 classes, so no threshold is applied (-1): every
    # unlabelled question counts and the consistency term must be positive.
    assert result.returncode == 0, result.stderr[-3000:]
    stdout = result.stdout
    report = json.loads(stdout.strip().splitlines()[-1])
    assert json.loads(record.read_text())["results"] == report
    # The perturbations' cell: the original, and a copy per arm, masked where asked.
    assert stdout.count("original:") == 1
    shown = report["perturbed_example"]
    assert set(shown) == {"original", "both"}
    assert "[MASK]" in shown["both"] and "[MASK]" not in shown["original"]
    assert shown["original"].startswith("[CLS]") and shown["both"].startswith("[CLS]")
    assert report["unlabelled_examples"] == {"16": 40}
    assert (report["validation_examples"], report["test_examples"]) == (24, 30)
    assert 0 < report["majority_accuracy"] < 1
    rows = report["sizes"]["16"]
    assert set(rows) == {"supervised", "both"}
    for arm, row in rows.items():
        assert row["runs"] == [row["mean"]] and row["sd"] is None
        assert ("vs_supervised" in row) == (arm != "supervised")
    assert rows["both"]["vs_supervised"]["verdict"] == "no difference"  # one seed: no spread
    runs = {run["arm"]: run for run in report["runs"]}
    # Each arm's rate: its first seed at both, the better kept epoch on validation chosen.
    for arm, choice in report["rate_choices"]["16"].items():
        tried = {row["learning_rate"]: row for row in choice["tried"]}
        assert set(tried) == {1e-3, 3e-3} and choice["chosen_on"] == "val_accuracy"
        best = max(tried.values(), key=lambda row: row["val_accuracy"])
        assert choice["chosen"] == best["learning_rate"] == runs[arm]["learning_rate"]
        assert runs[arm]["test_accuracy"] == tried[choice["chosen"]]["test_accuracy"]
    assert "peak rate" in stdout and "chosen on validation" in stdout
    # 16 labels in batches of 8: 2 steps an epoch, --min-steps 4 gives 2 epochs.
    assert {(run["epochs"], run["steps"]) for run in runs.values()} == {(2, 4)}
    assert all(1 <= run["best_epoch"] <= 2 and run["train_s"] > 0 for run in runs.values())
    # The supervised arm has no consistency term; the consistency arm has one, on every
    # unlabelled question.
    assert runs["supervised"]["consistency_loss"] == runs["supervised"]["confident_share"] == 0
    assert runs["both"]["consistency_loss"] > 0 and runs["both"]["confident_share"] == 1.0
    assert report["settings"]["temperature"] == 0.85  # UDA's, the default
    assert report["settings"]["confidence_threshold"] == -1.0
    from benchmarks.reports import lab25_consistency

    page = lab25_consistency.render(report)
    assert page.count("| 16 |") == 2 and "+ consistency (both)" in page
    assert lab25_consistency.headline(report).startswith("TREC-6 at 16 labels")


@pytest.mark.slow
@pytest.mark.parametrize(
    "arguments, expected",
    [
        (["--perturbations", "mask,dropout"], "--perturbations must list mask, replace"),
        (["--seeds", "0"], "--seeds must be >= 1"),
        (["--labels", "0"], "--labels"),
        (["--mask-rate", "0.7", "--replace-rate", "0.5"], "--mask-rate + --replace-rate"),
        (["--temperature", "0"], "--temperature must be > 0"),
        (["--confidence-threshold", "1"], "--confidence-threshold must be in [-1, 1)"),
    ],
)
def test_lab25_refuses_bad_settings(data_root, arguments, expected):
    result = _run(arguments, data_root, timeout=300)
    assert result.returncode == 2 and expected in result.stderr, result.stderr[-2000:]
