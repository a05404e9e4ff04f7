"""lab11_contextual_embeddings as a user runs it, with fewer probe sentences and random pairs;
and its WSD scoring per set on a planted example, without an encoder."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import matplotlib.image
import pytest

ROOT = Path(__file__).resolve().parents[2]
LAB = ROOT / "labs" / "lab11_contextual_embeddings.py"
OTHERS = ("senseval2", "senseval3", "semeval2013", "semeval2015")  # ALL but the development set
FIGURES = ("senses_pca.png", "senses_tsne.png", "attention.png", "anisotropy.png", "probes.png")


@pytest.fixture(scope="module")
def lab11():
    spec = importlib.util.spec_from_file_location("lab11_contextual_embeddings", LAB)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_table_labels_all_minus_a_set_by_what_it_leaves_out(lab11):
    assert lab11.set_label("ALL_minus_semeval2007", ("senseval2", "senseval3")) == (
        "ALL-SE2-SE3-SE07"
    )
    assert lab11.set_label("ALL_minus_semeval2007", ()) == "ALL-SE07"
    assert lab11.set_label("ALL", ()) == "ALL"
    assert lab11.set_label("semeval2013", ()) == "semeval2013"


@pytest.mark.slow
def test_a_small_run_prints_the_tables_writes_the_figures_and_ends_with_json(
    tmp_path, data_root, minilm_dir
):
    run_dir = tmp_path / "run"
    record = tmp_path / "record.json"
    command = [
        sys.executable,
        "labs/lab11_contextual_embeddings.py",
        "--model",
        str(minilm_dir),
        "--max-train-sentences",
        "1500",
        "--gloss-weights",
        "0.5",
        "1",
        "--anisotropy-sentences",
        "100",
        "--pairs",
        "2000",
        "--probe-train-sentences",
        "150",
        "--probe-test-sentences",
        "60",
        "--probe-seeds",
        "2",
        "--run-dir",
        str(run_dir),
        "--record",
        str(record),
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "KBERT_DATA_DIR": str(data_root)}
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    for header in ("WSD: sense embeddings from semcor", "E[cos]", "Linear probes"):
        assert header in result.stdout

    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary == json.loads((run_dir / "results.json").read_text())
    recorded = json.loads(record.read_text())
    assert recorded["results"] == summary and "--max-train-sentences 1500" in recorded["command"]
    sets = {*OTHERS, "semeval2007", "ALL_minus_semeval2007", "ALL"}
    assert set(summary["wsd_f1"]) == sets and set(summary["mfs_f1"]) == sets
    # The MFS baseline is fixed by WordNet: Raganato et al. (2017) report 65.2 on ALL.
    assert abs(summary["mfs_f1"]["ALL"] - 65.2) < 0.05
    wsd = summary["wsd"]
    assert wsd["train_corpus"] == "semcor" and wsd["train_sentences"] == 1500
    assert wsd["development_set"] == "semeval2007"
    variants = {
        "corpus",
        "corpus, not z-scored",
        "corpus+neighbours",
        "corpus+glosses x0.5",
        "corpus+glosses x1",
        "corpus+neighbours+glosses x0.5",
        "corpus+neighbours+glosses x1",
    }
    assert variants <= set(wsd["sets"]["ALL"]) and wsd["variant"] in variants
    # ALL minus SemEval-2007 (the sets the choice never saw) pools the other four by instance:
    # every instance is answered, so its F1 is their instance-weighted F1 (up to rounding).
    held_out = wsd["sets"]["ALL_minus_semeval2007"]
    others = [wsd["sets"][name] for name in OTHERS]
    assert held_out["instances"] == sum(row["instances"] for row in others)
    assert (
        held_out["instances"]
        == wsd["sets"]["ALL"]["instances"] - (wsd["sets"]["semeval2007"]["instances"])
    )
    for variant in [*variants, "mfs_f1"]:
        weighted = sum(row[variant] * row["instances"] for row in others)
        assert held_out[variant] == pytest.approx(weighted / held_out["instances"], abs=0.011)
    assert summary["wsd_f1"]["ALL_minus_semeval2007"] == held_out[wsd["variant"]]
    assert (
        f"Not used for the choice: F1 {held_out[wsd['variant']]:.2f} on ALL-SE07" in result.stdout
    )
    # Neighbours give nearly every WordNet sense of a test lemma a vector (all of them with the
    # whole of SemCor; from 1,500 sentences a few lexicographer classes have no tagged sense).
    assert (
        0.99 * wsd["test_lemma_senses"] <= sum(wsd["coverage"].values()) <= wsd["test_lemma_senses"]
    )
    # 1,500 SemCor sentences already put the reported variant near MFS; a broken embedding,
    # z-scoring or sense lookup falls far below it (the full run is above it on every set).
    assert summary["wsd_f1"]["ALL"] > summary["mfs_f1"]["ALL"] - 4
    assert len(summary["expected_cosine"]) == 7  # embeddings + 6 blocks
    assert all(
        z < raw
        for z, raw in zip(summary["expected_cosine_z"], summary["expected_cosine"], strict=True)
    )
    probes = summary["probes"]
    assert len(probes["pos_pretrained"]) == 7
    assert max(probes["pos_pretrained"]) > max(probes["pos_random"][1:])
    # Two seeds: fresh probes and a fresh random control each, paired layer by layer.
    assert probes["seeds"] == 2 and len(probes["pos_random_runs"]) == 2
    assert probes["pos_random_runs"][0] != probes["pos_random_runs"][1]
    best = max(range(7), key=lambda layer: probes["pos_pretrained"][layer])
    difference = probes["pos_difference"][best]
    assert difference["n"] == 2 and difference["mean"] == pytest.approx(
        probes["pos_pretrained"][best] - probes["pos_random"][best], abs=0.02
    )
    assert all(sd is not None for sd in probes["ner_pretrained_sd"])
    for name in FIGURES:
        image = matplotlib.image.imread(run_dir / name)
        assert image.shape[0] > 200 and image.shape[1] > 200
