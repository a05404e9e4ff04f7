"""benchmarks/pair_stability.py: its settings, its row summary, and a tiny run end to end."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import pair_stability

ROOT = Path(__file__).resolve().parents[2]


def test_each_setting_changes_only_its_remedy():
    args = pair_stability.parse_args(["--pooling", "cls"])
    assert args.settings == list(pair_stability.SETTINGS)
    default = pair_stability.setting("default", args)
    # lab12's settings: its rate is MiniLM-L6's full fine-tuning rate chosen on validation.
    from kbert.train.adaptation_comparison import START_LEARNING_RATES
    from kbert.train.chosen_on_validation import chosen_rates

    chosen = chosen_rates("minilm_l6", START_LEARNING_RATES["minilm_l6"]).value["full"]
    assert default == {"learning_rate": chosen, "warmup_fraction": 0.1, "epochs": 4}
    assert pair_stability.setting("small_rate", args) == {**default, "learning_rate": 2e-5}
    assert pair_stability.setting("more_epochs", args) == {**default, "epochs": 8}
    assert pair_stability.setting("both", args) == {
        "learning_rate": 2e-5,
        "warmup_fraction": 0.1,
        "epochs": 8,
    }


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--settings", "both"], "--settings must list default first"),
        (["--settings", "default,faster"], "--settings must list default first"),
        (["--settings", "default,both,both"], "--settings must list default first"),
        (["--seeds", "0"], "--seeds must be >= 1; received 0"),
        (["--more-epochs", "0"], "--more-epochs must be >= 1"),
        (["--small-learning-rate", "0"], "--small-learning-rate must be > 0"),
        (["--warmup-fraction", "1.5"], "--warmup-fraction must be in [0, 1]"),
        (["--max-eval-examples", "0"], "--max-eval-examples must be >= 1"),
    ],
)
def test_bad_flags_are_named(argv, message, capsys):
    with pytest.raises(SystemExit):
        pair_stability.parse_args([*argv, "--pooling", "cls"])
    assert message in capsys.readouterr().err


def test_a_row_pairs_each_seed_with_the_default_and_counts_majority_runs():
    runs = [
        {"val_accuracy": 0.6, "test_accuracy": 0.62, "at_majority": False, "train_s": 1.0},
        {"val_accuracy": 0.5, "test_accuracy": 0.53, "at_majority": True, "train_s": 2.0},
    ]
    row = pair_stability.summarize(runs, baseline=[0.60, 0.53])
    assert row["test_mean"] == pytest.approx(0.575) and row["val_mean"] == pytest.approx(0.55)
    assert row["difference"]["mean"] == pytest.approx(0.01) and row["difference"]["n"] == 2
    assert row["runs_at_majority"] == 1 and row["seeds"] == 2 and row["train_s"] == 3.0
    assert pair_stability.summarize(runs, baseline=None)["difference"] is None


@pytest.mark.slow
def test_pair_stability_runs_every_setting_on_a_tiny_model(tmp_path, data_root, tiny_models):
    record = tmp_path / "pair_stability.json"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.pair_stability",
            "--model",
            str(tiny_models[1]),
            "--seeds",
            "2",
            "--epochs",
            "1",
            "--more-epochs",
            "2",
            "--max-train-examples",
            "32",
            "--max-eval-examples",
            "24",
            "--sequence-length",
            "32",
            "--run-dir",
            str(tmp_path),
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
    assert list(report["rows"]) == list(pair_stability.SETTINGS)
    assert (report["train"], report["validation"], report["test"]) == (32, 24, 24)
    for name, row in report["rows"].items():
        assert [run["seed"] for run in row["runs"]] == [0, 1]
        epochs = 2 if name in ("more_epochs", "both") else 1
        assert all(len(run["val_accuracy_per_epoch"]) == epochs for run in row["runs"])
        assert row["runs_at_majority"] == sum(run["at_majority"] for run in row["runs"])
        assert (row["difference"] is None) == (name == "default")
    assert report["chosen_on_validation"] == max(
        report["rows"], key=lambda name: report["rows"][name]["val_mean"]
    )
    assert json.loads(record.read_text())["results"] == report
    from benchmarks.reports import pair_stability as family

    assert family.render(report).count("\n| ") == 5  # the header row and four settings
