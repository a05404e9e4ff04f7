import json

from benchmarks.reports import lab07_document_classification
from benchmarks.reports._common import UNEXPLAINED


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
    assert "(minilm_l6, 128 tokens, stage 1 on 3,800 texts): 100 labelled: ulmfit 0.768" in note
    # Rows well above the majority class need no note.
    assert (
        lab07_document_classification.document_classification_notes(
            "lab07_document_classification", tmp_path
        )
        == []
    )


def test_the_section_gives_stage_1_s_seed_paired_gain_and_the_test_majority():
    row = {"val_mean": 0.7, "test_mean": 0.71, "test_sd": 0.02, "seeds": 3, "train_s": 40.0}
    results = {
        "task": "imdb",
        "model": "saved_models/lab01_causal",
        "language_model": {"lm_examples": 3800, "lm_loss_before": 5.1, "lm_loss_after": 4.2},
        "settings": {"sequence_length": 128, "validation_examples": 500, "test_examples": 1000},
        "results": {"100": {"ulmfit": row, "plain": {**row, "test_mean": 0.65}}},
        "gain_points": {"100": 6.0},
        "difference": {"100": {"mean": 0.06, "sd": 0.01, "n": 3, "verdict": "better"}},
        "majority_test_accuracy": 0.507,
    }
    page = lab07_document_classification.render(results)
    assert "1,000 test documents (majority class 0.507)." in page
    assert "What ULMFiT claims: fine-tuning the LM" in page
    assert "seed by seed, by labelled documents: 100: +6.00 ± 1.00 (better)." in page
    # A record made before the paired difference: the difference of the means.
    del results["difference"], results["majority_test_accuracy"]
    page = lab07_document_classification.render(results)
    assert "by labelled documents: 100: +6.0." in page and "majority" not in page
