"""lab24_slicing as a user runs it: its whole story on a tiny start, one seed, a few questions."""

import json
from pathlib import Path

import pytest

from benchmarks.reports import lab24_slicing
from tests.labs.lab_process import run_lab

ROOT = Path(__file__).resolve().parents[2]
LAB = "labs/lab24_slicing.py"


def _run(arguments, data_root, timeout=600):
    return run_lab(LAB, arguments, data_root, timeout)


@pytest.mark.slow
def test_lab24_runs_its_story_and_records_it(tmp_path, data_root, tiny_models):
    record = tmp_path / "lab24.json"
    result = _run(
        [
            "--model",
            str(tiny_models[1]),
            "--train-examples",
            "48",
            "--eval-examples",
            "120",
            "--min-slice-examples",
            "5",
            "--slices",
            "2",
            "--sequence-length",
            "16",
            "--epochs",
            "1",
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
    assert result.returncode == 0, result.stderr[-3000:]
    stdout = result.stdout
    report = json.loads(stdout.strip().splitlines()[-1])
    assert json.loads(record.read_text())["results"] == report
    # The slices a student reads: every rule, its sizes per split, one question it picks.
    table = report["slices"]
    assert {"question:what", "question:other", "length:short", "negation"} <= set(table)
    assert table["question:what"]["example"].lower().startswith("what")
    assert sum(table[f"question:{w}"]["train"] for w in ("what", "who", "how", "where")) <= 48
    assert report["test_examples"] == 120
    # The choice is made on validation: the chosen slices are the worst ranked gaps there.
    validation, chosen = report["validation"], report["chosen"]
    assert 1 <= len(chosen) <= 2
    ranked = sorted(
        (row["gap"], name)
        for name, row in validation["slices"].items()
        if row["examples"] >= 5 and row["gap"] is not None and row["gap"] < 0
    )
    assert chosen == [name for _, name in ranked[:2]]
    assert all(validation["slices"][name]["examples"] >= 5 for name in chosen)
    # The control trains on train's questions, the chosen slices' weighing more in its loss.
    share = report["slice_share"]
    assert 0 < share["train"] < share["upweighted"] <= 1
    summary = report["summary"]
    assert set(summary) == {"baseline", "slice_aware", "upweighted"}
    for model, measures in summary.items():
        assert "overall" in measures and set(measures) <= {"overall", *chosen}
        for row in measures.values():
            assert len(row["runs"]) == 1 and row["sd"] is None and 0 <= row["mean"] <= 1
            assert ("vs_baseline" in row) == (model != "baseline")
    difference = summary["slice_aware"]["overall"]["vs_baseline"]
    assert difference["mean"] == pytest.approx(
        summary["slice_aware"]["overall"]["mean"] - summary["baseline"]["overall"]["mean"],
        abs=1e-4,
    )
    assert "vs_upweighted" in summary["slice_aware"]["overall"]
    assert set(report["membership_accuracy"]) == set(chosen)
    # Each model's rate: both tried at the seed, the better overall on validation chosen; its
    # kept run is the chosen rate's (the table's single run is that rate's test score).
    for model, choice in report["rate_choices"].items():
        best = max(choice["tried"], key=lambda row: row["validation_accuracy"])
        assert [row["learning_rate"] for row in choice["tried"]] == [1e-3, 3e-3]
        assert choice["chosen"] == best["learning_rate"]
        assert summary[model]["overall"]["runs"] == [best["test_accuracy"]]
    assert "slice_aware: peak rate" in stdout
    assert all(0 <= value <= 1 for value in report["membership_accuracy"].values())
    assert "← chosen" in stdout and "membership heads agree" in stdout
    page = lab24_slicing.render(report)
    assert page.count("| plain fine-tuning |") == len(summary["baseline"])
    assert chosen[0] in page and lab24_slicing.headline(report)


@pytest.mark.slow
@pytest.mark.parametrize(
    "arguments, expected",
    [
        (["--seeds", "0"], "--seeds must be >= 1"),
        (["--slice-weight", "1"], "--slice-weight must be > 1"),
        (["--short-words", "9", "--long-words", "9"], "--short-words must be >= 1 and below"),
        (["--train-examples", "-1"], "--train-examples must be >= 0"),
        (["--learning-rate", "0"], "--learning-rate must be > 0"),
    ],
)
def test_lab24_refuses_bad_settings(data_root, arguments, expected):
    result = _run(arguments, data_root, timeout=300)
    assert result.returncode == 2 and expected in result.stderr, result.stderr[-2000:]
