"""lab13_ner, lab14_qa and the token-task benchmark as a user runs them, on tiny budgets."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from kbert.checkpoints import load_hf_bert_tokenizer, save_pretrained
from kbert.models import Encoder

ROOT = Path(__file__).resolve().parents[2]


def _run(arguments, data_root, timeout=900):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "KBERT_DATA_DIR": str(data_root)}
    result = subprocess.run(
        [sys.executable, *arguments],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout, json.loads(result.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory, minilm_dir):
    """A tiny encoder with MiniLM's vocabulary, saved as a kbert directory (fast stand-in)."""
    tokenizer = load_hf_bert_tokenizer(minilm_dir)
    encoder = Encoder.from_preset(
        "tiny", vocabulary_size=tokenizer.vocabulary_size(), max_sequence_length=128
    )
    return save_pretrained(encoder, tokenizer, tmp_path_factory.mktemp("tiny") / "bert")


@pytest.mark.slow
def test_lab_ner_prints_one_table_for_the_three_methods(tmp_path, data_root, tiny_bert):
    stdout, report = _run(
        [
            "labs/lab13_ner.py",
            "--model",
            str(tiny_bert),
            "--max-train-sentences",
            "64",
            "--max-eval-sentences",
            "40",
            "--epochs",
            "1",
            "--seeds",
            "2",
            "--verbose",
            "0",
            "--run-dir",
            str(tmp_path),
        ],
        data_root,
    )
    assert set(report) == {"softmax", "crf", "span"}
    assert all(0.0 <= f1 <= 100.0 for f1 in report.values())
    assert "test F1" in stdout and "PER" in stdout and "micro" in stdout
    rows = json.loads((tmp_path / "results.json").read_text())
    assert [row["method"] for row in rows] == ["softmax", "crf", "span"]
    # The CRF decodes valid IOB2 paths only (bio_constraints): nothing is left to repair.
    assert rows[1]["repaired_tags"] == 0
    # Two seeds per method: the row is their mean, with the sd and the runs beside it, and
    # each method's seed-paired difference to the softmax tagger is printed.
    for row in rows:
        assert [run["seed"] for run in row["runs"]] == [0, 1]
        assert row["test_f1"] == pytest.approx(
            sum(run["test_f1"] for run in row["runs"]) / 2, abs=0.01
        )
        assert row["test_f1_sd"] is not None
    assert "crf − softmax, test F1" in stdout and "span − softmax, test F1" in stdout


@pytest.mark.slow
def test_lab_qa_trains_on_the_article_split_and_scores(tmp_path, data_root, tiny_bert):
    from benchmarks.reports import lab14_qa

    stdout, report = _run(
        [
            "labs/lab14_qa.py",
            "--model",
            str(tiny_bert),
            "--max-train-examples",
            "48",
            "--max-eval-examples",
            "24",
            "--epochs",
            "1",
            "--sequence-length",
            "128",
            "--stride",
            "32",
            "--verbose",
            "0",
            "--seed",
            "3",
            "--seeds",
            "2",
            "--learning-rates",
            "1e-3,3e-3",
            "--run-dir",
            str(tmp_path),
        ],
        data_root,
    )
    assert "dev-split" in stdout
    result = json.loads((tmp_path / "results.json").read_text())
    # The rate: the first seed at each, chosen by validation F1 (the first on a tie); the chosen
    # run is seed 3's, and seed 4 trains at its rate.
    rates = result["learning_rates"]
    assert [row["learning_rate"] for row in rates] == [1e-3, 3e-3]
    best = max(rates, key=lambda row: row["validation_f1"])
    assert result["learning_rate"] == best["learning_rate"]
    assert result["validation_articles"] == 4 and 0 < result["validation_questions"] <= 24
    # Two seeds from --seed on, each its own run; EM and F1 are their mean, the sd beside it.
    runs = result["runs"]
    assert result["seeds"] == 2 and [run["seed"] for run in runs] == [3, 4]
    assert [run["learning_rate"] for run in runs] == [best["learning_rate"]] * 2
    assert runs[0]["f1"] == best["test_f1"] and runs[0]["validation_f1"] == best["validation_f1"]
    assert "validation_f1" not in runs[1]  # the seeds after the choice are scored on test only
    assert "seed 3, lr 0.001: test EM" in stdout and "seed 4, lr " in stdout
    assert "Peak rate chosen on validation F1 (seed 3)" in stdout
    for metric in ("exact_match", "f1"):
        assert result[metric] == pytest.approx(sum(run[metric] for run in runs) / 2, abs=0.01)
        assert result[f"{metric}_sd"] is not None
    assert result["train_seconds_total"] == pytest.approx(
        sum(run["train_seconds"] for run in runs), abs=0.11
    )
    assert result["train_questions"] == 48 and result["eval_questions"] == 24
    assert result["train_windows"] >= 48
    assert report == {"exact_match": result["exact_match"], "f1": result["f1"]}
    assert "mean ± sd over 2 seed(s)" in stdout
    # The first seed's answers only, one per evaluation question.
    predictions = json.loads((tmp_path / "predictions.json").read_text())
    assert len(predictions) == 24
    assert "the first seed's (3) answers only" in stdout
    # The renderer reads the lab's own record.
    page = lab14_qa.render(result)
    assert "(n=2)" in page and "seed 3 " in page and "seed 4 " in page
    assert f"The table above is the chosen rate, {result['learning_rate']:g}" in page
    assert lab14_qa.headline(result).endswith("on 24 questions (2 seeds)")


