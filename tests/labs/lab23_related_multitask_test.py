"""lab23_related_multitask as a user runs it: its whole story on a tiny start and budget."""

import json
from pathlib import Path

import pytest

from tests.labs.lab_process import run_lab

ROOT = Path(__file__).resolve().parents[2]
LAB = "labs/lab23_related_multitask.py"
ROWS = ("rte_alone", "mrpc_alone", "joint_proportional", "joint_temperature", "joint_shuffled_mrpc")


def _run(arguments, data_root, timeout=600):
    return run_lab(LAB, arguments, data_root, timeout)


@pytest.mark.slow
def test_lab23_runs_its_story_and_records_it(tmp_path, data_root, tiny_models):
    record = tmp_path / "lab23.json"
    result = _run(
        [
            "--model",
            str(tiny_models[1]),
            "--rte-examples",
            "16",
            "--mrpc-examples",
            "48",
            "--eval-examples",
            "24",
            "--sequence-length",
            "16",
            "--batch-size",
            "8",
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
    # Batches of 8: RTE 2 a epoch, MRPC 6; a joint run makes their sum.
    plans = report["plans"]
    assert set(plans) == {"joint_proportional", "joint_temperature", "joint_shuffled_mrpc"}
    # The control mixes exactly as proportional does: only MRPC's labels differ.
    assert plans["joint_shuffled_mrpc"] == plans["joint_proportional"]
    assert plans["joint_proportional"]["steps"] == plans["joint_temperature"]["steps"] == 8
    assert plans["joint_proportional"]["updates"] == {"rte": 2, "mrpc": 6}
    assert plans["joint_proportional"]["probability"] == {"rte": 0.25, "mrpc": 0.75}
    # T = 2: 2^(1/2) / (2^(1/2) + 6^(1/2)) of the steps go to RTE, more than proportional's.
    temperature = plans["joint_temperature"]["probability"]
    assert temperature["rte"] == pytest.approx(2**0.5 / (2**0.5 + 6**0.5), abs=1e-4)
    assert sum(plans["joint_temperature"]["updates"].values()) == pytest.approx(8)
    # The technique's cell: the first steps' tasks, each step one task's batch.
    draws = [line for line in stdout.splitlines() if "first 8 steps:" in line]
    assert len(draws) == 3 and all(set(line.split(": ")[-1]) <= {"R", "M"} for line in draws)
    assert draws[0].split(": ")[-1].count("R") == 2  # proportional: every batch once
    tasks = report["tasks"]
    assert tasks["rte"]["train_examples"] == 16 and tasks["mrpc"]["train_examples"] == 48
    assert tasks["rte"]["test_examples"] == tasks["mrpc"]["test_examples"] == 24
    assert 0.5 <= tasks["rte"]["majority_accuracy"] <= 1.0 and 0 < tasks["mrpc"]["majority_f1"]
    rows = report["rows"]
    assert list(rows) == list(ROWS)
    assert set(rows["rte_alone"]) == {"rte"} and set(rows["mrpc_alone"]) == {"mrpc"}
    assert set(rows["joint_shuffled_mrpc"]) == {"rte"}  # the control reports RTE only
    for row in ("joint_proportional", "joint_temperature"):
        assert set(rows[row]) == {"rte", "mrpc"}
        assert set(rows[row]["mrpc"]) == {"accuracy", "f1", "runs_at_majority"}
        for task, summary in rows[row].items():
            for metric in ("accuracy", "f1") if task == "mrpc" else ("accuracy",):
                entry, alone = summary[metric], rows[f"{task}_alone"][task][metric]
                assert len(entry["runs"]) == 1 and 0.0 <= entry["mean"] <= 1.0
                difference = entry["vs_alone"]  # one seed: no spread, so no verdict
                assert difference["n"] == 1 and difference["verdict"] == "no difference"
                assert difference["mean"] == pytest.approx(entry["runs"][0] - alone["runs"][0])
    assert "vs_alone" not in rows["rte_alone"]["rte"]["accuracy"]
    # The claims' RTE contrasts, in the lab's own output: with MRPC vs with MRPC shuffled, and
    # temperature vs proportional mixing, each paired by seed.
    contrasts = report["rte_contrasts"]
    assert list(contrasts) == [
        "joint_proportional − joint_shuffled_mrpc",
        "joint_temperature − joint_proportional",
    ]
    control = contrasts["joint_proportional − joint_shuffled_mrpc"]
    assert control["mean"] == pytest.approx(
        rows["joint_proportional"]["rte"]["accuracy"]["runs"][0]
        - rows["joint_shuffled_mrpc"]["rte"]["accuracy"]["runs"][0]
    )
    assert "RTE accuracy, joint_temperature − joint_proportional (points" in stdout
    assert len(report["runs"]) == 5 and {run["row"] for run in report["runs"]} == set(ROWS)
    # Each row's rate: both tried at the seed, the better on validation kept; the validation
    # score is the mean over the tasks the row reports (RTE alone for the control).
    for row, choice in report["rate_choices"].items():
        tried = {r["learning_rate"]: r for r in choice["tried"]}
        assert set(tried) == {1e-3, 3e-3}
        best = max(tried.values(), key=lambda r: r["validation_accuracy"])
        run = next(r for r in report["runs"] if r["row"] == row)
        assert run["learning_rate"] == choice["chosen"] == best["learning_rate"]
        # Beside the validation score, each tried rate keeps the test scores of the row's tasks.
        reported = set(report["rows"][row])
        assert set(tried[choice["chosen"]]) == {"learning_rate", "validation_accuracy"} | reported
    assert report["validation_examples"] == {"rte": 24, "mrpc": 24}
    assert "joint_temperature: peak rate" in stdout
    assert "majority class accuracy" in stdout
    from benchmarks.reports import lab23_related_multitask

    page = lab23_related_multitask.render(report)
    assert page.count("| joint_temperature |") == 3  # RTE accuracy, MRPC accuracy and F1
    assert lab23_related_multitask.headline(report).startswith("RTE with MRPC")


@pytest.mark.slow
@pytest.mark.parametrize(
    "arguments, expected",
    [
        (["--seeds", "0"], "--seeds must be >= 1"),
        (["--rte-examples", "-1"], "--rte-examples must be >= 0"),
        (["--temperature", "0"], "--temperature must be > 0"),
        (["--learning-rate", "0"], "--learning-rate must be > 0"),
    ],
)
def test_lab23_refuses_bad_settings(data_root, arguments, expected):
    result = _run(arguments, data_root, timeout=300)
    assert result.returncode == 2 and expected in result.stderr, result.stderr[-2000:]
