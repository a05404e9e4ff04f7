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
    assert note.startswith("Note (100 labelled, ulmfit 0.569; 100 labelled, plain 0.548; IMDb")
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
