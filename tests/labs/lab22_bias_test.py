"""lab22_bias as a user runs it: a tiny encoder, a few SST-2 sentences, one epoch, one seed."""

import json
import os
import re
import runpy
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kbert.data.classification_tasks import Examples
from kbert.data.label_vocabulary import LabelVocabulary
from tests.labs.lab_cells_test import lab_functions

ROOT = Path(__file__).resolve().parents[2]


def test_the_hand_written_effect_size_equals_the_library_one(capsys):
    lab = lab_functions("lab22_bias", "effect_size_by_hand", "check_effect_size_by_hand")
    assert lab.check_effect_size_by_hand(seed=3) < 1e-9
    assert "effect size by hand" in capsys.readouterr().out


@pytest.fixture(scope="module")
def lab():
    """The lab's module namespace (its constants too), without running `main`."""
    return runpy.run_path(str(ROOT / "labs" / "lab22_bias.py"), run_name="lab22_bias")


def test_counterfactual_swaps_the_labs_gendered_words_both_ways(lab):
    swap = lab["counterfactual"]
    assert swap("He said she lost his hat; hero") == "She said he lost her hat; hero"
    assert swap("the actress and her brother") == "the actor and his sister"
    assert swap("mr. smith , a film") == "mrs. smith , a film"
    for male, female in lab["GENDER_PAIRS"]:  # every pair swaps; "her" goes back as "his"
        assert swap(male) == female
        assert swap(female) in {male, "his"}
    labels = np.array([1, 0], np.int32)
    examples = Examples(["he won", "a film"], None, labels, LabelVocabulary(("n", "p")), "t")
    augmented = lab["augment"](examples)
    assert augmented.texts == ["he won", "a film", "she won"]
    assert augmented.labels.tolist() == [1, 0, 1]


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--seeds", "0"], "--seeds must be >= 1; received 0"),
        (["--permutations", "-5"], "--permutations must be >= 1; received -5"),
        (["--seed", "-1"], "--seed must be >= 0; received -1"),
        (["--learning-rate", "0"], "--learning-rate must be > 0; received 0.0"),
        (["--sequence-length", "8"], "--sequence-length must be >= 16; received 8"),
        (["--pooling", "first"], "invalid choice: 'first'"),
        (["--tests", " , "], "--tests must name at least one SEAT test"),
        (["--tests", "sent-nope"], "--tests: .*sent-nope.jsonl: no such SEAT/WEAT test file"),
    ],
)
def test_a_bad_flag_exits_naming_it(lab, tmp_path, capsys, flags, message):
    with pytest.raises(SystemExit):
        lab["parse_arguments"]([*flags, "--data-dir", str(tmp_path), "--model", str(tmp_path)])
    assert re.search(message, capsys.readouterr().err), message


@pytest.mark.slow
def test_a_small_run_prints_the_story_and_records_it(tmp_path, data_root, tiny_models):
    _, bidirectional = tiny_models
    record = tmp_path / "lab22_bias.json"
    command = [
        sys.executable,
        "labs/lab22_bias.py",
        "--model",
        str(bidirectional),
        "--pooling",
        "mean",
        "--tests",
        "sent-weat6,sent-weat7",
        "--permutations",
        "200",
        "--max-train-examples",
        "300",
        "--epochs",
        "1",
        "--seeds",
        "1",
        "--sequence-length",
        "32",
        "--dtype",
        "float32",
        "--run-dir",
        str(tmp_path / "run"),
        "--record",
        str(record),
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "KBERT_DATA_DIR": str(data_root)}
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    for line in (
        "effect size by hand",
        "SEAT on",
        "random weights",
        "CDA:",
        "seed 0 fine_tuned accuracy",
        "seed 0 cda",
        "SEAT after fine-tuning",
        "CDA − fine-tuned",
    ):
        assert line in result.stdout, line

    results = json.loads(record.read_text())["results"]
    assert results["train_examples"] == 300 and results["test_examples"] == 872
    assert results["augmented_examples"] > results["train_examples"]
    assert set(results["seat"]["pretrained"]) == {"sent-weat6", "sent-weat7"}
    assert results["tests"]["sent-weat6"] == ["MaleNames", "FemaleNames", "Career", "Family"]
    weat6 = results["seat"]["random_weights"]["sent-weat6"]
    assert 0.0 < weat6["p_value"] <= 1.0 and weat6["exact"] is False
    assert set(results["groups"]) == {"race_names", "gender_names", "gender_terms"}
    for method in ("fine_tuned", "cda"):
        (run,) = results["runs"][method]
        assert 0.0 <= run["accuracy"] <= 1.0
        assert abs(run["gaps"]["gender_terms"]["gap"]) <= 1.0
    summary = results["summary"]
    assert summary["accuracy"]["difference"]["verdict"] == "no difference"  # one seed
    assert summary["abs gap gender_terms"]["difference"]["change"] == "no difference"
    assert {"abs d sent-weat6", "abs d sent-weat7", "gap race_names"} <= set(summary)
