from benchmarks.reports import unfreezing_regime


def _row(label, validation, test, sd=0.01):
    return {
        "label": label,
        "method": label.split(" lr=")[0],
        "learning_rate": float(label.split("lr=")[1]),
        "seeds": 3,
        "val_mean": validation,
        "acc_mean": test,
        "acc_sd": sd,
        "train_s": 60.0,
    }


def _compared(label, validation, test, difference):
    return _row(label, validation, test) | {"chosen": label, "difference": difference}


RESULTS = {
    "settings": {"sizes": [100], "rates": [1e-3, 3e-3], "seeds": 3, "batch_size": 32},
    "starts": {"minilm_l6": {"source": "minilm_l6", "layer_groups": 8, "epochs": 9}},
    "studies": {
        "minilm_l6": {
            "100": {
                "epochs": 9,
                "rows": [
                    _row("full lr=0.001", 0.7, 0.71),
                    _row("full lr=0.003", 0.6, 0.65),
                    _row("gradual_unfreezing lr=0.001", 0.5, 0.52),
                    _row("gradual_unfreezing lr=0.003", 0.8, 0.74),
                ],
                "compared": [
                    _compared("full lr=0.001", 0.7, 0.71, None),
                    _compared(
                        "gradual_unfreezing lr=0.003",
                        0.8,
                        0.74,
                        {"mean": 0.03, "sd": 0.01, "n": 3, "verdict": "better"},
                    ),
                ],
            }
        }
    },
}


def test_the_section_shows_the_chosen_rows_paired_to_full_and_the_whole_grid():
    page = unfreezing_regime.render(RESULTS)
    assert "**minilm_l6** (8 layer groups thawed, 9 epochs)" in page
    assert (
        "| 100 | gradual_unfreezing | 0.003 | 0.800 | 0.740 ± 0.010 | +3.00 ± 1.00 (better) |"
        in (page)
    )
    assert "| 100 | full | 0.001 | 0.700 | 0.710 ± 0.010 | – |" in page
    # The grid marks each method's chosen rate, and only those.
    assert "| 100 | gradual_unfreezing | 0.003 | **0.800** | **0.740 ± 0.010** | 60 |" in page
    assert "| 100 | full | 0.003 | 0.600 | 0.650 ± 0.010 | 60 |" in page
    assert "Training time summed over the 12 runs: 12 min." in page


def test_the_headline_gives_each_schedule_s_paired_difference_to_full():
    assert unfreezing_regime.headline(RESULTS) == (
        "TREC-6, ULMFiT's regime, Δ test to full (points, paired): "
        "minilm_l6, 100 labels: gradual_unfreezing +3.00 ± 1.00 (better)"
    )
