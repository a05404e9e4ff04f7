import json
from pathlib import Path

from benchmarks.reports import lab07_document_classification
from benchmarks.reports._common import UNEXPLAINED

RESULTS = Path(__file__).resolve().parents[3] / "docs" / "results"


def _document_record(model, ulmfit, plain):
    results = {
        "task": "imdb",
        "model": model,
        "language_model": {"lm_examples": 3800},
        "settings": {"sequence_length": 128},
        "results": {"100": {"ulmfit": {"test_mean": ulmfit}, "plain": {"test_mean": plain}}},
    }
    return json.dumps({"results": results})


def test_a_lab07_row_near_the_majority_class_is_set_beside_the_lab_s_other_runs(tmp_path):
    name = "lab07_document_classification_lab01"
    (tmp_path / f"{name}.json").write_text(_document_record("lab01", 0.569, 0.548))
    (note,) = lab07_document_classification.document_classification_notes(name, tmp_path)
    assert note.startswith(
        "Note (100 labelled, ulmfit 0.569; 100 labelled, plain 0.548; majority class of the test "
        "documents 0.5)"
    )
    assert UNEXPLAINED in note  # nothing else measured yet
    other = tmp_path / "lab07_document_classification.json"
    other.write_text(_document_record("minilm_l6", 0.768, 0.760))
    (note,) = lab07_document_classification.document_classification_notes(name, tmp_path)
    assert UNEXPLAINED not in note
    assert "(minilm_l6, 128 tokens, stage 1 on 3,800 texts): 100 labelled, ulmfit 0.768" in note
    # Rows well above the majority class need no note.
    assert (
        lab07_document_classification.document_classification_notes(
            "lab07_document_classification", tmp_path
        )
        == []
    )


def _section_record():
    """A record of the lab's current shape: paired difference, runs at the majority counted."""
    row = {
        "val_mean": 0.7,
        "test_mean": 0.71,
        "test_sd": 0.02,
        "seeds": 3,
        "train_s": 40.0,
        "runs_at_majority": 0,
    }
    return {
        "task": "imdb",
        "model": "saved_models/lab01_causal",
        "language_model": {"lm_examples": 3800, "lm_loss_before": 5.1, "lm_loss_after": 4.2},
        "settings": {"sequence_length": 128, "validation_examples": 500, "test_examples": 1000},
        "results": {
            "100": {
                "ulmfit": row,
                "plain": {**row, "test_mean": 0.52, "runs_at_majority": 2},
            }
        },
        "gain_points": {"100": 19.0},
        "difference": {"100": {"mean": 0.06, "sd": 0.01, "n": 3, "verdict": "better"}},
        "majority_test_accuracy": 0.507,
    }


def _strip_majority_counts(results):
    """The record as the lab wrote it before it counted runs at the majority class."""
    for by_variant in results["results"].values():
        for row in by_variant.values():
            del row["runs_at_majority"]


def test_the_section_gives_stage_1_s_seed_paired_gain_and_the_test_majority():
    results = _section_record()
    page = lab07_document_classification.render(results)
    assert "1,000 test documents (majority class 0.507)." in page
    assert "What ULMFiT claims: fine-tuning the LM" in page
    assert "seed by seed, by labelled documents: 100: +6.00 ± 1.00 (better)." in page
    # A record made before the paired difference: the difference of the means.
    del results["difference"], results["majority_test_accuracy"]
    _strip_majority_counts(results)
    page = lab07_document_classification.render(results)
    assert "by labelled documents: 100: +19.0." in page and "majority" not in page


def test_the_table_counts_each_row_s_runs_at_the_majority_class():
    results = _section_record()
    page = lab07_document_classification.render(results)
    assert "| train s per run | at majority |" in page
    # A record made before the lab named its schedules trained on the head-then-all one.
    assert (
        "| 100 | head, then all | LM fine-tuned, then classifier | 0.700 | 0.710 ± 0.020 (n=3) "
        "| 40 | 0 of 3 |" in page
    )
    assert (
        "| 100 | head, then all | classifier only | 0.700 | 0.520 ± 0.020 (n=3) | 40 | 2 of 3 |"
        in page
    )
    # A record made before the count: the table as it was, no column.
    _strip_majority_counts(results)
    page = lab07_document_classification.render(results)
    assert "at majority" not in page
    assert "| 100 | head, then all | classifier only | 0.700 | 0.520 ± 0.020 (n=3) | 40 |\n" in (
        page + "\n"
    )


def test_the_headline_gives_the_seed_paired_gain_with_its_verdict():
    results = _section_record()
    results["results"]["500"] = {
        name: {**row, "runs_at_majority": 0} for name, row in results["results"]["100"].items()
    }
    results["difference"]["500"] = {"mean": 0.004, "sd": 0.02, "n": 3, "verdict": "no difference"}
    assert lab07_document_classification.headline(results) == (
        "ULMFiT stage 1 on imdb from lab01_causal, test points gained by labels, paired by seed: "
        "100: +6.0 ± 1.0 (better), 500: +0.4 ± 2.0 (no difference); runs at the majority class: "
        "100 plain 2 of 3"
    )
    # No run at the majority class: no clause.
    results["results"]["100"]["plain"]["runs_at_majority"] = 0
    assert "majority" not in lab07_document_classification.headline(results)


