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


def _row(label, method, rate, val, test, options=None, difference=None):
    row = {
        "label": label,
        "method": method,
        "learning_rate": rate,
        "seeds": 3,
        "val_mean": val,
        "acc_mean": test,
        "acc_sd": 0.01,
        "trainable_pct": 100.0,
        "train_s": 10.0,
        "options": options or {},
    }
    return row if difference is None else {**row, "difference": difference}


def _difference(mean):
    return {"mean": mean, "sd": 0.01, "n": 3, "verdict": "better" if mean > 0.01 else "worse"}


def test_the_adapters_study_and_the_rates_at_equal_top_rates_render():
    full = [
        _row(f"full lr={rate:g}", "full", rate, val, 0.7)
        for rate, val in ((3e-4, 0.8), (1e-3, 0.7))
    ]
    tutorial = "adapters tutorial d=32 ×10 lr=0.003"
    adapters = {
        "full_rates": {"rows": full, "chosen": {"full": "full lr=0.0003"}},
        "rows": [
            _row("full lr=0.0003", "full", 3e-4, 0.8, 0.7, difference=None),
            _row(
                tutorial,
                "adapters",
                3e-3,
                0.75,
                0.72,
                {"bottleneck_dim": 32, "trainable": "tutorial"},
                _difference(0.02),
            ),
            _row(
                "feature_extraction last4 lr=0.005",
                "feature_extraction",
                5e-3,
                0.6,
                0.55,
                {"layers": "last4"},
                _difference(-0.15),
            ),
        ],
        "chosen": {
            "full": "full lr=0.0003",
            "adapters tutorial": tutorial,
            "feature_extraction": "feature_extraction last4 lr=0.005",
        },
        "baseline": "full lr=0.0003",
        "source": tutorial,
    }
    rates = {
        "rows": full
        + [
            _row(
                f"discriminative_lr lr={rate:g} factor=2.6",
                "discriminative_lr",
                rate,
                0.7,
                0.6,
                {"factor": 2.6},
                _difference(-0.1),
            )
            for rate in (3e-4, 1e-3)
        ],
        "chosen": {
            "full": "full lr=0.0003",
            "discriminative_lr": "discriminative_lr lr=0.001 factor=2.6",
        },
    }
    for row in rates["rows"][:2]:
        row["difference"] = None
    results = {
        "settings": {
            "train_examples": 1000,
            "epochs": 3,
            "batch_size": 32,
            "seeds": 3,
            "validation_examples": 545,
        },
        "majority_class_acc": {"validation": 0.2, "test": 0.2},
        "studies": {"rates": {"minilm_l6": rates}, "adapters": {"minilm_l6": adapters}},
        "layer_groups": {"minilm_l6": 8},
    }
    page = adaptation_grid.render(results)
    assert "Δ to full at the same top rate, paired (points)" in page
    assert "Δ to the chosen full fine-tuning, paired (points)" in page
    assert "tutorial set, size 32, lr 0.003 (the tutorial's)" in page
    assert "layers last4, lr 0.005" in page and "-15.00 ± 1.00 (worse)" in page
    assert "Full fine-tuning's rates, chosen first: minilm_l6" in page
    # Per top rate: full fine-tuning, then discriminative rates at that rate.
    rates_table = page.split("Full fine-tuning's rate against discriminative rates")[1]
    order = [
        line.split("|")[1].strip() for line in rates_table.splitlines() if line.startswith("| ")
    ]
    assert order[1:5] == ["full", "discriminative_lr", "full", "discriminative_lr"]
    # 4 + 3 rows of 3 seeds in the tables, and the adapters study's other full rate (3 runs).
    assert "summed over the 24 runs" in page
    chosen = {
        "minilm_l6/full": {"chosen": "full lr=0.0003", "test": 0.7},
        "minilm_l6/adapters tutorial": {"chosen": tutorial, "test": 0.72},
    }
    assert adaptation_grid.headline({"chosen": chosen}) == (
        "TREC-6 test, chosen on validation: minilm_l6 full 0.700 (lr=0.0003); "
        "minilm_l6 adapters tutorial 0.720 (d=32 ×10 lr=0.003)"
    )


