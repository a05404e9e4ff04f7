import json

import pytest

from kbert import run_inputs
from kbert.train.chosen_anchors import chosen_strength


def _write(directory, name, results):
    path = directory / f"{name}.json"
    record = {"command": "python -m x", "commit": "0123456789abcdef", "results": results}
    path.write_text(json.dumps(record))
    return path


def _anchors_study(chosen, strength_of_chosen=0.001):
    # As `benchmarks/adaptation_studies` writes the anchors study: one row per (method, λ) at
    # full fine-tuning's chosen rate, and each method's label chosen on validation.
    rows = [
        {"label": f"l2_sp λ={s:g} lr=0.001", "options": {"strength": s}, "learning_rate": 1e-3}
        for s in (strength_of_chosen, 1.0)
    ]
    rows.append({"label": "ewc λ=0.1 lr=0.001", "options": {"strength": 0.1}})
    return {
        "studies": {"anchors": {"lab01": {"rows": rows, "chosen": chosen, "learning_rate": 1e-3}}}
    }


def test_each_method_reads_its_own_chosen_row(tmp_path):
    chosen = {"l2_sp": "l2_sp λ=0.001 lr=0.001", "ewc": "ewc λ=0.1 lr=0.001"}
    path = _write(tmp_path, "adaptation_grid", _anchors_study(chosen))
    run_inputs.forget_inputs()
    l2_sp = chosen_strength("lab01", "l2_sp", 0.01, results_dir=tmp_path)
    assert l2_sp.value == {"strength": 0.001} and l2_sp.recorded
    # The source names the record, its commit, the row, and the rate λ was chosen at.
    assert l2_sp.source == (
        "adaptation_grid.json (0123456789): 'l2_sp λ=0.001 lr=0.001' (chosen at peak rate 0.001)"
    )
    assert chosen_strength("lab01", "ewc", 0.01, results_dir=tmp_path).value == {"strength": 0.1}
    assert str(path) in run_inputs._NOTED


def test_a_missing_choice_falls_back_to_the_given_strength_and_says_why(tmp_path):
    # No record at all.
    absent = chosen_strength("lab01", "l2_sp", 0.01, results_dir=tmp_path)
    assert absent.value == {"strength": 0.01} and not absent.recorded
    assert absent.source == "no l2_sp choice for 'lab01' in adaptation_grid.json (not recorded)"
    # A study without the method (MiniLM-L6 has no EWC: it ships no pretraining head).
    _write(tmp_path, "adaptation_grid", _anchors_study({"l2_sp": "l2_sp λ=0.001 lr=0.001"}))
    ewc = chosen_strength("lab01", "ewc", 0.01, results_dir=tmp_path)
    assert not ewc.recorded and "its anchors study has no ewc row" in ewc.source
    # A start no grid covers (a path to an encoder).
    assert not chosen_strength("/some/encoder", "l2_sp", 0.01, results_dir=tmp_path).recorded


def test_bad_requests_are_refused_by_name(tmp_path):
    with pytest.raises(
        ValueError, match=r"method must be one of \('l2_sp', 'ewc'\); received 'full'"
    ):
        chosen_strength("lab01", "full", 0.01, results_dir=tmp_path)
    study = _anchors_study({"l2_sp": "l2_sp λ=0.001 lr=0.001"})
    del study["studies"]["anchors"]["lab01"]["rows"][0]["options"]["strength"]
    _write(tmp_path, "adaptation_grid", study)
    with pytest.raises(ValueError, match="names no 'strength' option"):
        chosen_strength("lab01", "l2_sp", 0.01, results_dir=tmp_path)
