"""WSD scoring per set on a planted example: ALL without the development set is pooled by
instance over the other sets, and the training sets stay out of every score."""

import pytest

from kbert.analysis.wsd import WsdPrediction
from kbert.analysis.wsd_scoring import score_sets, set_name
from kbert.data.raganato import WsdInstance

OTHERS = ("senseval2", "senseval3", "semeval2013", "semeval2015")  # ALL but the development set
# Planted: per set, (instances, right by the corpus variant, right by WordNet's first sense).
PLANTED = {
    "senseval2": (4, 3, 0),
    "senseval3": (2, 1, 0),
    "semeval2007": (4, 0, 4),
    "semeval2013": (2, 2, 0),
    "semeval2015": (1, 0, 0),
}


def _planted():
    """ALL-like instances, the corpus variant's predictions and MFS's, as PLANTED says."""
    instances, corpus, mfs = [], [], {}
    for name, (count, right, mfs_right) in PLANTED.items():
        for n in range(count):
            id_ = f"{name}.d000.s000.t{n:03d}"
            instances.append(WsdInstance(id_, 0, n, "bank", "NOUN", ("gold",)))
            corpus.append(WsdPrediction("gold" if n < right else "wrong", "nearest"))
            mfs[id_] = "gold" if n < mfs_right else "wrong"
    return instances, {"corpus": corpus}, mfs


def test_all_minus_the_development_set_pools_the_four_other_sets_by_instance():
    instances, predictions, mfs = _planted()
    names = [*PLANTED, "ALL_minus_semeval2007", "ALL"]
    sets = score_sets(instances, range(len(instances)), predictions, mfs, names)
    held_out = sets["ALL_minus_semeval2007"]
    assert held_out["instances"] == sum(PLANTED[name][0] for name in OTHERS)
    assert held_out["corpus"] == round(100 * 6 / 9, 2)  # 3 + 1 + 2 + 0 right of 4 + 2 + 2 + 1
    assert held_out["mfs_f1"] == 0.0  # MFS is right on SemEval-2007 only
    # The instance-weighted mean of the four other sets' F1, not their plain mean (56.25).
    weighted = sum(sets[name]["corpus"] * sets[name]["instances"] for name in OTHERS)
    assert held_out["corpus"] == pytest.approx(weighted / held_out["instances"], abs=0.005)
    # ALL keeps SemEval-2007's instances, as the field reports it.
    assert sets["ALL"]["instances"] == 13 and sets["ALL"]["corpus"] == round(100 * 6 / 13, 2)
    assert sets["ALL"]["mfs_f1"] == round(100 * 4 / 13, 2)


def test_all_minus_the_development_set_keeps_out_the_training_sets_too():
    instances, predictions, mfs = _planted()
    test_rows = [i for i, x in enumerate(instances) if set_name(x) not in OTHERS[:2]]
    # The lab predicts the test rows only, in their order.
    predictions = {name: [chosen[i] for i in test_rows] for name, chosen in predictions.items()}
    names = ["semeval2007", "semeval2013", "semeval2015", "ALL_minus_semeval2007", "ALL"]
    sets = score_sets(instances, test_rows, predictions, mfs, names)
    assert sets["ALL_minus_semeval2007"]["instances"] == 3
    assert sets["ALL_minus_semeval2007"]["corpus"] == round(100 * 2 / 3, 2)
    assert sets["ALL"]["instances"] == 7 and sets["ALL"]["corpus"] == round(100 * 2 / 7, 2)
