"""lab20_serving and lab08_tfhub_squad as a user runs them, on small budgets (slow tier)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(script, *arguments, data_root):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "KBERT_DATA_DIR": str(data_root)}
    result = subprocess.run(
        [sys.executable, script, *arguments],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1500,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout, json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_lab_serving_exports_reloads_and_times_every_signature(tmp_path, data_root, minilm_dir):
    export_dir = tmp_path / "saved_models"
    # An earlier version of the model is there: the lab exports the next one beside it.
    earlier = export_dir / "trec_minilm" / "1"
    earlier.mkdir(parents=True)
    (earlier / "earlier_export.txt").write_text("version 1")
    stdout, summary = _run(
        "labs/lab20_serving.py",
        "--model",
        str(minilm_dir),
        "--epochs",
        "1",
        "--max-train-examples",
        "200",
        "--tagger-sentences",
        "100",
        "--repeats",
        "1",
        "--export-dir",
        str(export_dir),
        data_root=data_root,
    )
    assert summary["max_abs_diff"] < 1e-5 and summary["dtype"] == "float32"
    assert summary["export_sentences_per_s"] > 0 and summary["keras_sentences_per_s"] > 0
    assert set(summary["timings"]) == {
        f"{side}_batch{size}" for side in ("export", "keras") for size in (1, 32)
    }
    assert summary["exports"] == {
        "classify": str(export_dir / "trec_minilm" / "2"),
        "tag": str(export_dir / "conll_minilm_tagger" / "1"),
    }
    assert [path.name for path in earlier.iterdir()] == ["earlier_export.txt"]
    assert (earlier / "earlier_export.txt").read_text() == "version 1"
    for path in summary["exports"].values():
        assert (Path(path) / "saved_model.pb").is_file()
        assert (Path(path) / "assets" / "vocab.txt").is_file()
    assert 'name: "trec_minilm"' in (export_dir / "models.config").read_text()
    for signature in ("classify:", "embed:", "tag:"):
        assert signature in stdout


@pytest.mark.slow
def test_lab_serving_in_bfloat16_through_xla_measures_both_exports_of_one_classifier(
    tmp_path, data_root, minilm_dir
):
    from kbert.export import read_export_settings

    export_dir = tmp_path / "saved_models"
    stdout, summary = _run(
        "labs/lab20_serving.py",
        "--model",
        str(minilm_dir),
        "--task",
        "sst2",
        "--dtype",
        "bfloat16",
        "--epochs",
        "1",
        "--max-train-examples",
        "64",
        "--skip-tagger",
        "--xla-rows",
        "1",
        "--repeats",
        "1",
        "--export-dir",
        str(export_dir),
        data_root=data_root,
    )
    assert summary["dtype"] == "bfloat16" and summary["task"] == "sst2"
    # Both exports send one-text batches through XLA and were warmed up as TF Serving would.
    assert summary["xla_rows"] == 1
    for kind in ("classify", "classify_float32"):
        assert f"{kind}: ran 8 warm-up requests (XLA for 1-1 texts)" in stdout
    assert summary["exports"] == {
        "classify": str(export_dir / "sst2_minilm" / "1"),
        "classify_float32": str(export_dir / "sst2_minilm_float32" / "1"),
    }
    for kind, dtype in (("classify", "bfloat16"), ("classify_float32", "float32")):
        assert read_export_settings(summary["exports"][kind])["dtype"] == dtype
    comparison = summary["dtype_comparison"]
    float32, bfloat16 = comparison["float32_accuracy"], comparison["bfloat16_accuracy"]
    assert 0 <= float32 <= 1 and 0 <= bfloat16 <= 1
    assert comparison["accuracy_difference"] == pytest.approx(bfloat16 - float32, abs=1e-12)
    assert bfloat16 == pytest.approx(summary["test_accuracy"], abs=5e-5)
    # Accuracy can only move on texts whose label moved.
    agreement = comparison["label_agreement"]
    assert 0 <= agreement <= 1
    assert abs(comparison["accuracy_difference"]) <= 1 - agreement + 1e-9
    assert 0 <= comparison["max_abs_probability_difference"] <= 1
    assert comparison["evaluation"] == "SST-2 GLUE dev" and comparison["examples"] > 0
    for dtype in ("float32", "bfloat16"):
        timings = comparison[f"{dtype}_timings"]
        assert set(timings) == {"batch1", "batch32"}
        assert all(row["sentences_per_s"] > 0 for row in timings.values())
    # The bfloat16 export's rows are the ones the lab's timing table holds.
    assert comparison["bfloat16_timings"]["batch32"] == summary["timings"]["export_batch32"]
    assert "bfloat16 - float32 accuracy" in stdout
    assert "exported `classify` (float32)" in stdout


@pytest.mark.slow
def test_lab_tfhub_squad_fine_tunes_through_the_hub_path_and_exports(
    tmp_path, data_root, minilm_dir
):
    stdout, summary = _run(
        "labs/lab08_tfhub_squad.py",
        "--model",
        str(minilm_dir),
        "--max-train-examples",
        "64",
        "--max-eval-examples",
        "16",
        "--sequence-length",
        "192",
        "--stride",
        "64",
        "--seeds",
        "2",
        "--run-dir",
        str(tmp_path / "run"),
        "--export-dir",
        str(tmp_path / "saved_models"),
        data_root=data_root,
    )
    assert summary["same_preprocessing"] and summary["hub_variables_updated"]
    assert summary["train_questions"] == 64 and summary["eval_questions"] == 16
    assert summary["export"] == str(tmp_path / "saved_models" / "squad_hub" / "1")
    assert (tmp_path / "run" / "hub" / "encoder" / "saved_model.pb").is_file()
    assert "Hub encoder vs kbert encoder, max |difference|: " in stdout
    difference = float(stdout.split("max |difference|: ")[1].split()[0])
    assert difference < 1e-4
    assert stdout.count("     -> ") == 3  # the export answered three questions
    # The same recipe on kbert's own encoder ran beside it, in the same process.
    own = summary["kbert_encoder"]
    assert 0 <= own["f1"] <= 100 and own["f1_sd"] is not None
    assert "kbert's own encoder: EM " in stdout
    # Two seeds of each, fresh weights each time, their mean and the paired difference.
    assert [run["seed"] for run in summary["runs"]] == [0, 1] == [r["seed"] for r in own["runs"]]
    assert summary["f1"] == pytest.approx(sum(run["f1"] for run in summary["runs"]) / 2, abs=0.01)
    assert summary["differences"]["f1"]["n"] == 2 and "Hub − kbert, paired by seed" in stdout
