from benchmarks.reports import transfer
from kbert.metrics.seed_comparison import paired_difference
from tests.benchmarks.report_test import TRANSFER

MASKED, RANDOM = [0.70, 0.72, 0.71], [0.60, 0.61, 0.59]
# The summary test's record, its rates chosen per size and its gap paired by seed.
RESULTS = {
    **TRANSFER,
    "gaps": {
        "masked": {**TRANSFER["gaps"]["masked"], "difference": paired_difference(MASKED, RANDOM)}
    },
    "learning_rates": {
        "masked": {"100": {"3e-04": 0.41, "1e-03": 0.52}, "300": {"3e-04": 0.8, "1e-03": 0.7}},
        "random_bidirectional": {
            "100": {"3e-04": 0.3, "1e-03": 0.35},
            "300": {"3e-04": 0.5, "1e-03": 0.62},
        },
    },
    "chosen_learning_rate": {
        "masked": {"100": "1e-03", "300": "3e-04"},
        "random_bidirectional": {"100": "1e-03", "300": "1e-03"},
    },
    "curve": {
        "masked": {
            "100": {"mean": 0.5, "sd": 0.03, "runs": [0.5, 0.47, 0.53]},
            "300": {"mean": 0.71, "sd": 0.01, "runs": MASKED},
        },
        "random_bidirectional": {
            "100": {"mean": 0.4, "sd": 0.02, "runs": [0.4, 0.38, 0.42]},
            "300": {"mean": 0.6, "sd": 0.01, "runs": RANDOM},
        },
    },
}


def test_rates_chosen_per_size_are_shown_in_each_cell_and_in_the_selection_table():
    text = transfer.render(RESULTS)
    assert "| start | 100 | 300 |" in text
    assert "| masked | 0.500 ± 0.030 (lr 1e-03) | 0.710 ± 0.010 (lr 3e-04) |" in text
    assert "| start | labelled | 3e-04 | 1e-03 |" in text
    assert "| masked | 300 | 0.800 | 0.700 |" in text
    assert "Gap to the random control in points, by labelled questions: masked vs " in text
    assert transfer.headline(RESULTS) == (
        "TREC-6 with 300 labels, each start vs the random init of its architecture: masked "
        "0.710 vs 0.600 (+11.0 points; paired by seed +11.0 ± 1.0 (better)); mean of 3 seeds"
    )
