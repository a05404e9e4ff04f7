from benchmarks.reports import lab02_finetuning
from kbert.metrics.seed_comparison import over_seeds, paired_difference


def _part(part, pooling, accuracies, learning_rate=6.5e-5, validation=None):
    runs = [
        {
            "test_accuracy": a,
            "test_macro_f1": a - 0.1,
            "val_accuracy_per_epoch": [0.5, a if validation is None else validation],
        }
        for a in accuracies
    ]
    finals = [{"final_val_accuracy": run["val_accuracy_per_epoch"][-1]} for run in runs]
    return {
        "part": part,
        "learning_rate": learning_rate,
        "model": part,
        "pooling": pooling,
        "parameters": 5_270_790,
        **over_seeds(runs, ("test_accuracy", "test_macro_f1"), digits=4),
        **over_seeds(finals, ("final_val_accuracy",), digits=4),
        "train_s": 150.0,
        "runs": runs,
    }


LAB01, MINILM = [0.76, 0.78, 0.77], [0.95, 0.96, 0.96]
RESULTS = {
    "i": _part("i", "last", LAB01),
    "ii": _part("ii", "mean", MINILM) | {"model": "minilm_l6"},
    "majority_accuracy": 0.276,
    "seeds": 3,
    "difference": paired_difference(MINILM, LAB01),
}


def test_both_parts_render_over_seeds_with_the_paired_lead():
    text = lab02_finetuning.render(RESULTS)
    assert "| (i) lab01's causal model + [CLF] token | last pooling | 6.5e-05 | 5.3M |" in text
    assert "0.770 ± 0.010 (n=3)" in text and "0.957 ± 0.006 (n=3)" in text
    assert "Majority class on test: 0.276." in text
    assert "| (ii) minilm_l6, a real pretrained BERT | mean pooling |" in text
    assert (
        "minilm_l6 − lab01's model at the tutorial's rate, test accuracy paired by seed "
        "(points): +18.67 ± 0.58"
    ) in text
    assert lab02_finetuning.headline(RESULTS) == (
        "TREC-6 test accuracy at the tutorial's rate, lab01 causal 0.770 ± 0.010 (n=3), minilm_l6 0.957 ± 0.006 "
        "(n=3); minilm_l6 +18.7 ± 0.6 (better) points"
    )


def test_a_one_seed_record_still_renders():
    old = {
        "i": {
            "part": "i",
            "pooling": "last",
            "parameters": 5_270_790,
            "val_accuracy_per_epoch": [0.67, 0.74],
            "test_accuracy": 0.778,
            "test_macro_f1": 0.68,
            "train_s": 51.1,
        }
    }
    text = lab02_finetuning.render(old)
    assert "| 0.740 (n=1) | 0.778 (n=1) | 0.680 (n=1) | 51 |" in text
    assert "paired by seed" not in text


def test_the_tutorial_s_first_epoch_claim_is_read_from_each_part_s_runs():
    text = lab02_finetuning.first_epoch_line(RESULTS)
    assert "“after one epoch we already have > 90% accuracy”" in text
    # Every run's first epoch is 0.5 here: the mean, and no spread.
    assert text.endswith("(i) lab01's model 0.500 ± 0.000; (ii) minilm_l6 0.500 ± 0.000.")
    assert text in lab02_finetuning.render(RESULTS)
    one_seed = {"i": {key: v for key, v in RESULTS["i"].items() if key != "runs"}}
    assert lab02_finetuning.first_epoch_line(one_seed) == ""


def test_each_part_s_rates_render_with_validation_s_choice_and_its_paired_gain():
    lab01_fast = _part("i", "last", [0.84, 0.86, 0.85], learning_rate=6.5e-4, validation=0.82)
    minilm_mid = _part("ii", "mean", [0.96, 0.97, 0.96], learning_rate=2e-4, validation=0.97)
    minilm_mid["model"] = "minilm_l6"
    results = RESULTS | {
        "rates": [6.5e-5, 2e-4, 6.5e-4],
        "by_rate": {"i": [RESULTS["i"], lab01_fast], "ii": [RESULTS["ii"], minilm_mid]},
        "chosen": {
            "i": {
                "learning_rate": 6.5e-4,
                "at_edge": True,
                "difference_to_tutorial": paired_difference([0.84, 0.86, 0.85], LAB01),
            },
            "ii": {
                "learning_rate": 2e-4,
                "at_edge": False,
                "difference_to_tutorial": paired_difference([0.96, 0.97, 0.96], MINILM),
            },
        },
        "difference_chosen": paired_difference([0.96, 0.97, 0.96], [0.84, 0.86, 0.85]),
    }
    text = lab02_finetuning.render(results)
    assert "| (i) lab01's causal model + [CLF] token | last pooling | 6.5e-05 (tutorial) |" in text
    assert "| last pooling | 0.00065 (chosen on validation) |" in text
    assert "| mean pooling | 0.0002 (chosen on validation) |" in text
    assert (
        "(i) lab01's model: validation chose peak rate 0.00065 (at the edge of the rates tried"
        in text
    )
    assert "test accuracy against the tutorial's 6.5e-05, paired by seed (points): +8.00" in text
    assert "(ii) minilm_l6: validation chose peak rate 0.0002; test accuracy" in text
    assert "minilm_l6 − lab01's model at each part's chosen rate, paired by seed" in text
    assert lab02_finetuning.headline(results).endswith(
        "; at the rates chosen on validation, lab01 causal 0.850 ± 0.010 (n=3) (rate 0.00065), "
        "minilm_l6 0.963 ± 0.006 (n=3) (rate 0.0002)"
    )


def test_a_part_whose_validation_keeps_the_tutorial_s_rate_says_so():
    results = RESULTS | {
        "rates": [6.5e-5, 2e-4],
        "by_rate": {"i": [RESULTS["i"], _part("i", "last", LAB01, learning_rate=2e-4)]},
        "chosen": {
            "i": {
                "learning_rate": 6.5e-5,
                "at_edge": True,
                "difference_to_tutorial": paired_difference(LAB01, LAB01),
            }
        },
    }
    text = lab02_finetuning.render(results)
    assert "(i) lab01's model: validation chose the tutorial's rate (at the edge" in text
    assert "| last pooling | 6.5e-05 (tutorial, chosen on validation) |" in text
    assert "| last pooling | 0.0002 |" in text
