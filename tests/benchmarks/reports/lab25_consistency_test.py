from benchmarks.reports import lab25_consistency
from kbert.metrics.seed_comparison import paired_difference


def _arms(supervised, **others):
    rows = {"supervised": {"mean": sum(supervised) / 3, "sd": 0.01, "runs": supervised}}
    for arm, runs in others.items():
        rows[arm] = {"mean": sum(runs) / 3, "sd": 0.01, "runs": runs}
        rows[arm]["vs_supervised"] = paired_difference(runs, supervised)
    return rows


RESULTS = {
    "model": "minilm_l6",
    "settings": {"temperature": 0.85, "seeds": 3},
    "sizes": {
        "100": _arms([0.60, 0.62, 0.61], both=[0.70, 0.71, 0.73], mask=[0.61, 0.60, 0.62]),
        "300": _arms([0.80, 0.81, 0.82], both=[0.81, 0.80, 0.83]),
    },
    "unlabelled_examples": {"100": 4807, "300": 4607},
    "validation_examples": 545,
    "test_examples": 500,
    "majority_accuracy": 0.276,
}


def test_the_consistency_lab_renders_each_arm_with_its_paired_difference():
    page = lab25_consistency.render(RESULTS)
    assert "| 100 | supervised only | 0.610 ± 0.010 (n=3) | – |" in page
    # Per-seed differences 0.10, 0.09, 0.12: mean 10.33, sd 1.53 points.
    assert "| 100 | + consistency (both) | 0.713 ± 0.010 (n=3) | +10.33 ± 1.53 (better) |" in page
    assert "(no difference)" in page.split("| 300 | + consistency (both)")[1].split("\n")[0]
    assert page.count("| 300 |") == 2 and page.count("| 100 |") == 3
    assert "4,807 beside 100 labels" in page and "majority class 0.276" in page
    assert "temperature 0.85" in page
    headline = lab25_consistency.headline(RESULTS)
    assert headline.startswith("TREC-6 at 100 labels: consistency (both) +10.3 ± 1.5 (better)")
    assert "300 labels: consistency (both)" in headline and "supervised" not in headline
