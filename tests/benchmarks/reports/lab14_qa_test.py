from benchmarks.reports import lab14_qa

SOURCE = "dev-split(first 40 articles train / 8 eval)"

# A record made before the lab ran several seeds: one run's scores under flat keys.
ONE_RUN = {
    "source": SOURCE,
    "train_questions": 8981,
    "train_windows": 9191,
    "eval_questions": 1589,
    "epochs": 2,
    "train_seconds": 1437.0,
    "train_windows_per_s": 12.8,
    "final_loss": 2.7895,
    "exact_match": 59.79,
    "f1": 72.45,
    "eval_seconds": 82.6,
}

# The lab's record over seeds: EM 59/60/61 and F1 71.5/72/72.5 have mean 60 ± 1 and 72 ± 0.5.
RUNS = [
    {"seed": 0, "exact_match": 59.0, "f1": 71.5, "final_loss": 2.7, "train_seconds": 1400.0},
    {"seed": 1, "exact_match": 60.0, "f1": 72.0, "final_loss": 2.8, "train_seconds": 1420.0},
    {"seed": 2, "exact_match": 61.0, "f1": 72.5, "final_loss": 2.9, "train_seconds": 1440.0},
]
SEEDS = {
    "source": SOURCE,
    "train_questions": 8981,
    "train_windows": 9191,
    "eval_questions": 1589,
    "epochs": 2,
    "seeds": 3,
    "first_seed": 0,
    "exact_match": 60.0,
    "exact_match_sd": 1.0,
    "f1": 72.0,
    "f1_sd": 0.5,
    "train_seconds": 1420.0,
    "train_windows_per_s": 12.9,
    "eval_seconds": 80.0,
    "train_seconds_total": 4260.0,
    "eval_seconds_total": 240.0,
    "final_loss": 2.8,
    "runs": RUNS,
}


def test_a_one_run_record_renders_as_before():
    page = lab14_qa.render(ONE_RUN)
    assert "| EM | F1 | train s |" in page
    assert f"| {SOURCE} | 8,981 (9,191) | 1,589 | 2 | 59.79 | 72.45 | 1,437 |" in page
    assert "8,981 training questions make 210 more windows than questions" in page
    assert "12.8 windows/s and ended at loss 2.789. A `dev-split`" in page
    assert "±" not in page and "seed" not in page
    assert lab14_qa.headline(ONE_RUN) == (
        f"SQuAD v1.1 ({SOURCE}): EM 59.79, F1 72.45 on 1,589 questions"
    )


def test_a_record_over_seeds_renders_mean_sd_and_each_seed():
    page = lab14_qa.render(SEEDS)
    assert "| EM | F1 | train s per seed |" in page
    assert (
        f"| {SOURCE} | 8,981 (9,191) | 1,589 | 2 | 60.00 ± 1.00 (n=3) | 72.00 ± 0.50 (n=3) "
        "| 1,420 |"
    ) in page
    assert "12.9 windows/s and ended at loss 2.800 (means over the seeds)" in page
    assert (
        "Per seed, EM / F1: seed 0 59.00 / 71.50; seed 1 60.00 / 72.00; seed 2 61.00 / 72.50. "
        "Training took 4,260 s in all."
    ) in page
    assert lab14_qa.headline(SEEDS) == (
        f"SQuAD v1.1 ({SOURCE}): EM 60.00 ± 1.00, F1 72.00 ± 0.50 on 1,589 questions (3 seeds)"
    )


def test_a_one_seed_record_of_the_new_shape_has_no_spread():
    one = SEEDS | {"seeds": 1, "runs": RUNS[:1], "exact_match_sd": None, "f1_sd": None}
    page = lab14_qa.render(one)
    assert "| 60.00 (n=1) | 72.00 (n=1) |" in page and "±" not in page.split("\n\n")[0]
    assert lab14_qa.headline(one) == (
        f"SQuAD v1.1 ({SOURCE}): EM 60.00, F1 72.00 on 1,589 questions (1 seed)"
    )


def test_a_record_with_a_rate_chosen_on_validation_renders_every_rate_the_chosen_in_bold():
    rates = [
        {
            "learning_rate": rate,
            "validation_exact_match": val_em,
            "validation_f1": val_f1,
            "test_exact_match": test_em,
            "test_f1": test_f1,
        }
        for rate, val_em, val_f1, test_em, test_f1 in [
            (5e-5, 40.0, 55.0, 41.0, 56.0),
            (2e-4, 58.0, 70.0, 59.0, 71.5),
            (5e-4, 57.0, 69.0, 60.0, 73.0),  # the best test, not chosen
        ]
    ]
    chosen = SEEDS | {
        "learning_rate": 2e-4,
        "learning_rates": rates,
        "validation_articles": 4,
        "validation_questions": 901,
    }
    page = lab14_qa.render(chosen)
    assert "validation = the last 4 training articles, 901 questions" in page
    assert "| **0.0002** | 58.00 | 70.00 | 59.00 | 71.50 |" in page
    assert "| 0.0005 | 57.00 | 69.00 | 60.00 | 73.00 |" in page
    assert "The table above is the chosen rate, 0.0002" in page
    # A record without the choice renders no rate table.
    assert "peak rate" not in lab14_qa.render(SEEDS)
