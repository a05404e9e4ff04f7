"""lab18_tokenizers as a user runs it, on one book and small vocabularies."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_tokenizer_lab_compares_four_tokenizers(tmp_path, data_root):
    record, figure = tmp_path / "lab17.json", tmp_path / "lab17.png"
    result = subprocess.run(
        [
            sys.executable,
            "labs/lab18_tokenizers.py",
            "--vocabulary-sizes",
            "400,800",
            "--train-books",
            "1",
            "--held-out-texts",
            "40",
            "--figure",
            str(figure),
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
    stdout = result.stdout
    report = json.loads(stdout.strip().splitlines()[-1])
    assert "the chapter's first four merges: e s, es t, est </w>, l o" in stdout
    assert set(report["results"]) == {"wordpiece", "bpe", "byte_level_bpe", "unigram"}
    for by_size in report["results"].values():
        assert set(by_size) == {"400", "800"}
        for row in by_size.values():
            for set_name in ("gutenberg", "wikitext", "sst2"):
                # Every whitespace word is at least one piece.
                assert row[set_name]["fertility"] >= 1.0 and row[set_name]["unknown_pct"] >= 0
        assert by_size["800"]["vocabulary"] <= 800 and by_size["400"]["train_seconds"] >= 0
    for set_name in ("gutenberg", "wikitext", "sst2"):
        assert report["results"]["byte_level_bpe"]["400"][set_name]["unknown_pct"] == 0.0
    segmented = report["segmented"]
    assert segmented["vocabulary_size"] == 800
    assert all(segmented[name] for name in ("wordpiece", "bpe", "byte_level_bpe", "unigram"))
    assert figure.stat().st_size > 0
    assert json.loads(record.read_text())["results"] == report