def test_the_headline_of_a_record_without_the_paired_difference_gives_the_means_gap():
    results = _section_record()
    del results["difference"]
    _strip_majority_counts(results)
    assert lab07_document_classification.headline(results) == (
        "ULMFiT stage 1 on imdb from lab01_causal, test points gained by labels: 100: +19.0"
    )
    results["gain_points"] = {}  # --skip-baseline: nothing to compare
    assert lab07_document_classification.headline(results).endswith("labels: not measured")


def test_the_committed_records_still_render():
    records = sorted(RESULTS.glob("lab07_document_classification*.json"))
    assert records
    for path in records:
        results = json.loads(path.read_text(encoding="utf-8"))["results"]
        line = lab07_document_classification.headline(results)
        assert line.startswith("ULMFiT stage 1 on ") and "|" not in line, path.name
        # The shape each record has: the paired difference or the gap of the means.
        assert ("paired by seed" in line) == bool(results.get("difference")), path.name
        assert "| labelled | schedule | start |" in lab07_document_classification.render(results)


def _scheduled_record():
    """A record of the lab's shape since it runs stage 2 on the paper's schedule and BERT
    practice's: every key by schedule, and the schedule validation prefers at each size."""
    old = _section_record()
    row = old["results"]["100"]["ulmfit"]
    by_start = {"lm_fine_tuned": row, "plain": old["results"]["100"]["plain"]}
    return {
        **old,
        "schedules": ["ulmfit", "head_then_all"],
        "results": {
            "ulmfit": {"100": by_start, "500": {name: dict(r) for name, r in by_start.items()}},
            "head_then_all": {
                "100": {name: {**r, "val_mean": 0.75} for name, r in by_start.items()},
                "500": {name: {**r, "runs_at_majority": 0} for name, r in by_start.items()},
            },
        },
        "gain_points": {"ulmfit": {"100": 19.0, "500": 19.0}, "head_then_all": {"100": 19.0}},
        "difference": {
            "ulmfit": {
                "100": {"mean": 0.06, "sd": 0.01, "n": 3, "verdict": "better"},
                "500": {"mean": 0.004, "sd": 0.02, "n": 3, "verdict": "no difference"},
            },
            "head_then_all": {
                "100": {"mean": -0.02, "sd": 0.01, "n": 3, "verdict": "worse"},
                "500": {"mean": 0.01, "sd": 0.02, "n": 3, "verdict": "no difference"},
            },
        },
        "preferred_schedule": {"100": "head_then_all", "500": "ulmfit"},
    }


def test_a_record_with_schedules_shows_each_schedule_s_rows_and_gain_the_paper_s_first():
    results = _scheduled_record()
    page = lab07_document_classification.render(results)
    assert page.count("| ULMFiT's |") == 4 and page.count("| head, then all |") == 4
    assert (
        "| 100 | ULMFiT's | classifier only | 0.700 | 0.520 ± 0.020 (n=3) | 40 | 2 of 3 |" in page
    )
    assert (
        "by labelled documents: on ULMFiT's schedule (the paper's), 100: +6.00 ± 1.00 (better), "
        "500: +0.40 ± 2.00 (no difference); on head, then all schedule, 100: -2.00 ± 1.00 "
        "(worse), 500: +1.00 ± 2.00 (no difference)." in page
    )
    assert "Validation (both starts' mean) prefers head, then all at 100, ULMFiT's at 500." in page
    line = lab07_document_classification.headline(results)
    assert line.startswith(
        "ULMFiT stage 1 on imdb from lab01_causal, test points gained by labels, paired by seed: "
        "ULMFiT's schedule (the paper's) 100: +6.0 ± 1.0 (better), 500: +0.4 ± 2.0 "
        "(no difference); head, then all schedule 100: -2.0 ± 1.0 (worse)"
    )
    assert "; validation prefers head, then all at 100, ULMFiT's at 500" in line
    # Each row at the majority class names its schedule.
    assert line.endswith(
        "; runs at the majority class: 100 plain on the ulmfit schedule 2 of 3, "
        "500 plain on the ulmfit schedule 2 of 3, 100 plain on the head_then_all schedule 2 of 3"
    )


def test_a_note_names_the_schedule_of_each_row_near_the_majority_class(tmp_path):
    results = _scheduled_record()
    name = "lab07_document_classification"
    (tmp_path / f"{name}.json").write_text(json.dumps({"results": results}))
    (note,) = lab07_document_classification.document_classification_notes(name, tmp_path)
    assert note.startswith(
        "Note (100 labelled, plain on the ulmfit schedule 0.520; 500 labelled, plain on the "
        "ulmfit schedule 0.520; 100 labelled, plain on the head_then_all schedule 0.520;"
    )
