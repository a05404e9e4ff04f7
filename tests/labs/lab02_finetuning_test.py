"""lab02, lab12_pairs and lab07_document_classification as a user runs them, on tiny budgets."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _env(data_root):
    return {**os.environ, "PYTHONPATH": str(ROOT), "KBERT_DATA_DIR": str(data_root)}


def _run(arguments, data_root):
    result = subprocess.run(
        [sys.executable, *arguments],
        cwd=ROOT,
        env=_env(data_root),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout, json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_lab02_both_parts(tmp_path, data_root, tiny_models):
    stdout, report = _run(
        [
            "labs/lab02_finetuning.py",
            "--lab01-model",
            str(tiny_models[0]),
            "--max-train-examples",
            "64",
            "--epochs",
            "1",
            "--sequence-length",
            "24",
            "--seeds",
            "2",
            "--rates",
            "1e-3",
            "--run-dir",
            str(tmp_path),
        ],
        data_root,
    )
    assert set(report) == {"i", "ii"}
    # Part (i) reads the causal model's closing classification token; part (ii) reads MiniLM-L6
    # the way it was trained to be read, by the mean its 1_Pooling/config.json names.
    assert report["i"]["pooling"] == "last" and report["ii"]["pooling"] == "mean"
    results = json.loads((tmp_path / "results.json").read_text())
    for part in ("i", "ii"):
        row = results[part]
        assert [run["seed"] for run in row["runs"]] == [0, 1]
        accuracies = [run["test_accuracy"] for run in row["runs"]]
        assert row["test_accuracy"] == round(sum(accuracies) / 2, 4)
        assert row["test_accuracy_sd"] is not None and report[part] == {
            "pooling": row["pooling"],
            "test_accuracy": row["test_accuracy"],
            "test_accuracy_sd": row["test_accuracy_sd"],
            "chosen_rate": results["chosen"][part]["learning_rate"],
            "chosen_test_accuracy": report[part]["chosen_test_accuracy"],
        }
        for seed in (0, 1):
            assert (
                tmp_path / f"part_{part}" / "lr_6.5e-05" / f"seed_{seed}" / "confusion_matrix.png"
            ).stat().st_size > 1000
        # The tutorial's rate joins --rates, first; validation picks the better mean final
        # validation accuracy (the tutorial's on a tie), and test is paired against it.
        tutorial, other = results["by_rate"][part]
        assert tutorial == row and tutorial["learning_rate"] == 6.5e-5
        assert other["learning_rate"] == 1e-3 and [r["seed"] for r in other["runs"]] == [0, 1]
        chosen = results["chosen"][part]
        best = other if other["final_val_accuracy"] > tutorial["final_val_accuracy"] else tutorial
        assert chosen["learning_rate"] == best["learning_rate"] == report[part]["chosen_rate"]
        assert chosen["at_edge"] is True and chosen["difference_to_tutorial"]["n"] == 2
        assert report[part]["chosen_test_accuracy"] == best["test_accuracy"]
        if best is tutorial:
            assert chosen["difference_to_tutorial"]["mean"] == 0
    assert results["rates"] == [6.5e-5, 1e-3]
    assert results["difference_chosen"]["n"] == 2
    difference = results["difference"]
    assert difference["n"] == 2 and difference["verdict"] in ("better", "worse", "no difference")
    assert 0.0 < results["majority_accuracy"] < 0.5  # TREC-6's test set: six classes
    assert "minilm_l6 − lab01 causal at the tutorial's rates, test accuracy paired" in stdout
    assert "minilm_l6 − lab01 causal at the chosen rates, test accuracy paired" in stdout
    assert "final val acc" in stdout


@pytest.mark.slow
def test_lab02_part_i_without_lab01_says_what_to_run(tmp_path, data_root):
    result = subprocess.run(
        [sys.executable, "labs/lab02_finetuning.py", "--lab01-model", str(tmp_path / "missing")],
        cwd=ROOT,
        env=_env(data_root),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 2 and "labs/lab01_pretraining.py" in result.stderr


@pytest.mark.slow
def test_lab_pairs(tmp_path, data_root, tiny_models):
    stdout, report = _run(
        [
            "labs/lab12_pairs.py",
            "--model",
            str(tiny_models[1]),
            "--max-train-examples",
            "48",
            "--seeds",
            "2",
            "--epochs",
            "1",
            "--sequence-length",
            "32",
            "--run-dir",
            str(tmp_path),
        ],
        data_root,
    )
    assert set(report) == {"rte", "mrpc"}
    assert report["rte"]["test"] == 277 and report["mrpc"]["test"] == 408
    assert report["mrpc"]["test_f1"] is not None and report["rte"]["test_f1"] is None
    # MRPC's F1 baseline: always "paraphrase", the dev set's majority class (share p), so its
    # F1 is 2p / (1 + p); RTE, scored by accuracy, has none.
    share = report["mrpc"]["majority_accuracy"]
    assert report["mrpc"]["majority_f1"] == pytest.approx(2 * share / (1 + share), abs=1e-4)
    assert report["rte"]["majority_f1"] is None
    assert "(always 'paraphrase': " in stdout
    assert [run["seed"] for run in report["rte"]["runs"]] == [0, 1]
    accuracies = [run["test_accuracy"] for run in report["rte"]["runs"]]
    assert report["rte"]["test_accuracy"] == pytest.approx(sum(accuracies) / 2, abs=1e-4)
    majority = report["rte"]["majority_accuracy"]
    # At the majority: all one class, or within a point of it (kbert.metrics.majority_class).
    assert report["rte"]["runs_at_majority"] == sum(
        run["at_majority"] for run in report["rte"]["runs"]
    )
    for run, accuracy in zip(report["rte"]["runs"], accuracies, strict=True):
        assert run["at_majority"] or accuracy > majority + 0.01
    assert "runs at the majority class:" in stdout


def _lab07(model, run_dir, seeds=2, min_steps=4, lm_examples=64, eval_examples=32):
    """lab07 on a tiny budget: 16 labelled SST-2 sentences, 32-token inputs, one least epoch."""
    return [
        "labs/lab07_document_classification.py",
        *("--model", str(model), "--task", "sst2", "--train-examples", "16"),
        *("--seeds", str(seeds), "--min-steps", str(min_steps)),
        *("--lm-examples", str(lm_examples), "--eval-examples", str(eval_examples)),
        *("--sequence-length", "32", "--epochs", "1", "--run-dir", str(run_dir)),
    ]


@pytest.mark.slow
@pytest.mark.parametrize("start", ["causal", "bidirectional"])
def test_lab_document_classification(tmp_path, data_root, tiny_models, start):
    # The stand-ins: causal for lab01's model (the lab's default: stage 1 is causal LM with its
    # pretrained head), bidirectional for MiniLM-L6 (`--model minilm_l6`: masked LM).
    model = tiny_models[0] if start == "causal" else tiny_models[1]
    stdout, report = _run(
        [*_lab07(model, tmp_path), "--record", str(tmp_path / "lab07.json")], data_root
    )
    # Both stage-2 schedules by default, the paper's first.
    assert report["schedules"] == ["ulmfit", "head_then_all"]
    assert set(report["results"]) == {"ulmfit", "head_then_all"}
    assert report["task"] == "sst2"
    # The rates left unset are the start's own.
    rate = 3e-4 if start == "causal" else 5e-5
    assert report["settings"]["learning_rate"] == report["settings"]["lm_learning_rate"] == rate
    assert report["settings"]["ulmfit_factor"] == 2.6
    language_model = report["language_model"]
    assert language_model["lm_loss_after"] > 0 and language_model["lm_examples"] > 0
    runs = json.loads((tmp_path / "results.json").read_text())["runs"]
    # SST-2's test subset: the share of its most frequent label, stated beside the rows.
    majority = report["majority_test_accuracy"]
    assert 0.5 <= majority < 1.0
    for schedule, by_size in report["results"].items():
        assert set(by_size) == {"16"}
        for size, rows in by_size.items():
            assert set(rows) == {"lm_fine_tuned", "plain"}
            for name, row in rows.items():
                assert row["seeds"] == 2 and row["test_sd"] is not None
                assert 0.0 <= row["test_mean"] <= 1.0 and 0.0 <= row["val_mean"] <= 1.0
                # At the majority: all one class (never above the majority's accuracy), or
                # within a point of it (kbert.metrics.majority_class); each row counts its runs.
                for run in runs[schedule][size][name]:
                    assert run["at_majority"] is (run["test_accuracy"] <= majority + 0.01), run
                assert row["runs_at_majority"] == sum(
                    run["at_majority"] for run in runs[schedule][size][name]
                )
            gain = 100 * (rows["lm_fine_tuned"]["test_mean"] - rows["plain"]["test_mean"])
            assert report["gain_points"][schedule][size] == pytest.approx(gain, abs=0.01)
            # The same gain seed by seed: each seed's two runs share their labelled subset.
            difference = report["difference"][schedule][size]
            assert difference["n"] == 2
            assert difference["mean"] == pytest.approx(gain / 100, abs=1e-3)
        assert f"stage 1's gain at 16 labels on the {schedule} schedule, seed by seed:" in stdout
    # Validation's choice: the schedule whose two starts' mean validation accuracy is higher.
    means = {
        schedule: sum(row["val_mean"] for row in by_size["16"].values()) / 2
        for schedule, by_size in report["results"].items()
    }
    assert means[report["preferred_schedule"]["16"]] == max(means.values())
    assert "train s  at majority" in stdout
    # 16 labels in batches of 16: 1 step per epoch, so 4 whole-model epochs (--min-steps 4)
    # after the head's. ULMFiT's: one group per epoch from the head down, every group from
    # epoch (groups − 1) on, then 4 whole-model epochs (the stand-ins' groups: embeddings, two
    # blocks, [a final norm,] the head; the pooler is not read by concat pooling).
    assert runs["head_then_all"]["16"]["plain"][0]["epochs"] == [1, 4]
    groups = 5 if start == "causal" else 4
    assert runs["ulmfit"]["16"]["plain"][0]["epochs"] == [groups - 1 + 4]
    assert json.loads((tmp_path / "lab07.json").read_text())["results"] == report
    from benchmarks.reports import lab07_document_classification

    page = lab07_document_classification.render(report)
    assert page.count("\n| 16 |") == 4 and "gain in test points" in page
    assert "| at majority |" in page
    for schedule, shown in (("ulmfit", "ULMFiT's"), ("head_then_all", "head, then all")):
        for name, label in (
            ("lm_fine_tuned", "LM fine-tuned, then classifier"),
            ("plain", "classifier only"),
        ):
            counted = f"{report['results'][schedule]['16'][name]['runs_at_majority']} of 2 |"
            assert any(
                line.startswith(f"| 16 | {shown} | {label} |") and line.endswith(counted)
                for line in page.splitlines()
            ), (schedule, name)
    assert "test points gained by labels, paired by seed: ULMFiT's schedule (the paper's) 16: " in (
        lab07_document_classification.headline(report)
    )


@pytest.mark.slow
def test_lab_document_classification_runs_one_schedule_and_refuses_unknown_ones(
    tmp_path, data_root, tiny_models
):
    arguments = ["labs/lab07_document_classification.py", "--model", str(tiny_models[0])]
    result = subprocess.run(
        [sys.executable, *arguments, "--schedules", "ulmfit,slanted"],
        cwd=ROOT,
        env=_env(data_root),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 2
    assert (
        "--schedules must name some of ('ulmfit', 'head_then_all'); received 'ulmfit,slanted'"
        in (result.stderr)
    )
    one_seed = _lab07(tiny_models[0], tmp_path, seeds=1, min_steps=2)
    _, report = _run([*one_seed, "--schedules", "head_then_all"], data_root)
    assert report["schedules"] == ["head_then_all"] and set(report["results"]) == {"head_then_all"}
    assert report["preferred_schedule"] == {"16": "head_then_all"}


@pytest.mark.slow
def test_lab_document_classification_without_lab01_says_what_to_run(tmp_path, data_root):
    missing = tmp_path / "lab01_causal"
    result = subprocess.run(
        [sys.executable, "labs/lab07_document_classification.py", "--model", str(missing)],
        cwd=ROOT,
        env=_env(data_root),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 2, result.stderr[-2000:]
    assert str(missing) in result.stderr and "labs/lab01_pretraining.py" in result.stderr
    assert "--model minilm_l6" in result.stderr


@pytest.mark.slow
def test_classification_benchmark_prints_both_sides(data_root):
    _, report = _run(
        [
            "-m",
            "benchmarks.classification",
            "--task",
            "trec",
            "--max-train-examples",
            "64",
            "--epochs",
            "1",
            "--verbose",
            "0",
        ],
        data_root,
    )
    for key in ("kbert_acc", "peer_acc", "kbert_examples_per_s", "peer_examples_per_s"):
        assert key in report
