"""lab13's per-method row over seeds, without training: the lab's own `summarize`."""

import importlib.util
import math
from pathlib import Path

import pytest

LAB = Path(__file__).resolve().parents[2] / "labs" / "lab13_ner.py"


@pytest.fixture(scope="module")
def lab13():
    spec = importlib.util.spec_from_file_location("lab13_ner", LAB)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(test_f1, loss, token_accuracy=97.0):
    return {
        "method": "span",
        "train_sentences": 3000,
        "train_seconds": 100.0,
        "train_sentences_per_s": 30.0,
        "final_loss": loss,
        "validation_f1": test_f1 + 1.0,
        "test_f1": test_f1,
        "test_precision": test_f1 + 2.0,
        "test_recall": test_f1 - 2.0,
        "test_token_accuracy": token_accuracy,
        "repaired_tags": None,
        "per_type_f1": {"PER": 90.0, "LOC": 85.0, "ORG": 80.0, "MISC": 75.0},
    }


def test_a_method_row_is_each_scores_mean_with_the_f1s_spread(lab13):
    row = lab13.summarize([_run(84.0, 0.21), _run(86.0, 0.19)])
    assert row["test_f1"] == 85.0 and row["test_f1_sd"] == 1.41
    assert row["validation_f1_sd"] == 1.41 and "test_recall_sd" not in row
    assert row["final_loss"] == pytest.approx(0.2) and len(row["runs"]) == 2


def test_what_was_not_measured_or_diverged_is_nan_and_the_rest_is_kept(lab13):
    # Span-based NER measures no token accuracy; a diverged seed's loss is NaN.
    row = lab13.summarize([_run(84.0, float("nan"), float("nan")), _run(86.0, 0.19, float("nan"))])
    assert math.isnan(row["test_token_accuracy"]) and math.isnan(row["final_loss"])
    assert row["test_f1"] == 85.0 and row["per_type_f1"]["PER"] == 90.0
