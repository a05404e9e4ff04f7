from benchmarks.reports import lab21_sequential_adaptation
from kbert.metrics.seed_comparison import paired_difference


def _starts(alone, sequential, shuffled):
    rows = {}
    for start, runs in (("alone", alone), ("sequential", sequential), ("shuffled", shuffled)):
        mean = sum(runs) / len(runs)
        rows[start] = {"mean": mean, "sd": 0.01, "runs": runs}
        if start != "alone":
            rows[start]["vs_alone"] = paired_difference(runs, alone)
    rows["sequential"]["vs_shuffled"] = paired_difference(sequential, shuffled)
    return rows


RESULTS = {
    "model": "minilm_l6",
    "settings": {"learning_rate": 0.0003, "seeds": 3},
    "targets": {
        "imdb": {
            "intermediate": "sst2",
            "intermediate_examples": 2000,
            "intermediate_train_accuracy": {"sequential": 0.85, "shuffled": 0.5},
            "test_examples": 500,
            "majority_accuracy": 0.51,
            "sizes": {"100": _starts([0.70, 0.72, 0.71], [0.80, 0.81, 0.83], [0.70, 0.70, 0.71])},
        },
        "rte": {
            "intermediate": "mrpc",
            "intermediate_examples": 1000,
            "intermediate_train_accuracy": {"sequential": 0.7, "shuffled": 0.6},
            "test_examples": 277,
            "majority_accuracy": 0.527,
            "sizes": {"1000": _starts([0.55, 0.60, 0.52], [0.56, 0.55, 0.57], [0.5, 0.53, 0.5])},
        },
    },
}


def test_the_sequential_lab_renders_each_start_with_its_paired_differences():
    page = lab21_sequential_adaptation.render(RESULTS)
    assert "| imdb | 100 | target alone | 0.710 ± 0.010 (n=3) | – | – | 0.510 |" in page
    # Per-seed differences against alone 0.10, 0.09, 0.12; against the control 0.10, 0.11, 0.12.
    assert (
        "| imdb | 100 | sst2, then target | 0.813 ± 0.010 (n=3) | +10.33 ± 1.53 (better) | "
        "+11.00 ± 1.00 (better) | 0.510 |" in page
    )
    assert "| rte | 1000 | mrpc, then target | 0.560 ± 0.010 (n=3) |" in page
    assert "(no difference)" in page.split("| rte | 1000 | mrpc")[1].split("\n")[0]
    assert "sst2 (2,000 examples, training accuracy after its epoch: sequential 0.850" in page
    headline = lab21_sequential_adaptation.headline(RESULTS)
    assert "IMDB at 100: SST2 first +10.3 ± 1.5 (better) points" in headline
    assert "RTE at 1000: MRPC first" in headline and "(majority 0.527)" in headline
