"""`benchmarks/pretraining_recipe.py`: its arms as lab01 flags, the paired comparison, and one
tiny run end to end (slow)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import pretraining_recipe

ROOT = Path(__file__).resolve().parents[2]


def test_each_arm_is_the_recipe_with_its_changes():
    recipe = pretraining_recipe.arm_flags("recipe")
    assert recipe[:2] == ["--part", "masked"]
    assert recipe[recipe.index("--mask-rate") + 1] == "0.4"
    post = pretraining_recipe.arm_flags("post_ln")
    assert post[post.index("--layer-norm") + 1] == "post"
    assert len(post) == len(recipe)  # one value changed, nothing added
    untied = pretraining_recipe.arm_flags("electra_untied")
    assert "--no-tie-embeddings" in untied and "--tie-embeddings" not in untied
    assert "--tie-embeddings" in pretraining_recipe.arm_flags("electra")
    for name, (part, changes, reverts) in pretraining_recipe.ARMS.items():
        assert part in ("masked", "electra") and reverts
        assert set(changes) <= {
            *pretraining_recipe.RECIPE,
            *pretraining_recipe.ELECTRA_RECIPE,
            "--gradient-accumulation",
            "--warmup-steps",
        }, name


def _run(seed, validation, test, layer_norm="pre"):
    scores = {"learning_rate": 1e-3, "validation": validation, "test": test}
    return {"seed": seed, "steps": 10, "layer_norm": layer_norm, "transfer": scores}


def test_arms_are_paired_with_their_baseline_by_seed_and_judged_by_the_recipe_spread():
    runs = {
        "recipe": [_run(0, 0.60, 0.58), _run(1, 0.62, 0.60), _run(2, 0.61, 0.59)],
        "post_ln": [_run(0, 0.50, 0.49, layer_norm="post")],  # 10 points below seed 0
        "cosine": [_run(0, 0.605, 0.60)],  # within the spread
        "electra": [_run(0, 0.70, 0.66)],
        "electra_untied": [_run(0, 0.69, 0.60)],  # paired with electra, not the recipe
    }
    controls = {"pre": {"validation": 0.4, "test": 0.39}, "post": {"validation": 0.3, "test": 0.3}}
    table, spread = pretraining_recipe.summarize(runs, controls)
    assert spread == pytest.approx(0.01)
    assert table["post_ln"]["validation_minus_baseline"] == pytest.approx(-0.10)
    assert table["post_ln"]["verdict"] == "worse" and table["post_ln"]["control_test"] == 0.3
    assert table["cosine"]["verdict"] == "no difference"
    assert table["electra"]["verdict"] == "better"
    untied = table["electra_untied"]
    assert untied["baseline"] == "electra" and untied["test_minus_baseline"] == pytest.approx(-0.06)
    assert untied["verdict"] == "no difference"  # -1 point on validation, spread 1 point
    assert table["recipe"]["validation_sd"] == pytest.approx(0.01)
    assert table["recipe"]["learning_rates"] == [1e-3] * 3
    assert "verdict" not in table["recipe"]


def _bench(tmp_path, data_root, *extra):
    return subprocess.run(
        [sys.executable, "-m", "benchmarks.pretraining_recipe", *extra],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "KBERT_DATA_DIR": str(data_root)},
        capture_output=True,
        text=True,
        timeout=1500,
    )


def test_bad_arms_and_seeds_are_refused(tmp_path, data_root):
    result = _bench(tmp_path, data_root, "--arms", "electra_untied")
    assert result.returncode == 2 and "(missing electra, recipe)" in result.stderr
    result = _bench(tmp_path, data_root, "--arms", "recipe", "--seeds", "1")
    assert result.returncode == 2 and "--seeds must be >= 2" in result.stderr


@pytest.mark.slow
def test_a_tiny_ablation_pretrains_probes_and_resumes(tmp_path, data_root):
    tiny = "--num-layers 1 --hidden-dim 32 --num-heads 2 --block-length 32 --batch-size 8"
    flags = [
        *("--budget-minutes", "0.03", "--seeds", "2", "--arms", "recipe,post_ln,electra"),
        *("--max-documents", "4", "--vocabulary-size", "600", "--labelled", "30"),
        *("--fine-tune-seeds", "2", "--min-steps", "2", "--learning-rates", "1e-3", "3e-3"),
        *("--dtype", "float32", "--run-dir", str(tmp_path / "runs"), "--lab-flags", tiny),
    ]
    result = _bench(tmp_path, data_root, *flags, "--record", str(tmp_path / "record.json"))
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert set(summary["arms"]) == {"recipe", "post_ln", "electra"}
    recipe = summary["arms"]["recipe"]
    assert recipe["seeds"] == 2 and all(steps >= 1 for steps in recipe["steps"])
    assert 0 <= recipe["test"] <= 1 and recipe["objective"]["mlm_accuracy"] >= 0
    assert set(recipe["learning_rates"]) <= {1e-3, 3e-3}
    assert summary["arms"]["post_ln"]["verdict"] in ("no difference", "better", "worse")
    assert "rtd_accuracy" in summary["arms"]["electra"]["objective"]
    assert set(summary["random_controls"]) == {"pre", "post"}
    assert json.loads((tmp_path / "record.json").read_text())["results"]["budget_minutes"] == 0.03
    # Run again: every arm's finished run is reused, nothing pretrains.
    again = _bench(tmp_path, data_root, *flags)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "pretraining" not in again.stdout
    assert json.loads(again.stdout.strip().splitlines()[-1])["arms"]["recipe"] == recipe


def test_the_report_renders_each_arm_with_its_verdict():
    from benchmarks.reports import pretraining_recipe as page

    runs = {
        "recipe": [_run(0, 0.60, 0.58), _run(1, 0.62, 0.60)],
        "post_ln": [_run(0, 0.50, 0.49, layer_norm="post")],
    }
    controls = {"pre": {"validation": 0.4, "test": 0.39}, "post": {"validation": 0.3, "test": 0.3}}
    table, spread = pretraining_recipe.summarize(runs, controls)
    for row in table.values():
        row["objective"] = {"mlm_accuracy": 0.2}
    results = {
        "arms": table,
        "recipe_flags": pretraining_recipe.RECIPE,
        "recipe_validation_sd": round(spread, 4),
        "random_controls": controls,
        "majority_class_acc": 0.188,
        "budget_minutes": 6.0,
        "labelled": 300,
        "fine_tune_seeds": 3,
    }
    text = page.render(results)
    assert "| post_ln | BERT's post-LN | 10 | mlm_accuracy 0.200 | 0.500 | 0.490 |" in text
    assert "-9.0 vs recipe | worse |" in text and "--mask-rate 0.4" in text
    assert "pre-LN 0.400 / 0.390; post-LN 0.300 / 0.300" in text
    # The recipe (validation 0.61) against its random pre-LN control (0.40), judged like an arm.
    assert "on validation: +0.210, better." in text
    assert page.headline(results).endswith(
        "each choice set back: post_ln worse; against random weights: better"
    )
    even = {**results, "random_controls": {"pre": {"validation": 0.6, "test": 0.6}}}
    assert "on validation: +0.010, no difference." in page.render(even)
