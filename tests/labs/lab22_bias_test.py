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


def test_the_fine_tuning_rate_defaults_to_minilms_chosen_full_fine_tuning_rate(lab):
    from kbert.train.adaptation_comparison import START_LEARNING_RATES
    from kbert.train.chosen_on_validation import chosen_rates

    args = lab["parse_arguments"](["--permutations", "10", "--dtype", "float32"])
    chosen = chosen_rates("minilm_l6", START_LEARNING_RATES["minilm_l6"]).value["full"]
    assert args.learning_rate == chosen  # the sibling labs' rate, not BERT-base's 5e-5
    # Each arm tries a third of it, itself and three times it; validation chooses.
    assert args.learning_rates == pytest.approx([chosen / 3, chosen, 3 * chosen])
    rate = lab["parse_arguments"](["--learning-rate", "1e-4", "--dtype", "float32"]).learning_rate
    assert rate == 1e-4


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


def test_both_arms_plan_the_plain_arms_steps_and_enough_passes_to_take_them(lab):
    plans = lab["arm_plans"]({"fine_tuned": 10, "cda": 13}, epochs=3)
    assert plans["fine_tuned"] == {"batches_per_epoch": 10, "epochs": 3, "steps": 30}
    assert plans["cda"] == {"batches_per_epoch": 13, "epochs": 3, "steps": 30}  # 39 ≥ 30
    plans = lab["arm_plans"]({"fine_tuned": 10, "cda": 25}, epochs=2)
    assert plans["cda"] == {"batches_per_epoch": 25, "epochs": 1, "steps": 20}
    assert [lab["epochs_to_cover"](steps, 10) for steps in (1, 10, 11, 20, 21)] == [1, 1, 2, 2, 3]


def test_the_pretrained_d_is_read_against_the_random_draws_spread(lab):
    control = {"effect_size": {"t": [0.2, 0.1], "u": [0.0, 0.5], "v": [0.1, None]}}
    pretrained = {name: {"effect_size": 0.5} for name in ("t", "u", "v")}
    compared = lab["against_random"](pretrained, control)
    assert compared["t"] == {"difference": 0.3, "control_sd": 0.1, "verdict": "better"}
    assert compared["u"]["verdict"] == "no difference"  # 0.5 inside the draws' sd of 0.5
    assert compared["v"]["verdict"] == "no difference"  # one draw: no spread to read against
    assert lab["against_random_cells"](compared)["t"] == "+0.300 (above)"


def test_cda_reads_a_bias_size_as_smaller_or_larger_and_a_signed_gap_by_its_verdict(lab):
    runs = {
        arm: [{"accuracy": 0.8, "gaps": {"g": {"gap": gap}}, "seat": {}} for gap in gaps]
        for arm, gaps in (("fine_tuned", (-0.10, -0.12, -0.11)), ("cda", (-0.01, -0.02, -0.015)))
    }
    summary = lab["summarize"](runs, [], ["g"])
    assert summary["abs gap g"]["difference"]["change"] == "smaller"
    # The signed gap rose (−0.11 → −0.015): "higher", not "larger" (the bias shrank).
    assert summary["gap g"]["difference"]["change"] == "higher"
    assert "change" not in summary["accuracy"]["difference"]


