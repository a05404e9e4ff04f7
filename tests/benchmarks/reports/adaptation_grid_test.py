from benchmarks.reports import adaptation_grid


def test_the_grid_headline_shows_chosen_settings_or_a_multitask_study_s_pairs():
    def chosen(label, test):
        return {"chosen": label, "val": 0.5, "test": test, "test_sd": 0.01}

    grid = {
        "chosen": {
            "lab01/full": chosen("full lr=0.0003", 0.731),
            "lab01/discriminative_lr": chosen("discriminative_lr lr=0.001 factor=1", 0.785),
            "lab01/l2_sp": chosen("l2_sp λ=0.01 lr=0.0003", 0.727),
            "lab01/full@100": chosen("full lr=0.0003", 0.457),
        }
    }
    assert adaptation_grid.headline(grid) == (
        "TREC-6 test, chosen on validation: lab01 full 0.731 (lr=0.0003); "
        "lab01 discriminative_lr 0.785 (lr=0.001 factor=1)"
    )
    multitask = {
        "chosen": {
            "lab01/full@100": chosen("full lr=0.0003", 0.457),
            "lab01/multitask@100": chosen("multitask clf 1.0 + LM 0.5 lr=0.0003", 0.422),
            "lab01/full@300": chosen("full lr=0.0001", 0.650),
            "lab01/multitask@300": chosen("multitask clf 1.0 + LM 0.5 lr=0.0003", 0.711),
        }
    }
    assert adaptation_grid.headline(multitask) == (
        "TREC-6 test, chosen on validation: lab01, 100 labels: multitask 0.422 vs full 0.457; "
        "lab01, 300 labels: multitask 0.711 vs full 0.650"
    )
