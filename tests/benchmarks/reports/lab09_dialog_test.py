from benchmarks.reports import lab09_dialog

DIALOG = {
    "hits_at_1": {"pretrained": 0.3, "random": 0.1},
    "perplexity": {"pretrained": 40.0, "random": 300.0},
    "results": {
        name: {
            "before": {"perplexity": 900.0, "hits_at_1": 0.05},
            "perplexity": value,
            "hits_at_1": hits,
            "train_choice_accuracy": 0.7,
            "train_lm_loss": 3.0,
        }
        for name, value, hits in (("pretrained", 40.0, 0.3), ("random", 300.0, 0.1))
    },
    "candidates": 20,
    "train_replies": 7000,
    "held_out_replies": 500,
    "settings": {
        "epochs": 3,
        "batch_size": 16,
        "learning_rate": 3e-4,
        "max_history": 2,
        "seed": 0,
        "sequence_length": 128,
        "lab01_model": "runs/x",
    },
    "samples": [
        {"persona": ["i like dogs."], "partner": "hi", "pretrained": "hello", "random": "x"}
    ],
}


def test_the_dialog_lab_renders_its_tables_and_headline():
    page = lab09_dialog.render(DIALOG)
    assert "| pretrained | 900.0 → 40.0 | 0.050 → 0.300 | 0.700 |" in page
    assert "chance 0.050" in page and "“hello”" in page
    assert "pretrained Hits@1 0.300" in lab09_dialog.headline(DIALOG)


def test_three_seeds_render_mean_sd_and_the_paired_difference():
    three = {
        **DIALOG,
        "results": {
            name: {**r, "perplexity_sd": 2.0, "hits_at_1_sd": 0.01}
            for name, r in DIALOG["results"].items()
        },
        "settings": {**DIALOG["settings"], "seeds": 3},
        "differences": {
            "hits_at_1": {"mean": 0.2, "sd": 0.05, "n": 3, "verdict": "better"},
            "log_perplexity_reduction": {"mean": 2.0, "sd": 0.1, "n": 3, "verdict": "better"},
        },
    }
    page = lab09_dialog.render(three)
    assert "| pretrained | 900.0 → 40.0 ± 2.0 | 0.050 → 0.300 ± 0.010 | 0.700 |" in page
    assert "3 seed(s)" in page and "Hits@1 +20.00 ± 5.00 (better)" in page
    assert "divided by 7.39 (log-perplexity reduction +2.00 ± 0.10 (better))" in page
    assert lab09_dialog.headline(three).endswith("(Hits@1 better, perplexity better, over 3 seeds)")


def test_each_start_s_rate_chosen_on_validation_perplexity_is_named():
    tried = [
        {"learning_rate": 3e-4, "validation_perplexity": 60.0, "perplexity": 61.0},
        {"learning_rate": 1e-3, "validation_perplexity": 55.0, "perplexity": 57.0},
    ]
    choices = {
        "pretrained": {
            "chosen": 1e-3,
            "chosen_on": "validation_neg_log_perplexity",
            "tried": tried,
        },
        "random": {"chosen": 3e-4, "chosen_on": "validation_neg_log_perplexity", "tried": []},
    }
    settings = {k: v for k, v in DIALOG["settings"].items() if k != "learning_rate"}
    record = {**DIALOG, "settings": settings, "rate_choices": choices, "validation_replies": 200}
    page = lab09_dialog.render(record)
    assert (
        "peak rate chosen per start on the validation perplexity of 200 replies: pretrained "
        "0.001 of 0.0003 (60.0), 0.001 (55.0); random 0.0003"
    ) in page
    assert "lr 0.0003" in lab09_dialog.render(DIALOG)  # a record made before the choice