def test_the_random_control_is_summarized_as_mean_and_sd_over_its_draws(lab):
    draws = [
        {"t": {"effect_size": d, "p_value": 0.5}, "u": {"effect_size": -2 * d, "p_value": 0.5}}
        for d in (0.1, 0.3, 0.2)
    ]
    control = lab["control_summary"](range(4, 7), draws)
    assert control["seeds"] == [4, 5, 6] and control["draws"] is draws
    assert control["effect_size"]["t"] == pytest.approx([0.2, 0.1])
    assert control["effect_size"]["u"] == pytest.approx([-0.4, 0.2])
    assert lab["control_summary"]([0], draws[:1])["effect_size"]["t"] == [0.1, None]  # no spread
    cells = lab["control_cells"](control)
    assert cells["t"] == "+0.200 ± 0.100 (p 0.5000, 0.5000, 0.5000)"


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--seeds", "0"], "--seeds must be >= 1; received 0"),
        (["--control-draws", "0"], "--control-draws must be >= 1; received 0"),
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
        "2",
        "--control-draws",
        "3",
        "--learning-rates",
        "1e-3,3e-3",
        "--validation-examples",
        "64",
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
        "both arms take",
        "seed 0 fine_tuned lr 0.001: accuracy",
        "seed 1 cda",
        "SEAT after fine-tuning",
        "CDA − fine-tuned",
    ):
        assert line in result.stdout, line

    results = json.loads(record.read_text())["results"]
    assert results["train_examples"] == 300 and results["test_examples"] == 872
    assert results["augmented_examples"] > results["train_examples"]
    assert set(results["seat"]["pretrained"]) == {"sent-weat6", "sent-weat7"}
    assert results["tests"]["sent-weat6"] == ["MaleNames", "FemaleNames", "Career", "Family"]
    control = results["seat"]["random_weights"]  # --control-draws random encoders
    assert control["seeds"] == [0, 1, 2] and len(control["draws"]) == 3
    weat6 = [draw["sent-weat6"] for draw in control["draws"]]
    assert all(0.0 < d["p_value"] <= 1.0 and d["exact"] is False for d in weat6)
    assert weat6[0]["effect_size"] != weat6[1]["effect_size"]  # different weights, different d
    mean, sd = control["effect_size"]["sent-weat6"]
    assert mean == pytest.approx(np.mean([d["effect_size"] for d in weat6]))
    assert sd == pytest.approx(np.std([d["effect_size"] for d in weat6], ddof=1))
    against = results["seat"]["pretrained_vs_random"]["sent-weat6"]
    pretrained = results["seat"]["pretrained"]["sent-weat6"]["effect_size"]
    assert against["difference"] == pytest.approx(pretrained - mean, abs=1e-4)
    assert "pretrained − random" in result.stdout
    assert set(results["groups"]) == {"race_names", "gender_names", "gender_terms"}

    arms = results["settings"]["arms"]  # both arms: the plain arm's optimizer steps
    steps = arms["fine_tuned"]["steps"]
    assert steps == arms["fine_tuned"]["batches_per_epoch"] and arms["fine_tuned"]["epochs"] == 1
    assert arms["cda"]["steps"] == steps
    assert arms["cda"]["batches_per_epoch"] >= arms["fine_tuned"]["batches_per_epoch"]
    for method in ("fine_tuned", "cda"):
        runs = results["runs"][method]
        assert [run["seed"] for run in runs] == [0, 1]
        # The arm's rate: both tried at seed 0, the better on validation kept for both seeds.
        choice = results["rate_choices"][method]
        best = max(choice["tried"], key=lambda row: row["validation_accuracy"])
        assert [row["learning_rate"] for row in choice["tried"]] == [1e-3, 3e-3]
        assert [run["learning_rate"] for run in runs] == [best["learning_rate"]] * 2
        assert runs[0]["accuracy"] == best["accuracy"]
        assert [run["steps"] for run in runs] == [steps, steps]  # read from the optimizers
        for run in runs:
            terms = run["gaps"]["gender_terms"]
            assert terms["gap"] == pytest.approx(terms["p_first"] - terms["p_second"])
            # Its permutation null: 200 re-splits and the real one, so p is a multiple of 1/201.
            assert 0 < terms["p_value"] <= 1
            assert terms["p_value"] * 201 == pytest.approx(round(terms["p_value"] * 201))
    summary = results["summary"]
    assert summary["accuracy"]["difference"]["n"] == 2
    assert summary["accuracy"]["difference"]["sd"] is not None  # two seeds: a spread
    assert {"abs d sent-weat6", "abs d sent-weat7", "gap race_names"} <= set(summary)