def test_a_choice_at_the_end_of_its_grid_is_flagged_and_one_inside_it_is_not():
    full = [
        _row(f"full lr={rate:g}", "full", rate, val, 0.7)
        for rate, val in ((3e-4, 0.8), (1e-3, 0.7), (3e-3, 0.6))
    ]
    anchors = [
        _row(f"l2_sp λ={strength:g}", "l2_sp", 3e-4, val, 0.7, {"strength": strength})
        for strength, val in ((0.01, 0.6), (0.1, 0.8), (1.0, 0.7))
    ]
    outcome = {"rows": full, "chosen": {"full": "full lr=0.0003"}}
    assert adaptation_grid._edge_line(outcome) == (
        "At the edge of the grid (the best setting may lie beyond it): full's rate 0.0003 "
        "(the lowest tried)."
    )
    assert "highest" in adaptation_grid._edge_line({**outcome, "chosen": {"full": "full lr=0.003"}})
    assert adaptation_grid._edge_line({**outcome, "chosen": {"full": "full lr=0.001"}}) == ""
    # λ inside its grid; the rate (one value for every λ row) is no edge.
    assert adaptation_grid._edge_line({"rows": anchors, "chosen": {"l2_sp": "l2_sp λ=0.1"}}) == ""
    assert "l2_sp's λ 0.01 (the lowest tried)" in adaptation_grid._edge_line(
        {"rows": anchors, "chosen": {"l2_sp": "l2_sp λ=0.01"}}
    )
    # Rows at other epochs are another grid: a 6-epoch row's rate is not compared with 3-epoch rows.
    longer = _row("full 6 ep. lr=0.001", "full", 1e-3, 0.9, 0.8, {"epochs": 6})
    assert (
        adaptation_grid._edge_line(
            {"rows": [*full, longer], "chosen": {"full 6 ep.": longer["label"]}}
        )
        == ""
    )


def test_an_anchor_chosen_at_its_weakest_names_full_fine_tuning_at_that_rate_below_it():
    full = [
        _row(f"full lr={rate:g}", "full", rate, val, test)
        for rate, val, test in ((3e-4, 0.7, 0.75), (1e-3, 0.8, 0.81))
    ]
    rates = {"rows": full, "chosen": {"full": "full lr=0.001"}}
    anchors = {
        "learning_rate": 1e-3,
        "rows": [
            _row(f"{method} λ={strength:g}", method, 1e-3, val, 0.8, {"strength": strength})
            for method in ("l2_sp", "ewc")
            for strength, val in ((0.001, 0.79), (0.01, 0.78), (0.1, 0.7))
        ],
        "chosen": {"l2_sp": "l2_sp λ=0.001", "ewc": "ewc λ=0.01"},
    }
    line = adaptation_grid._anchor_limit_line(anchors, rates)
    # Only the method chosen at the weakest λ; the full row at the anchors' rate, not 3e-4's.
    assert line == (
        "Below λ 0.001, where validation chose l2_sp, lies λ 0: full fine-tuning at the same "
        "rate, the rates study's 'full lr=0.001' (validation 0.800, test 0.810 ± 0.010)."
    )
    inside = {**anchors, "chosen": {"l2_sp": "l2_sp λ=0.01", "ewc": "ewc λ=0.1"}}
    assert adaptation_grid._anchor_limit_line(inside, rates) == ""
    # No rates study for the start (a record of the anchors alone), or none at that rate.
    assert adaptation_grid._anchor_limit_line(anchors, None) == ""
    assert adaptation_grid._anchor_limit_line({**anchors, "learning_rate": 3e-3}, rates) == ""
    # On the page, under the anchors' table.
    results = {
        "settings": {"train_examples": 1000, "epochs": 3, "batch_size": 32, "seeds": 3}
        | {"validation_examples": 545},
        "majority_class_acc": {"validation": 0.2, "test": 0.19},
        "layer_groups": {"lab01": 6},
        "studies": {"rates": {"lab01": rates}, "anchors": {"lab01": anchors}},
    }
    assert line in adaptation_grid.render(results)