@pytest.mark.slow
def test_lab_qa_refuses_fewer_than_one_seed(tmp_path):
    result = subprocess.run(
        [sys.executable, "labs/lab14_qa.py", "--seeds", "0", "--run-dir", str(tmp_path)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 2 and "--seeds must be >= 1" in result.stderr, result.stderr
    assert not (tmp_path / "results.json").exists()


def _lab14():
    spec = importlib.util.spec_from_file_location("lab14_qa", ROOT / "labs" / "lab14_qa.py")
    lab = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lab)
    return lab


def test_lab_qa_holds_out_whole_articles_from_the_end_for_validation():
    lab = _lab14()
    examples = [SimpleNamespace(title=title, id=i) for i, title in enumerate("aabbbcdd")]
    train, validation = lab.hold_out_articles(examples, 2)
    assert [e.id for e in train] == [0, 1, 2, 3, 4] and [e.id for e in validation] == [5, 6, 7]
    with pytest.raises(ValueError, match="--validation-articles 4 leaves no training article"):
        lab.hold_out_articles(examples, 4)


def test_lab_qa_summary_is_the_mean_and_sd_of_its_runs():
    """lab14's summary over seeds, without training: the lab's own `summarize`."""
    lab = _lab14()
    runs = [
        {
            "seed": seed,
            "exact_match": em,
            "f1": f1,
            "final_loss": loss,
            "train_seconds": 100.0 + seed,
            "train_windows_per_s": 10.0,
            "eval_seconds": 5.0,
        }
        for seed, em, f1, loss in [(0, 50.0, 60.0, 2.0), (1, 52.0, 61.0, 3.0), (2, 54.0, 65.0, 4.0)]
    ]
    row = lab.summarize(runs)
    assert (row["exact_match"], row["exact_match_sd"]) == (52.0, 2.0)
    assert (row["f1"], row["f1_sd"]) == (62.0, 2.65)  # sample sd of 60, 61, 65
    assert row["train_seconds"] == 101.0 and row["train_seconds_total"] == 303.0
    assert row["eval_seconds_total"] == 15.0 and row["final_loss"] == 3.0
    assert row["runs"] == runs
    one = lab.summarize(runs[:1])
    assert one["exact_match"] == 50.0 and one["exact_match_sd"] is None and one["f1_sd"] is None


@pytest.mark.slow
def test_token_task_benchmark_kbert_side(data_root, tmp_path):
    record = tmp_path / "token_tasks.json"
    _, report = _run(
        [
            "-m",
            "benchmarks.token_tasks",
            "--sides",
            "kbert",
            "--max-train",
            "48",
            "--max-eval",
            "24",
            "--ner-epochs",
            "1",
            "--verbose",
            "0",
            "--record",
            str(record),
        ],
        data_root,
    )
    assert json.loads(record.read_text())["results"] == report
    for key in (
        "kbert_ner_f1",
        "kbert_qa_f1",
        "kbert_qa_em",
        "kbert_ner_train_examples_per_s",
        "kbert_qa_train_examples_per_s",
    ):
        assert key in report, key
    assert report["ner_train_sentences"] == 48 and report["qa_train_questions"] == 48


@pytest.mark.slow
@pytest.mark.skipif(
    importlib.util.find_spec("transformers") is None or importlib.util.find_spec("torch") is None,
    reason="the peer (transformers + torch) is installed only in the benchmark "
    "environment: bash benchmarks/install_peers.sh, then PYTHONPATH=../kbert-peers",
)
def test_token_task_benchmark_peer_side(data_root):
    _, report = _run(
        [
            "-m",
            "benchmarks.token_tasks",
            "--sides",
            "peer",
            "--max-train",
            "32",
            "--max-eval",
            "16",
            "--ner-epochs",
            "1",
            "--verbose",
            "0",
        ],
        data_root,
    )
    for key in ("peer_ner_f1", "peer_qa_f1", "peer_qa_em"):
        assert key in report, key
