from benchmarks.reports import pair_stability


def _row(learning_rate, epochs, test, at_majority, difference=None):
    return {
        "settings": {"learning_rate": learning_rate, "warmup_fraction": 0.1, "epochs": epochs},
        "val_mean": test + 0.01,
        "val_sd": 0.02,
        "test_mean": test,
        "test_sd": 0.03,
        "difference": difference,
        "runs_at_majority": at_majority,
        "seeds": 3,
    }


RESULTS = {
    "task": "rte",
    "model": "minilm_l6",
    "pooling": "mean",
    "train": 2241,
    "validation": 249,
    "test": 277,
    "majority_accuracy": 0.527,
    "seeds": 3,
    "chosen_on_validation": "both",
    "batch_size": 16,
    "sequence_length": 128,
    "rows": {
        "default": _row(5e-5, 4, 0.56, 1),
        "both": _row(2e-5, 8, 0.61, 0, {"mean": 0.05, "sd": 0.02, "n": 3, "verdict": "better"}),
    },
}


def test_each_setting_is_a_row_with_its_paired_difference_and_majority_runs():
    page = pair_stability.render(RESULTS)
    assert (
        "| lab12's default | 5e-05 | 0.1 | 4 | 0.570 ± 0.020 | 0.560 ± 0.030 (n=3) | – "
        "| 1 of 3 (majority 0.527) |" in page
    )
    assert (
        "| smaller rate, warmup, more epochs (chosen on validation) | 2e-05 | 0.1 | 8 | "
        "0.620 ± 0.020 | 0.610 ± 0.030 (n=3) | +5.00 ± 2.00 (better) | 0 of 3 (majority 0.527) |"
        in page
    )
    assert "2,241 training pairs, 249 held out" in page


def test_the_headline_names_the_setting_chosen_on_validation():
    line = pair_stability.headline(RESULTS)
    assert line.startswith("RTE on minilm_l6: chosen on validation smaller rate, warmup, more")
    assert "test 0.610 vs default 0.560" in line
    assert "lab12's default 1 of 3, smaller rate, warmup, more epochs 0 of 3" in line
