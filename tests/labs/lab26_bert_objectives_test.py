"""lab26_bert_objectives as a user runs it: four tiny encoders pretrained, one task fine-tuned
under both readings of the encoder ([CLS] and mean pooling)."""

import json
from pathlib import Path

import pytest

from kbert.metrics.majority_class import NEAR_MAJORITY
from tests.labs.lab_process import run_lab

ROOT = Path(__file__).resolve().parents[2]
LAB = "labs/lab26_bert_objectives.py"
OBJECTIVES = ["masked", "masked+nsp", "masked+sop", "span+sbo"]
POOLINGS = ["cls", "mean"]  # the default: the sources' reading and one that treats all alike


def _run(arguments, data_root, timeout=900):
    return run_lab(LAB, arguments, data_root, timeout)


@pytest.mark.slow
def test_lab26_pretrains_each_objective_and_records_the_comparison(tmp_path, data_root):
    record = tmp_path / "lab26.json"
    # WikiText-2's short articles tokenize in a moment (the books take minutes); NSP needs two
    # held-out documents, so 8 training articles (a quarter held out).
    result = _run(
        [
            *("--corpus", "wikitext2", "--max-documents", "8", "--vocabulary-size", "600"),
            *("--num-layers", "1", "--hidden-dim", "32", "--num-heads", "2"),
            *("--block-length", "32", "--sequence-length", "32", "--batch-size", "8"),
            *("--steps", "4", "--warmup-steps", "1", "--eval-batches", "2"),
            *("--tasks", "trec", "--train-examples", "32", "--eval-examples", "40"),
            *("--epochs", "1", "--seeds", "1", "--pretraining-seeds", "1"),
            *("--learning-rates", "1e-3"),  # one rate: no choice (the other test chooses)
            *("--run-dir", str(tmp_path), "--record", str(record)),
        ],
        data_root,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    stdout = result.stdout
    report = json.loads(stdout.strip().splitlines()[-1])
    assert json.loads(record.read_text())["results"] == report
    # The technique's cell: each objective's batch, with its pair label or its spans.
    assert stdout.count("MLM targets at") == 4
    assert "label 0 (random B)" in stdout or "label 1 (B follows A)" in stdout
    assert "label 0 (swapped)" in stdout or "label 1 (in order)" in stdout
    assert "spans (boundary positions s-1, e+1" in stdout
    intrinsic = report["pretraining"]["intrinsic"]
    assert list(intrinsic) == OBJECTIVES
    for objective, row in intrinsic.items():
        assert 0 < row["mlm_loss"] < 20 and 0 <= row["mlm_accuracy"] <= 1
        heads = {key for key in row if key.endswith("_accuracy")} - {"mlm_accuracy"}
        expected = {"masked": set(), "masked+nsp": {"nsp_accuracy"}}.get(
            objective, {"sop_accuracy"} if objective == "masked+sop" else {"sbo_accuracy"}
        )
        assert heads == expected, (objective, row)
    # Four encoders, each its own pretraining: their held-out MLM losses are not all one number.
    assert len({row["mlm_loss"] for row in intrinsic.values()}) > 1
    trec = report["tasks"]["trec"]
    assert set(report["tasks"]) == {"trec"} and trec["test_examples"] == 40
    assert trec["train_examples"] == 32 and 0 < trec["majority_accuracy"] <= 1
    assert report["settings"]["poolings"] == POOLINGS and list(trec["poolings"]) == POOLINGS
    # lab01's recipe for every objective: pre-LN, no dropout while pretraining (BERT's 0.1 back
    # for fine-tuning), linear decay.
    recipe = {key: report["settings"][key] for key in ("layer_norm", "schedule")}
    assert recipe == {"layer_norm": "pre", "schedule": "linear"}
    assert report["settings"]["pretraining_dropout"] == 0.0
    assert report["settings"]["fine_tuning_dropout"] == 0.1
    # Every encoder fine-tuned under each pooling, with the same seed.
    assert [(run["pooling"], run["objective"]) for run in trec["runs"]] == [
        (pooling, objective) for pooling in POOLINGS for objective in OBJECTIVES
    ]
    assert {(run["pretraining_seed"], run["seed"]) for run in trec["runs"]} == {(0, 0)}
    # TREC-6's metric is accuracy: no F1 rows, no F1 of a positive class.
    assert "majority_f1" not in trec and "test_f1" not in trec["runs"][0]
    assert "f1_objectives" not in trec["poolings"]["mean"]
    for run in trec["runs"]:
        # 40 test examples: accuracy moves in steps of 0.025, so "within a point of the
        # majority" is "at or below it", and the count follows from the run's accuracy.
        expected = run["test_accuracy"] <= trec["majority_accuracy"] + NEAR_MAJORITY + 1e-9
        assert run["at_majority"] is expected, (run, trec["majority_accuracy"])
    for pooling in POOLINGS:
        rows = trec["poolings"][pooling]["objectives"]
        assert list(rows) == OBJECTIVES
        for objective, row in rows.items():
            own = [
                r for r in trec["runs"] if (r["pooling"], r["objective"]) == (pooling, objective)
            ]
            assert row["runs"] == [run["test_accuracy"] for run in own] and row["sd"] is None
            assert row["runs_at_majority"] == sum(run["at_majority"] for run in own)
            assert ("vs_masked" in row) == (objective != "masked")
            if objective != "masked":
                # Paired with MLM alone read the same way, not across readings.
                expected = row["runs"][0] - rows["masked"]["runs"][0]
                assert row["vs_masked"]["mean"] == pytest.approx(expected), (pooling, objective)
    # The printed table: one line per pooling and objective, with its runs at the majority.
    table = [line for line in stdout.splitlines() if line.startswith(("trec  cls ", "trec  mean "))]
    assert len(table) == 8, stdout[-3000:]
    landed = [
        row["runs_at_majority"]
        for p in POOLINGS
        for row in trec["poolings"][p]["objectives"].values()
    ]
    assert [line.rsplit("  ", 1)[1] for line in table] == [f"{k} of 1" for k in landed]
    from benchmarks.reports import lab26_bert_objectives

    page = lab26_bert_objectives.render(report)
    assert page.count("| trec |") == 8 and "| MLM + SOP (ALBERT) |" in page
    assert "Read at [CLS]" in page and "Read by mean pooling" in page
    headline = lab26_bert_objectives.headline(report)
    assert headline.startswith("TREC vs MLM alone, points at [CLS] / mean: masked+nsp ")
    total = sum(run["at_majority"] for run in trec["runs"])
    assert headline.endswith(f"({total} of 8 runs at the majority class)")


@pytest.mark.slow
def test_lab26_pairs_runs_by_pretraining_seed_and_reads_mrpc_by_f1_too(tmp_path, data_root):
    # The default seeds vary the pretraining (--pretraining-seeds), one fine-tuning seed each;
    # MRPC is read by accuracy and by F1 of "paraphrase" (GLUE's metric).
    result = _run(
        [
            *("--corpus", "wikitext2", "--max-documents", "8", "--vocabulary-size", "600"),
            *("--num-layers", "1", "--hidden-dim", "32", "--num-heads", "2"),
            *("--block-length", "32", "--sequence-length", "32", "--batch-size", "8"),
            *("--steps", "4", "--warmup-steps", "1", "--eval-batches", "2"),
            *("--objectives", "masked,masked+sop", "--pooling", "mean", "--tasks", "mrpc"),
            *("--train-examples", "32", "--eval-examples", "40", "--epochs", "1"),
            *("--pretraining-seeds", "2", "--learning-rates", "1e-3,3e-3"),
            *("--run-dir", str(tmp_path)),
        ],
        data_root,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["settings"]["seeds"] == 1 and report["settings"]["pretraining_seeds"] == 2
    assert [run["pretraining_seed"] for run in report["pretraining"]["runs"]["masked"]] == [0, 1]
    mrpc = report["tasks"]["mrpc"]
    assert [(r["pretraining_seed"], r["seed"], r["objective"]) for r in mrpc["runs"]] == [
        (0, 0, "masked"),
        (0, 0, "masked+sop"),
        (1, 0, "masked"),
        (1, 0, "masked+sop"),
    ]
    assert 0 < mrpc["majority_f1"] < 1  # always "paraphrase": its F1 on these 40 pairs
    f1 = mrpc["poolings"]["mean"]["f1_objectives"]
    for objective in ("masked", "masked+sop"):
        own = [r["test_f1"] for r in mrpc["runs"] if r["objective"] == objective]
        assert f1[objective]["runs"] == own and len(own) == 2
    # Paired by pretraining seed: run i of SOP with run i of MLM alone.
    expected = sum(
        a - b for a, b in zip(f1["masked+sop"]["runs"], f1["masked"]["runs"], strict=True)
    )
    assert f1["masked+sop"]["vs_masked"]["mean"] == pytest.approx(expected / 2)
    assert "mrpc F1" in result.stdout and "F1 of always the positive class" in result.stdout
    # Each objective's rate: both tried at the first pair of seeds, validation F1 choosing,
    # the second pretraining seed at the rate chosen.
    for objective in ("masked", "masked+sop"):
        choice = mrpc["rate_choices"]["mean"][objective]
        assert choice["chosen_on"] == "validation_f1"
        assert [row["learning_rate"] for row in choice["tried"]] == [1e-3, 3e-3]
        best = max(choice["tried"], key=lambda row: row["validation_f1"])
        rates = [r["learning_rate"] for r in mrpc["runs"] if r["objective"] == objective]
        assert rates == [best["learning_rate"]] * 2 == [choice["chosen"]] * 2
    assert mrpc["validation_examples"] == 40
    from benchmarks.reports import lab26_bert_objectives

    page = lab26_bert_objectives.render(report)
    assert "| mrpc F1 | MLM + SOP (ALBERT) |" in page
    assert f"always 'paraphrase' {mrpc['majority_f1']:.3f}" in page


@pytest.mark.slow
@pytest.mark.parametrize(
    "arguments, expected",
    [
        (["--objectives", "masked,electra"], "--objectives must list some of"),
        (["--tasks", "rte"], "--tasks must list mrpc and/or trec"),
        (["--pooling", "cls,max"], "--pooling must list some of cls, mean, pooler"),
        (["--pooling", "cls,cls"], "each once; received 'cls,cls'"),
        (["--seeds", "0"], "--seeds must be >= 1"),
        (["--sequence-length", "128"], "--sequence-length in [8, --block-length]"),
        (["--learning-rates", "0"], "--learning-rates: must be comma-separated numbers > 0"),
    ],
)
def test_lab26_refuses_bad_settings(data_root, arguments, expected):
    result = _run(arguments, data_root, timeout=300)
    assert result.returncode == 2 and expected in result.stderr, result.stderr[-2000:]
