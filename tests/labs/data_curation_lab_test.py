"""lab18b_data_curation as a user runs it, on two books and a few training steps."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_curation_lab_finds_what_it_planted(tmp_path, data_root):
    record = tmp_path / "lab18b.json"
    result = subprocess.run(
        [
            sys.executable,
            "labs/lab18b_data_curation.py",
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
            "--min-steps",
            "2",
            "--verbose",
            "0",
            "--record",
            str(record),
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "KBERT_DATA_DIR": str(data_root)},
        capture_output=True,
        text=True,
        timeout=900,
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
    assert 0 <= report["trec_acc"]["curated"] <= 1
    assert json.loads(record.read_text())["results"] == report
