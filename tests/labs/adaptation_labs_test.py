"""Labs 3–6, lab16_peft, lab17_distillation and the adaptation benchmarks as a user runs them.

Tiny encoders with MiniLM's real vocabulary (`tests/conftest.py`) stand in for lab01's
causal model and MiniLM-L6, on real TREC-6 (and SST-2) with small budgets: enough steps that
every unfreezing schedule fits, so each lab runs its whole story.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kbert.train.adaptation_comparison import FALLBACK_ADAPTERS
from kbert.train.chosen_on_validation import chosen_adapters

ROOT = Path(__file__).resolve().parents[2]
BUDGET = [
    "--train-examples",
    "192",
    "--batch-size",
    "16",
    "--epochs",
    "1",
    "--sequence-length",
    "24",
    "--eval-examples",
    "96",
]


def _run(arguments, data_root, run_dir, choices=None):
    """Runs a lab or benchmark; with `choices`, it reads the grids' records from that folder
    (an empty one: every start falls back, whatever `docs/results/` holds today)."""
    split = 2 if arguments[0] == "-m" else 1
    program, options = arguments[:split], arguments[split:]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "KBERT_DATA_DIR": str(data_root)}
    if choices is not None:
        choices.mkdir(parents=True, exist_ok=True)
        env["KBERT_CHOICES_DIR"] = str(choices)
    result = subprocess.run(
        # One seed unless the test asks for more (the labs' default is three).
        [sys.executable, *program, "--seeds", "1", *options, *BUDGET, "--run-dir", str(run_dir)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout, json.loads(result.stdout.strip().splitlines()[-1])


def _starts(tiny_models, bert=False):
    """`--starts`: lab01's stand-in, and the BERT one with `bert=True`. The labs run on
    lab01's alone (each fit costs a trace: `tests/conftest.py::tiny_models`): every method
    runs on both architectures in `tests/train/adaptation_recipes_test.py`, and the grid runs
    both starts in one table."""
    causal, other = tiny_models
    starts = f"lab01,{other}" if bert else "lab01"
    return ["--starts", starts, "--lab01-model", str(causal)]


def _is_share(accuracy, shares=192):
    """Whether `accuracy` (rounded to 4 places) is k / `shares`, not just any number in [0, 1]:
    a share of the 96 questions evaluated (`BUDGET`), averaged over at most two seeds."""
    count = accuracy * shares
    return 0.0 <= accuracy <= 1.0 and abs(count - round(count)) <= shares * 5e-5 + 1e-9


def _check_report(report, tiny_models, labels, baseline="full", seeds=1):
    """Every label has a lab01 row with its numbers; the BERT stand-in, not asked for, has none."""
    assert not any(key.startswith(f"{tiny_models[1]}/") for key in report)
    for label in labels:
        row = report[f"lab01/{label}"]
        # Each row beside the baseline carries its seed-paired difference to it.
        paired = {"difference"} if baseline in labels and label != baseline else set()
        assert set(row) == {"trainable_pct", "acc_mean", "acc_sd", "val_mean", "train_s"} | paired
        if paired:
            assert row["difference"]["n"] == seeds
            assert seeds > 1 or row["difference"]["verdict"] == "no difference"
        assert _is_share(row["acc_mean"]) and row["train_s"] > 0, row
        assert _is_share(row["val_mean"]), row


def test_is_share_tells_a_share_of_the_questions_from_any_number():
    assert _is_share(0.0) and _is_share(1.0) and _is_share(round(37 / 96, 4))
    assert _is_share(round((37 / 96 + 40 / 96) / 2, 4))  # two seeds' mean
    assert not _is_share(0.3) and not _is_share(1.5) and not _is_share(-0.0052)


@pytest.mark.slow
def test_lab03_adapters(tmp_path, data_root, tiny_models):
    stdout, report = _run(
        ["labs/lab03_adapters.py", *_starts(tiny_models)],
        data_root,
        tmp_path,
        choices=tmp_path / "no_grids",
    )
    # The Pfeiffer placement only with `--methods all`; without the grid's record, feature
    # extraction and the adapters run the fallbacks, and their rows say so.
    features, chosen = "feature_extraction (fallback: lab01)", "adapters (fallback: lab01)"
    labels = ["full", features, "adapters_tutorial", chosen]
    _check_report(report, tiny_models, labels)
    assert len(report) == 4
    assert "feature extraction's rate chosen on validation for lab01: no choice" in stdout
    # The tutorial's set trains the embeddings too; the fallback (Houlsby's) set does not.
    assert (
        report[f"lab01/{features}"]["trainable_pct"]
        < report[f"lab01/{chosen}"]["trainable_pct"]
        < report["lab01/adapters_tutorial"]["trainable_pct"]
        < report["lab01/full"]["trainable_pct"]
        == 100
    )
    # Reloaded adapter-only weights and a second task on the same base change no logit.
    lines = [line for line in stdout.splitlines() if "reloaded into a fresh base" in line]
    assert len(lines) == 1
    for line in lines:
        reloaded, after_second = map(float, re.findall(r"\d\.\d+e[+-]\d+", line))
        assert reloaded < 1e-4 and after_second < 1e-4, line


@pytest.mark.slow
def test_lab04_gradual_unfreezing(tmp_path, data_root, tiny_models):
    record = tmp_path / "lab04_gradual_unfreezing.json"
    stdout, report = _run(
        [
            "labs/lab04_gradual_unfreezing.py",
            *_starts(tiny_models),
            "--record",
            str(record),
        ],
        data_root,
        tmp_path,
    )
    labels = ["full", "top_2", "gradual_unfreezing", "chain_thaw"]
    ulmfit = ["full_ulmfit", "gradual_unfreezing_ulmfit", "chain_thaw_ulmfit"]
    _check_report(report, tiny_models, labels)
    # full_ulmfit is the ULMFiT rows' baseline and is paired with nothing itself.
    _check_report(report, tiny_models, ulmfit, baseline="full_ulmfit")
    assert "GradualUnfreezing from step    0" in stdout and "ChainThaw from step" in stdout
    assert re.search(r"gradual unfreezing ran \d+ stages; test accuracy 0\.\d{4}", stdout)
    # ULMFiT's plan: one group per epoch from the top, every group by the second-last epoch.
    plan = re.findall(r"ULMFiT's GradualUnfreezing from epoch +(\d+) of (\d+)", stdout)
    epochs = int(plan[0][1])
    assert [int(first) for first, _ in plan] == list(range(epochs - 1))
    # The ULMFiT rows are paired with full fine-tuning in that regime, the others with full;
    # full_ulmfit with neither (its epochs and rates both differ from full's).
    pairs = re.search(r"Δ, paired by seed: (.*)", stdout).group(1).split(", ")
    assert pairs == [
        "top_2 to full",
        "gradual_unfreezing to full",
        "chain_thaw to full",
        "gradual_unfreezing_ulmfit to full_ulmfit",
        "chain_thaw_ulmfit to full_ulmfit",
    ]
    # The recorded run renders as the same table the lab printed.
    from benchmarks.reports import adaptation

    results = json.loads(record.read_text())["results"]
    assert results["starts"]["lab01"] == str(tiny_models[0]) and results["seeds"] == 1
    page = adaptation.render(results)
    assert page.count("\n| lab01 |") == 7 and "| validation |" in page


@pytest.mark.slow
def test_lab05_discriminative_lr(tmp_path, data_root, tiny_models):
    stdout, report = _run(
        ["labs/lab05_discriminative_lr.py", *_starts(tiny_models)], data_root, tmp_path
    )
    # ULMFiT's factor, and the factor the grid chose for lab01 (1), at full's top rate.
    labels = ["full", "discriminative_lr", "discriminative_lr factor=1 (chosen: lab01)"]
    # L2-SP and EWC at the source's λ, and at the λ lab01's anchors study chose (0.001).
    anchored = ["l2_sp", "ewc", "l2_sp λ=0.001 (chosen: lab01)", "ewc λ=0.001 (chosen: lab01)"]
    _check_report(report, tiny_models, [*labels, "layerwise_decay", *anchored])
    assert "l2_sp λ for lab01: adaptation_grid.json (" in stdout
    assert "peak learning rate per layer group" in stdout
    # Full fine-tuning at the start's own chosen rate, where that is not the shared top rate,
    # on that start alone.
    own_rate = "lab01: full fine-tuning also at its own chosen rate" in stdout
    assert ("lab01/full_chosen_rate" in report) == own_rate


@pytest.mark.slow
def test_lab06_multitask(tmp_path, data_root, tiny_models):
    stdout, report = _run(
        ["labs/lab06_multitask.py", *_starts(tiny_models)],
        data_root,
        tmp_path,
        choices=tmp_path / "no_grids",
    )
    labels = ["full", "full_longer", "multitask_tutorial", "multitask_chosen (fallback: lab01)"]
    _check_report(report, tiny_models, labels)
    assert "trec_test_accuracy" in stdout
    # The tutorial's multitask is paired with single-task at its own (doubled) epochs.
    assert "multitask_tutorial to full_longer" in stdout and "full_longer to full" in stdout


@pytest.mark.slow
def test_lab_peft(tmp_path, data_root, tiny_models):
    stdout, report = _run(["labs/lab16_peft.py", *_starts(tiny_models)], data_root, tmp_path)
    labels = ["full", "lora", "prefix_tuning", "prompt_tuning"]
    _check_report(report, tiny_models, labels)
    assert report["lab01/lora"]["trainable_pct"] < 50
    assert stdout.count("same prediction on 100.0% of the test set") == 1


@pytest.mark.slow
def test_lab_distillation(tmp_path, data_root, tiny_models):
    _, report = _run(
        ["labs/lab17_distillation.py", *_starts(tiny_models), "--seeds", "2"],
        data_root,
        tmp_path / "lab",
        choices=tmp_path / "no_grids",
    )
    fallback = " (fallback: lab01)"
    students = ["distillation", f"distillation_chosen{fallback}"]
    students.append(f"distillation_from_ensemble{fallback}")
    _check_report(
        report,
        tiny_models,
        ["full", "student_labels_only", *students],
        baseline="student_labels_only",
        seeds=2,
    )
    assert report["lab01/ensemble"]["acc_sd"] is None  # one ensemble of the 2 seeds' models
    assert report["lab01/ensemble"]["trainable_pct"] == pytest.approx(200.0)
    # Every student is the same half-depth copy, distilled from one teacher or the ensemble.
    shares = {report[f"lab01/{label}"]["trainable_pct"] for label in students}
    assert len(shares) == 1 and shares.pop() < 100
    assert report[f"lab01/{students[-1]}"]["acc_sd"] is not None  # one per seed


def test_lab_distillation_refuses_bad_settings(tmp_path):
    for flag, value, message in (
        ("--temperature", "0", "--temperature must be a number > 0; received 0.0"),
        ("--soft-weight", "1.5", "--soft-weight must be a number in [0, 1]; received 1.5"),
    ):
        result = subprocess.run(
            [sys.executable, "labs/lab17_distillation.py", "--starts", "minilm_l6", flag, value],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert result.returncode == 2 and message in result.stderr, result.stderr[-2000:]


@pytest.mark.slow
def test_the_adaptation_benchmark_runs_seeds_in_children_and_resumes(
    tmp_path, data_root, tiny_models
):
    # The all-labs command: a subset of methods, each start's seeds in child processes (its
    # default), the ensembles in the parent; then a rerun that resumes from its file. That
    # other weights under the same start name are not reused is `reusable`'s unit test.
    arguments = [
        "benchmarks/adaptation.py",
        *_starts(tiny_models),
        "--seeds",
        "2",
        "--methods",
        "full,ensemble",
    ]
    stdout, report = _run(arguments, data_root, tmp_path / "bench")
    assert "| start | method | trainable params |" in stdout
    assert len(report) == 2 and report["lab01/full"]["acc_sd"] is not None
    assert report["lab01/ensemble"]["trainable_pct"] == pytest.approx(200.0)
    lines = (tmp_path / "bench" / "results.jsonl").read_text().splitlines()
    assert len(lines) == 3  # 2 seeds x 1 method + 1 ensemble
    _, again = _run(arguments, data_root, tmp_path / "bench")
    assert again == report
    assert len((tmp_path / "bench" / "results.jsonl").read_text().splitlines()) == 3


@pytest.mark.slow
def test_a_grid_s_children_train_at_a_choice_only_once_every_seed_has_made_it(
    tmp_path, data_root, tiny_models
):
    # With a process per seed, the child of seed 0 sees one seed's rates rows: the anchors
    # study, trained at the rate chosen on them, waits until the last seed's child (or the
    # parent's second round) sees every seed. So every anchors row comes after every rates row.
    arguments = ["-m", "benchmarks.adaptation_grid", *_starts(tiny_models)]
    arguments += ["--seeds", "2", "--process-per-seed", "--studies", "rates,anchors"]
    arguments += ["--full-rates", "1e-3", "--top-rates", "1e-3", "--factors", "1"]
    _, report = _run([*arguments, "--strengths", "0.1"], data_root, tmp_path / "grid")
    rows = [json.loads(line) for line in (tmp_path / "grid" / "results.jsonl").open()]
    studies = ["anchors" if row["method"] in ("l2_sp", "ewc") else "rates" for row in rows]
    assert studies == sorted(studies, key=["rates", "anchors"].index), studies
    assert studies.count("anchors") == 2 * 2  # L2-SP and EWC, each at 2 seeds, none twice
    assert report["chosen"]["lab01/full"]["test_sd"] is not None


@pytest.mark.slow
def test_the_adaptation_grid_chooses_on_validation_and_records(tmp_path, data_root, tiny_models):
    record = tmp_path / "adaptation_grid.json"
    arguments = [
        "-m",
        "benchmarks.adaptation_grid",
        *_starts(tiny_models, bert=True),
        "--seeds",
        "1",
        "--full-rates",
        "1e-3",
        "--top-rates",
        "1e-3",
        "--factors",
        "1,2.6",
        "--strengths",
        "0.1",
        "--studies",
        "rates,anchors,multitask,peft,adapters",
        "--adapter-sizes",
        "32",
        "--adapter-multipliers",
        "10",
        "--feature-rates",
        "1e-2",
        "--peft-methods",
        "lora",
        "--multitask-sizes",
        "16",
        "--multitask-rates",
        "1e-3,3e-3",
        "--lm-weights",
        "0.5",
        "--min-steps",
        "3",
        "--record",
        str(record),
    ]
    stdout, report = _run(arguments, data_root, tmp_path / "grid")
    bert = str(tiny_models[1])
    expected = {
        f"{start}/{method}"
        for start in ("lab01", bert)
        for method in (
            "full",
            "discriminative_lr",
            "l2_sp",
            "lora",
            "adapters tutorial",
            "adapters houlsby",
            "adapters adapters_only",
            "feature_extraction",
        )
    } | {"lab01/ewc", "lab01/full@16", "lab01/multitask@16"}
    # The tutorial's comparison: each family's rate chosen on validation.
    expected |= {"lab01/full 1 ep.", "lab01/full 2 ep.", "lab01/multitask clf 1.0 + LM 0.5, 2 ep."}
    assert set(report["chosen"]) == expected  # no EWC or multitask without a causal LM head
    for row in report["chosen"].values():
        assert _is_share(row["val"]) and _is_share(row["test"]), row
    results = json.loads(record.read_text())["results"]
    for start in ("lab01", bert):
        outcome = results["studies"]["rates"][start]
        rows = {row["label"]: row for row in outcome["rows"]}
        assert list(rows) == [
            "full lr=0.001",
            "discriminative_lr lr=0.001 factor=1",
            "discriminative_lr lr=0.001 factor=2.6",
        ]
        # The chosen discriminative setting is the one with the best validation accuracy.
        chosen = rows[outcome["chosen"]["discriminative_lr"]]
        assert chosen["val_mean"] == max(
            row["val_mean"] for row in rows.values() if row["method"] == "discriminative_lr"
        )
        # Each discriminative row paired with full fine-tuning at its top rate.
        assert rows["full lr=0.001"]["difference"] is None
        for label in list(rows)[1:]:
            assert rows[label]["difference"]["n"] == 1, label
        assert results["studies"]["anchors"][start]["learning_rate"] == 1e-3
        # The adapters study: full's grid (the rates study's runs, reused), then each set at
        # 10x the chosen rate and feature extraction, every row paired with the chosen full.
        adapters = results["studies"]["adapters"][start]
        assert adapters["baseline"] == "full lr=0.001" and adapters["full_rate"] == 1e-3
        assert adapters["source"] == "adapters tutorial d=32 ×10 lr=0.01"
        rows = {row["label"]: row for row in adapters["rows"]}
        assert list(rows) == [
            "full lr=0.001",
            "adapters tutorial d=32 ×10 lr=0.01",
            "adapters houlsby d=32 ×10 lr=0.01",
            "adapters adapters_only d=32 ×10 lr=0.01",
            "feature_extraction top lr=0.01",
        ]
        assert all(row["difference"]["n"] == 1 for row in list(rows.values())[1:])
        shares = [row["trainable_pct"] for row in list(rows.values())[1:4]]
        assert shares[0] > shares[1] > shares[2]  # tutorial > houlsby > adapters alone
        # What lab03 reads from this record (as the course's adapters grid writes it): the
        # best set's own options and the rate its row trained at.
        choices = tmp_path / "choices"
        choices.mkdir(exist_ok=True)
        (choices / "adaptation_grid_adapters.json").write_text(record.read_text())
        chosen = chosen_adapters(start, FALLBACK_ADAPTERS, results_dir=choices)
        assert chosen.recorded and chosen.value["learning_rate"] == pytest.approx(1e-2)
        assert chosen.value["bottleneck_dim"] == 32
        peft = results["studies"]["peft"][start]
        assert [row["label"] for row in peft["rows"]] == [
            "lora lr=0.001",
            "lora lr=0.003",
            "lora lr=0.01",
        ]
    multitask = results["studies"]["multitask"]["lab01"]["16"]
    assert multitask["epochs"] == 3  # 1 step per epoch
    # Each method at each rate, and each method's own rate chosen on validation.
    rows = {row["label"]: row for row in multitask["rows"]}
    assert list(rows) == [
        "full lr=0.001",
        "full lr=0.003",
        "multitask clf 1.0 + LM 0.5 lr=0.001",
        "multitask clf 1.0 + LM 0.5 lr=0.003",
        "multitask clf 1.0 + LM 0.5→0 lr=0.001",
        "multitask clf 1.0 + LM 0.5→0 lr=0.003",
    ]
    assert rows["multitask clf 1.0 + LM 0.5→0 lr=0.001"]["options"] == {
        "language_model_weight": 0.5,
        "language_model_final_weight": 0.0,
    }
    for method, label in multitask["chosen"].items():
        assert rows[label]["val_mean"] == max(
            row["val_mean"] for row in rows.values() if row["method"] == method
        )
    assert "validation accuracy (mean)" in stdout
    tutorial = results["studies"]["multitask_tutorial"]["lab01"]
    assert [row["label"] for row in tutorial["rows"]][:3] == [
        "full 1 ep. lr=0.001",
        "full 2 ep. lr=0.001",
        "multitask clf 1.0 + LM 0.5, 2 ep. lr=0.001",
    ]
    assert tutorial["rows"][2]["options"] == {"language_model_weight": 0.5, "epochs": 2}

    from benchmarks.reports import adaptation_grid

    page = adaptation_grid.render(results)
    assert "factor 2.6 (lowest" in page and "**" in page
    assert "(the tutorial's)" in page and "Δ to full at the same top rate" in page


@pytest.mark.slow
def test_the_distillation_grid_chooses_on_validation_distils_the_ensemble_and_resumes(
    tmp_path, data_root, tiny_models
):
    record = tmp_path / "distillation_grid.json"
    arguments = ["-m", "benchmarks.distillation_grid", *_starts(tiny_models), "--seeds", "2"]
    arguments += ["--temperatures", "1,4", "--soft-weights", "0.9", "--record", str(record)]
    stdout, headline = _run(arguments, data_root, tmp_path / "grid")
    results = json.loads(record.read_text())["results"]
    rows = {row["label"]: row for row in results["starts"]["lab01"]["rows"]}
    grid = ["distillation T=1 α=0.9", "distillation T=4 α=0.9", "distillation T=2 α=0.9"]
    chosen = results["starts"]["lab01"]["chosen"]
    chosen_label = f"distillation T={chosen['temperature']:g} α={chosen['soft_weight']:g}"
    from_ensemble = [
        f"distillation_from_ensemble T={chosen['temperature']:g} α={chosen['soft_weight']:g}",
        "distillation_from_ensemble T=2 α=0.9",  # the source's setting (T 2, α 0.9)
    ]
    from_ensemble = list(dict.fromkeys(from_ensemble))
    # The source's setting joins a grid that leaves it out; the ensemble rows come last.
    assert list(rows) == ["full", "student_labels_only", *grid, "ensemble", *from_ensemble]
    # Chosen on validation among the grid's rows, never on test; the source's row marked.
    assert rows[chosen_label]["val_mean"] == max(rows[label]["val_mean"] for label in grid)
    assert "chosen" in rows[chosen_label]["marks"]
    assert "source" in rows["distillation T=2 α=0.9"]["marks"]
    assert "chosen" in rows[from_ensemble[0]]["marks"]
    for label, row in rows.items():
        assert _is_share(row["acc_mean"]) and _is_share(row["val_mean"]), row
        # Every row with seeds is paired with the labels-only student's, seed by seed.
        paired = label not in ("student_labels_only", "ensemble")
        assert (row["difference"] is not None) == paired, label
        assert not paired or row["difference"]["n"] == 2
    assert rows["student_labels_only"]["role"] == "baseline"
    assert rows["student_labels_only"]["temperature"] is None
    # A student from the ensemble reports the ensemble's accuracy as its teacher's.
    for label in from_ensemble:
        assert rows[label]["role"] == "ensemble_student" and rows[label]["seeds"] == 2
        assert rows[label]["teacher_acc_mean"] == pytest.approx(rows["ensemble"]["acc_mean"])
    assert headline["lab01"]["chosen"] == chosen
    assert headline["lab01"]["labels_only"] == round(rows["student_labels_only"]["acc_mean"], 4)
    assert "validation accuracy (mean)" in stdout
    # 2 seeds × 5 grid variants, the ensemble, 2 seeds × its students: then a rerun resumes.
    results_file = tmp_path / "grid" / "results.jsonl"
    lines = len(results_file.read_text().splitlines())
    assert lines == 2 * 5 + 1 + 2 * len(from_ensemble)
    _, again = _run(arguments, data_root, tmp_path / "grid")
    assert again == headline and len(results_file.read_text().splitlines()) == lines

    from benchmarks.reports import distillation_grid

    page = distillation_grid.render(results)
    # Both marks show; one row carries both when validation chose the source's setting.
    assert "(source" in page and "**lab01**" in page
    assert "(chosen" in page or "(source, chosen)" in page


def test_the_distillation_grid_refuses_bad_grids(capsys):
    from benchmarks.distillation_grid import parse_arguments

    for arguments, message in (
        (["--temperatures", "0"], "argument --temperatures: must be comma-separated numbers > 0"),
        (["--soft-weights", "x"], "argument --soft-weights: must be comma-separated numbers > 0"),
        (["--soft-weights", "0.5,1.5"], "--soft-weights must be numbers in (0, 1]"),
        (["--methods", "full"], "--methods does not apply here"),
        (["--seeds", "0"], "--seeds must be a positive integer; received 0"),
    ):
        with pytest.raises(SystemExit) as exit_info:
            parse_arguments(arguments)
        assert exit_info.value.code == 2 and message in capsys.readouterr().err
    _, args = parse_arguments(["--temperatures", "1,3", "--soft-weights", "1"])
    assert args.temperatures == [1.0, 3.0] and args.soft_weights == [1.0]
    assert args.process_per_seed  # dozens of runs: each seed in a child process by default


@pytest.mark.slow
def test_the_anchor_strength_diagnosis_measures_the_weights_paths(tmp_path, data_root, tiny_models):
    record = tmp_path / "anchor_strength.json"
    arguments = ["--start", str(tiny_models[1]), "--strengths", "0.01,10", "--clipnorms", "1,none"]
    arguments += ["--train-examples", "64", "--eval-examples", "32", "--epochs", "2"]
    arguments += ["--batch-size", "16", "--sequence-length", "24", "--seeds", "2"]
    arguments += ["--record", str(record)]
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks.anchor_strength", *arguments],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "KBERT_DATA_DIR": str(data_root)},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    rows = json.loads(result.stdout.strip().splitlines()[-1])
    assert [(row["strength"], row["clipnorm"]) for row in rows] == [
        (0.01, 1.0),
        (0.01, None),
        (10.0, 1.0),
        (10.0, None),
        (None, 1.0),  # the control: the encoder frozen, nothing anchored
    ]
    *anchored, frozen = rows
    for row in rows:
        assert row["seeds"] == 2 and [run["seed"] for run in row["runs"]] == [0, 1]
        accuracies = [run["test_accuracy"] for run in row["runs"]]
        assert row["test_accuracy"] == pytest.approx(sum(accuracies) / 2)
        for run in row["runs"]:
            # Shares of the 32 questions evaluated (32 divides 192).
            assert _is_share(run["test_accuracy"]) and _is_share(run["validation_accuracy"]), run
            assert run["head_parameters"] > 0 and run["head_displacement_rms"] > 0
    assert frozen["encoder"] == "frozen" and frozen["anchored_parameters"] == 0
    assert frozen["displacement_rms"] == 0 and frozen["path_over_displacement"] is None
    assert frozen["final_penalty"] == 0 and "vs_frozen" not in frozen
    for row in anchored:
        assert row["encoder"] == "anchored" and row["vs_frozen"]["n"] == 2
        assert len(row["displacement_by_epoch"]) == 2 and row["displacement_rms"] > 0
        assert row["step_rms_last_epoch"] > 0 and row["final_penalty"] > 0
        differences = [
            mine["test_accuracy"] - control["test_accuracy"]
            for mine, control in zip(row["runs"], frozen["runs"], strict=True)
        ]
        assert row["vs_frozen"]["mean"] == pytest.approx(sum(differences) / 2)
        for run in row["runs"]:
            # The penalty is λ/2 · Σ (w − w₀)² over the same weights the path is measured on.
            squared_sum = run["anchored_parameters"] * run["displacement_rms"] ** 2
            assert run["final_penalty"] == pytest.approx(
                row["strength"] / 2 * squared_sum, rel=1e-3
            )
    # A start the grid never studied trains at the fallback rate, and the record says so.
    results = json.loads(record.read_text())["results"]
    assert results["learning_rate"] == 3e-4 and "fallback" in results["learning_rate_source"]

    from benchmarks.reports import anchor_strength

    page = anchor_strength.render(results)
    assert "| 10 | none |" in page and "path ÷ displacement" in page
    assert "| — (encoder frozen) | 1 |" in page and "head RMS change" in page
    assert "2 seeds from 0" in page
    # A λ that scores as the frozen control (paired difference inside its spread) is named.
    near = [row for row in anchored if row["vs_frozen"]["verdict"] == "no difference"]
    assert page.count("scores as the encoder-frozen control") == len(near)


@pytest.mark.slow
def test_the_unfreezing_regime_chooses_rates_pairs_with_full_and_resumes(
    tmp_path, data_root, tiny_models
):
    record = tmp_path / "unfreezing_regime.json"
    arguments = [sys.executable, "-m", "benchmarks.unfreezing_regime", *_starts(tiny_models)]
    arguments += ["--sizes", "16", "--rates", "1e-3,3e-3", "--seeds", "2", "--epochs", "1"]
    arguments += ["--eval-examples", "96", "--batch-size", "16", "--sequence-length", "24"]
    arguments += ["--run-dir", str(tmp_path / "runs"), "--record", str(record)]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "KBERT_DATA_DIR": str(data_root)}

    def run():
        result = subprocess.run(
            arguments, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200
        )
        assert result.returncode == 0, result.stderr[-3000:]
        return result, json.loads(result.stdout.strip().splitlines()[-1])

    result, report = run()
    assert "12 runs (1 start(s) × 1 sizes × 3 methods × 2 rates × 2 seeds)" in result.stderr
    methods = ("full", "gradual_unfreezing", "chain_thaw")
    assert set(report) == {f"lab01/{method}@16" for method in methods}
    results = json.loads(record.read_text())["results"]
    groups, epochs = (results["starts"]["lab01"][key] for key in ("layer_groups", "epochs"))
    assert epochs == groups + 1 > 1  # one epoch per layer group and one more, above --epochs 1
    for size in ("16",):
        outcome = results["studies"]["lab01"][size]
        assert outcome["epochs"] == epochs and outcome["train_examples"] == int(size)
        rows = {row["label"]: row for row in outcome["rows"]}
        assert len(rows) == 6
        for row in outcome["compared"]:
            # Each method's rate is the one with its best validation accuracy (not test).
            best = max(r["val_mean"] for r in rows.values() if r["method"] == row["method"])
            assert rows[row["chosen"]]["val_mean"] == best == row["val_mean"]
            assert _is_share(row["acc_mean"]) and row["seeds"] == 2
            if row["method"] == "full":
                assert row["difference"] is None
            else:
                assert row["difference"]["n"] == 2
    lines = (tmp_path / "runs" / "results.jsonl").read_text().splitlines()
    assert len(lines) == 12
    # A second call reuses every run.
    _, again = run()
    assert again == report
    assert len((tmp_path / "runs" / "results.jsonl").read_text().splitlines()) == 12

    from benchmarks.reports import unfreezing_regime

    page = unfreezing_regime.render(results)
    # One size: the compared row and one row per rate.
    assert page.count("| gradual_unfreezing |") == 1 + 2 and "Δ to full, paired" in page


def test_the_adaptation_grid_refuses_bad_grids(capsys):
    from benchmarks.adaptation_grid import parse_arguments

    for arguments, message in (
        (["--factors", "1,x"], "argument --factors: must be comma-separated numbers > 0"),
        (["--strengths", "0"], "argument --strengths: must be comma-separated numbers > 0"),
        (["--studies", "rates,nope"], "--studies must name some of"),
        (["--methods", "full"], "--methods does not apply here"),
        (["--multitask-sizes", "0"], "--multitask-sizes: must be comma-separated integers >= 1"),
        (["--record", "."], "must name a .json file to write; received '.'"),
        (["--min-steps", "0"], "--min-steps must be a positive integer; received 0"),
        (["--lm-weights", "0.5,0"], "--lm-weights: must be comma-separated numbers > 0"),
        (["--adapter-sizes", "0"], "--adapter-sizes: must be comma-separated integers >= 1"),
        (["--adapter-multipliers", "x"], "--adapter-multipliers: must be comma-separated numbers"),
        (["--feature-rates", "0"], "--feature-rates: must be comma-separated numbers > 0"),
    ):
        with pytest.raises(SystemExit) as exit_info:
            parse_arguments(arguments)
        assert exit_info.value.code == 2 and message in capsys.readouterr().err
    _, args = parse_arguments(["--factors", "1,1.3", "--studies", "rates"])
    assert args.factors == [1.0, 1.3] and args.studies == ["rates"]


ADAPTATION_LABS = [
    "lab03_adapters.py",
    "lab04_gradual_unfreezing.py",
    "lab05_discriminative_lr.py",
    "lab06_multitask.py",
    "lab16_peft.py",
    "lab17_distillation.py",
]


def test_labs_read_as_cells_over_public_recipes():
    for path in sorted((ROOT / "labs").glob("lab*.py")):
        assert "kbert.cli" not in path.read_text(), f"{path.name} imports kbert.cli"
    for name in ADAPTATION_LABS:
        source = (ROOT / "labs" / name).read_text()
        cells = [line for line in source.splitlines() if line.startswith("# %%")]
        assert len(cells) >= 3, name  # settings, the technique by hand, the comparison
        assert "def main" not in source and "recipes." in source, name
        # Methods are given as recipe functions, never as name strings.
        assert not re.search(r'\("\w+", "\w+", \{', source), name


def test_distillation_grid_rows_carry_roles_settings_teacher_accuracy_and_marks():
    from benchmarks.distillation_grid import (
        ensemble_variants,
        grid_settings,
        grid_variants,
        record_rows,
    )
    from kbert.train.adaptation_comparison import summarize

    settings = grid_settings([4.0], [0.9])
    assert settings == [(4.0, 0.9), (2.0, 0.9)]  # the source's setting joins the grid
    variants = grid_variants(settings) + ensemble_variants([(4.0, 0.9)])

    def row(label, method, accuracy, **extra):
        return {
            "label": label,
            "method": method,
            "start": "s",
            "seed": 0,
            "accuracy": accuracy,
            "validation_accuracy": accuracy,
            "trainable_params": 1,
            "trainable_pct": 50.0,
            "train_s": 1.0,
            **extra,
        }

    rows = [
        row("full", "full", 0.9),  # a teacher row has no teacher of its own
        row("student_labels_only", "distillation", 0.7, teacher_accuracy=0.9),
        row("distillation T=4 α=0.9", "distillation", 0.8, teacher_accuracy=0.9),
        row("distillation T=2 α=0.9", "distillation", 0.75, teacher_accuracy=0.9),
        {**row("ensemble", "ensemble", 0.95), "seed": None},
        row("distillation_from_ensemble T=4 α=0.9", "distillation", 0.85, teacher_accuracy=0.95),
    ]
    marks = {"distillation T=4 α=0.9": ["chosen"], "distillation T=2 α=0.9": ["source"]}
    out = record_rows(summarize(rows, baseline="student_labels_only"), rows, variants, marks)
    by_label = {each["label"]: each for each in out}
    assert [each["role"] for each in out] == [
        "teacher",
        "baseline",
        "grid",
        "grid",
        "ensemble",
        "ensemble_student",
    ]
    assert by_label["full"]["teacher_acc_mean"] is None
    assert by_label["distillation_from_ensemble T=4 α=0.9"]["teacher_acc_mean"] == 0.95
    assert by_label["student_labels_only"]["temperature"] is None
    assert by_label["distillation T=4 α=0.9"]["difference"]["mean"] == pytest.approx(0.1)
    assert by_label["distillation T=4 α=0.9"]["marks"] == ["chosen"]
    assert by_label["ensemble"]["difference"] is None and by_label["ensemble"]["marks"] == []


def test_a_fresh_grid_sets_earlier_rows_aside_once(tmp_path):
    # `--fresh` renames the file once, so the call's own studies still share their runs.
    from benchmarks.adaptation_grid import set_aside

    path = tmp_path / "results.jsonl"
    set_aside(path)  # nothing to set aside
    assert list(tmp_path.iterdir()) == []
    path.write_text('{"label": "full lr=0.001"}\n')
    set_aside(path)
    (kept,) = list(tmp_path.iterdir())
    assert not path.exists() and kept.name.startswith("results.") and kept.read_text()
