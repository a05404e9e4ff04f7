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


def _grid_row(label, options, validation, test, rate=3e-4):
    return {
        "label": label,
        "method": label.split(" ")[0],
        "learning_rate": rate,
        "seeds": 1,
        "val_mean": validation,
        "acc_mean": test,
        "acc_sd": None,
        "trainable_pct": 100.0,
        "train_s": 6.0,
        "options": options,
    }


def test_multitask_rows_name_their_weight_annealing_and_epochs():
    constant = _grid_row("multitask a", {"language_model_weight": 0.5}, 0.6, 0.62)
    annealed = _grid_row(
        "multitask b", {"language_model_weight": 1.0, "language_model_final_weight": 0.0}, 0.7, 0.7
    )
    full = _grid_row("full c", {}, 0.5, 0.5)
    longer = _grid_row("full d", {"epochs": 6}, 0.55, 0.52)
    tutorial = _grid_row("multitask e", {"language_model_weight": 0.5, "epochs": 6}, 0.6, 0.6)
    results = {
        "settings": {
            "train_examples": 100,
            "epochs": 3,
            "batch_size": 32,
            "seeds": 1,
            "validation_examples": 545,
        },
        "majority_class_acc": {"validation": 0.2, "test": 0.2},
        "layer_groups": {"lab01": 18},
        "grids": {"lm_weights": [0.5, 1.0]},
        "studies": {
            "multitask": {
                "lab01": {
                    "100": {
                        "epochs": 30,
                        "rows": [full, constant, annealed],
                        "chosen": {"full": "full c", "multitask": "multitask b"},
                    }
                }
            },
            "multitask_tutorial": {
                "lab01": {
                    "rows": [full, longer, tutorial],
                    "chosen": {"full": "full c", "full d": "full d", "multitask e": "multitask e"},
                }
            },
        },
    }
    page = adaptation_grid.render(results)
    assert "| 100 (30 ep.) | multitask | LM 0.5, lr 0.0003 | 0.600 | 0.620 | 6 |" in page
    assert "| 100 (30 ep.) | multitask | LM 1 → 0, lr 0.0003 | **0.700** | **0.700** | 6 |" in page
    assert "| full | lr 0.0003, 6 ep. | **0.550** | **0.520** | 6 |" in page
    assert "| multitask | LM 0.5, lr 0.0003, 6 ep. | **0.600** | **0.600** | 6 |" in page
    assert "The tutorial's comparison" in page
    assert "(weight, annealing to 0 or none, and rate chosen on validation)" in page
    # A record made before the weight grid says what it compared.
    del results["grids"]
    assert "Classification 1.0 + causal-LM 0.5 against" in adaptation_grid.render(results)
