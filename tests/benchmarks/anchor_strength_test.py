import json

import pytest

from benchmarks.anchor_strength import GRID_RATE_FALLBACK, grid_rate


def _grid_record(directory, studies):
    record = {"commit": "0" * 40, "results": {"studies": studies}}
    (directory / "adaptation_grid_minilm.json").write_text(json.dumps(record))


def test_the_rate_is_the_one_the_grids_anchors_study_trained_at(tmp_path):
    _grid_record(tmp_path, {"anchors": {"minilm_l6": {"learning_rate": 1e-3, "rows": []}}})
    rate, source = grid_rate("minilm_l6", tmp_path)
    assert rate == pytest.approx(1e-3)
    assert source == "adaptation_grid_minilm.json's anchors study for 'minilm_l6'"


@pytest.mark.parametrize(
    "start, studies",
    [
        ("minilm_l6", None),  # no record at all
        ("minilm_l6", {"rates": {}}),  # a record without the anchors study
        ("minilm_l6", {"anchors": {"lab01": {"learning_rate": 1e-3}}}),  # another start's
        ("/some/checkpoint", {"anchors": {"minilm_l6": {"learning_rate": 1e-3}}}),  # no grid
    ],
)
def test_without_a_recorded_study_the_fallback_rate_is_named(tmp_path, start, studies):
    if studies is not None:
        _grid_record(tmp_path, studies)
    rate, source = grid_rate(start, tmp_path)
    assert rate == GRID_RATE_FALLBACK and "fallback" in source and repr(start) in source
