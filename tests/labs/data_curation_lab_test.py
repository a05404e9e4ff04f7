"""lab18b_data_curation as a user runs it, on two books and a few training steps."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(arguments, data_root, timeout=900):
    return subprocess.run(
        [sys.executable, "labs/lab18b_data_curation.py", *arguments],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "KBERT_DATA_DIR": str(data_root)},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.mark.slow
def test_the_curation_lab_finds_what_it_planted(tmp_path, data_root):
    record = tmp_path / "lab18b.json"
    result = _run(
        [
            "--run-dir",
            str(tmp_path / "run"),
            "--max-books",
            "2",
            "--vocabulary-size",
            "600",
            "--reference-steps",
            "30",
            "--steps",
            "3",
            "--eval-batches",
            "1",
            "--labelled",
            "64",
            "--seeds",
            "1",
            "--pretraining-seeds",
            "2",
            "--min-steps",
            "2",
            "--verbose",
            "0",
            "--record",
            str(record),
        ],
        data_root,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    filters = report["filters"]
    # Copies come after their originals: deduplication removes copies and no original.
    assert report["recall"]["exact_copy"] == 1.0
    assert filters["exact_duplicates"]["originals_removed"] == 0
    assert filters["near_duplicates"]["originals_removed"] == 0
    assert report["recall"]["near_copy"] > 0.8
    # The rules catch what they describe; word salad passes them and reaches the LM filter.
    for kind in ("hashtag_spam", "navigation_fragment", "repeated_boilerplate"):
        assert report["recall"][kind] == 1.0, kind
    assert "word_salad" not in filters["quality_rules"]["planted_removed"]
    assert report["median_perplexity"]["word_salad"] > report["median_perplexity"]["None"]
    assert set(report["held_out_perplexity"]) == {"planted", "curated"}
    assert (
        report["pretraining"]["curated"]["documents"]
        < report["pretraining"]["planted"]["documents"]
    )
    assert json.loads(record.read_text())["results"] == report
    _check_pairing(report, result.stdout)


def _check_pairing(report, stdout):
    """Two pretrainings per corpus (seeds 0 and 1) × one fine-tuning seed: the perplexity gap is
    paired by pretraining seed, the TREC-6 runs by (pretraining seed, fine-tuning seed)."""
    assert report["pretraining_seeds"] == 2 and report["seeds"] == 1
    perplexities = {}
    for name, row in report["pretraining"].items():
        assert [run["seed"] for run in row["runs"]] == [0, 1], name
        perplexities[name] = [run["held_out_perplexity"] for run in row["runs"]]
        assert row["held_out_perplexity"] == pytest.approx(np.mean(perplexities[name]), abs=0.01)
        assert row["held_out_perplexity_sd"] is not None
        assert report["held_out_perplexity"][name] == row["held_out_perplexity"]
    reduction = report["perplexity_reduction"]
    gaps = np.subtract(perplexities["planted"], perplexities["curated"])
    assert reduction["n"] == 2 and reduction["mean"] == pytest.approx(gaps.mean())
    # Each pair fine-tunes with its own seed (its questions, order and head).
    assert report["trec_run_seeds"] == [[0, 0], [1, 1]]
    trec = report["trec"]
    assert len(trec["planted"]["runs"]) == len(trec["curated"]["runs"]) == 2
    assert "vs_planted" not in trec["planted"]
    difference = trec["curated"]["vs_planted"]
    paired = np.subtract(trec["curated"]["runs"], trec["planted"]["runs"])
    assert difference["n"] == 2 and difference["mean"] == pytest.approx(paired.mean())
    inside = difference["sd"] is None or abs(difference["mean"]) <= difference["sd"]
    assert (difference["verdict"] == "no difference") == inside
    assert report["trec_acc"] == {name: row["mean"] for name, row in trec.items()}
    assert (
        "TREC-6 curated − planted, points, paired by (pretraining seed, fine-tuning seed)" in stdout
    )
    assert "held-out perplexity planted − curated, paired by pretraining seed (2 pairs)" in stdout
    from benchmarks.reports import lab18b_data_curation

    page = lab18b_data_curation.render(report)
    assert "perplexity over 2 pretraining seeds per corpus" in page
    assert "paired by pretraining seed over 2 seeds" in page
    assert "over 2 pairs of runs" in page and "unmeasured" not in page


@pytest.mark.slow
@pytest.mark.parametrize(
    "arguments, expected",
    [
        (["--pretraining-seeds", "0"], "--pretraining-seeds must be >= 1; received 0"),
        (["--seeds", "0"], "--steps, --reference-steps and --seeds must be >= 1"),
    ],
)
def test_the_curation_lab_refuses_bad_settings(tmp_path, data_root, arguments, expected):
    result = _run(["--run-dir", str(tmp_path / "run"), *arguments], data_root, timeout=300)
    assert result.returncode == 2 and expected in result.stderr, result.stderr[-2000:]
