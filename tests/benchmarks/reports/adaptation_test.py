import json

from benchmarks import report
from benchmarks.reports import adaptation
from benchmarks.reports._common import UNEXPLAINED


def _grid_row(rate, val, acc):
    return {
        "method": "full",
        "learning_rate": rate,
        "val_mean": val,
        "acc_mean": acc,
        "acc_sd": 0.01,
    }


def test_a_full_row_at_another_rate_than_the_grid_chose_gets_a_note(tmp_path):
    grid = {
        "settings": {"train_examples": 1000, "epochs": 3, "seeds": 3, "lab01_model": "ckpt"},
        "chosen": {"lab01/full": {"chosen": "full lr=0.0003"}},
        "studies": {
            "rates": {
                "lab01": {"rows": [_grid_row(1e-4, 0.56, 0.647), _grid_row(3e-4, 0.67, 0.748)]}
            }
        },
    }
    (tmp_path / "adaptation_grid.json").write_text(json.dumps({"results": grid}))
    rows = [
        {"start": "lab01", "label": "full", "learning_rate": 1e-4},
        {"start": "lab01", "label": "lora", "learning_rate": 3e-3},
    ]
    (note,) = adaptation.full_rate_notes({"rows": rows}, tmp_path)
    assert "fine-tuned at 0.0001" in note and "chose 0.0003 on validation" in note
    assert "0.0001: 0.647 ± 0.010, 0.0003: 0.748 ± 0.010" in note and "`ckpt`" in note
    # lab05's full row is the baseline at the discriminative top rate by design, not under-tuned
    # (when the record's discriminative rows do train at its rate; an older one's did not).
    (note,) = adaptation.full_rate_notes({"rows": rows}, tmp_path, equal_top_rate=True)
    assert "under-tuned" in note
    top = [*rows, {"start": "lab01", "label": "discriminative_lr", "learning_rate": 1e-4}]
    (note,) = adaptation.full_rate_notes({"rows": top}, tmp_path, equal_top_rate=True)
    assert "trains at 0.0001, the discriminative rows' top rate" in note
    assert "under-tuned" not in note and "own rate, chosen on validation" in note
    rows[0]["learning_rate"] = 3e-4  # at the chosen rate: nothing to explain
    assert adaptation.full_rate_notes({"rows": rows}, tmp_path) == []
    assert adaptation.full_rate_notes({"rows": rows}, tmp_path / "elsewhere") == []


def test_a_second_grid_file_answers_for_its_own_start(tmp_path):
    grid = {
        "settings": {"train_examples": 1000, "epochs": 3, "seeds": 3},
        "studies": {
            "rates": {
                "minilm_l6": {"rows": [_grid_row(1e-4, 0.90, 0.93), _grid_row(3e-5, 0.92, 0.95)]}
            }
        },
    }
    (tmp_path / "adaptation_grid_minilm.json").write_text(json.dumps({"results": grid}))
    rows = [{"start": "minilm_l6", "label": "full", "learning_rate": 1e-4}]
    (note,) = adaptation.full_rate_notes({"rows": rows}, tmp_path)
    assert note.startswith("Note (minilm_l6)") and "chose 3e-05 on validation" in note
    rows = [{"start": "lab01", "label": "full", "learning_rate": 1e-4}]  # no grid for it here
    assert adaptation.full_rate_notes({"rows": rows}, tmp_path) == []


def _peft_row(method, rate, validation, test, seeds=3):
    return {
        "label": f"{method} lr={rate:g}",
        "method": method,
        "learning_rate": rate,
        "seeds": seeds,
        "val_mean": validation,
        "acc_mean": test,
        "acc_sd": 0.02,
    }


def _peft_grid():
    return {
        "settings": {"train_examples": 1000, "epochs": 3, "test_examples": 500},
        "majority_class_acc": {"validation": 0.23, "test": 0.276},
        "studies": {
            "peft": {
                "lab01": {
                    "rows": [
                        _peft_row("prompt_tuning", 3e-3, 0.29, 0.339),
                        _peft_row("prompt_tuning", 3e-2, 0.28, 0.307),
                        _peft_row("lora", 3e-3, 0.62, 0.670),
                    ],
                    "chosen": {"prompt_tuning": "prompt_tuning lr=0.003"},
                },
                # The best test score here (lr=0.1) is not the setting chosen on validation.
                "minilm_l6": {
                    "rows": [
                        _peft_row("prompt_tuning", 3e-2, 0.71, 0.750),
                        _peft_row("prompt_tuning", 1e-1, 0.60, 0.800),
                    ]
                },
            }
        },
    }


def _near_majority_comparison():
    rows = [
        {"start": "lab01", "label": "prompt_tuning", "method": "prompt_tuning"},
        {"start": "lab01", "label": "lora", "method": "lora"},
        {"start": "lab01", "label": "features", "method": "feature_extraction"},
    ]
    for row, accuracy in zip(rows, (0.315, 0.670, 0.300), strict=True):
        row.update(acc_mean=accuracy, acc_sd=0.01, trainable_pct=0.13)
    return {"task": "trec", "test_examples": 500, "rows": rows}


def _prompt_note(tmp_path, grid, comparison):
    (tmp_path / "adaptation_grid_peft.json").write_text(json.dumps({"results": grid}))
    prompt, _ = adaptation.near_majority_notes(comparison, tmp_path)
    return prompt


def test_a_row_near_the_majority_class_gets_the_grid_s_evidence_or_is_flagged(tmp_path):
    grid, comparison = _peft_grid(), _near_majority_comparison()
    (tmp_path / "adaptation_grid_peft.json").write_text(json.dumps({"results": grid}))
    prompt, features = adaptation.near_majority_notes(comparison, tmp_path)
    assert prompt.startswith("Note (lab01 prompt_tuning, test 0.315 against the majority")
    assert "its grid (1,000 questions, 3 epochs; test mean" in prompt
    assert "prompt_tuning lr=0.003: 0.339 ± 0.020; prompt_tuning lr=0.03: 0.307" in prompt
    assert "chosen on validation, prompt_tuning lr=0.003, scores 0.339" in prompt
    assert "no setting of the grid clears the majority class by 0.1" in prompt
    assert UNEXPLAINED in features and "lab01 features" in features
    assert adaptation.near_majority_notes(comparison, tmp_path / "elsewhere") == []
    # Another task or test set: TREC-6's majority class and grid say nothing of it.
    assert adaptation.near_majority_notes({**comparison, "task": "sst2"}, tmp_path) == []
    assert adaptation.near_majority_notes({**comparison, "test_examples": 96}, tmp_path) == []


def test_the_other_starts_are_read_at_the_setting_chosen_on_validation(tmp_path):
    prompt = _prompt_note(tmp_path, _peft_grid(), _near_majority_comparison())
    assert prompt.endswith(
        "The same grid on the other start(s), at the setting chosen on validation there "
        "(test): minilm_l6 prompt_tuning lr=0.03: 0.750."
    )
    assert "0.800" not in prompt  # minilm_l6's best test score, not chosen on validation
    assert "lora" not in prompt  # another method


def test_the_rate_is_named_as_a_cause_only_where_it_differs_from_the_grid_s_choice(tmp_path):
    grid, comparison = _peft_grid(), _near_majority_comparison()
    prompt_row = comparison["rows"][0]
    rows = grid["studies"]["peft"]["lab01"]["rows"]
    rows[1]["acc_mean"] = 0.6  # a setting that does adapt (lr=0.03), not the one chosen
    # The lab row already runs at the rate chosen on validation: the two side by side, no cause.
    prompt_row["learning_rate"] = 3e-3
    prompt = _prompt_note(tmp_path, grid, comparison)
    assert "some setting of the grid clears the majority class by 0.1" in prompt
    assert "the chosen setting scores 0.339 ± 0.020 on test, this row 0.315 ± 0.010" in prompt
    assert "this row trains at the chosen setting's rate (0.003)." in prompt
    assert "hold it down" not in prompt and "rerun" not in prompt
    # Another rate than the chosen one, but the chosen setting sits near the majority class
    # too: rerunning there would not lift it, so still no cause.
    prompt_row["learning_rate"] = 3e-2
    prompt = _prompt_note(tmp_path, grid, comparison)
    assert "this row trains at 0.03, the chosen setting at 0.003." in prompt
    assert "hold it down" not in prompt
    # Another rate, and the chosen setting clears the majority class: the rate may be the cause.
    rows[0]["acc_mean"] = 0.55
    prompt = _prompt_note(tmp_path, grid, comparison)
    assert (
        "the chosen setting scores 0.550 ± 0.020 on test, this row 0.315 ± 0.010; this row "
        "trains at 0.03, the chosen setting at 0.003, so its rate may hold it down (rerun it at "
        "the chosen setting)."
    ) in prompt
    # A row without a recorded rate cannot be compared: no cause.
    del prompt_row["learning_rate"]
    prompt = _prompt_note(tmp_path, grid, comparison)
    assert "the two rates cannot be compared (one is not recorded)." in prompt
    assert "hold it down" not in prompt


def test_the_claim_is_read_against_the_grid_s_majority_class(tmp_path):
    (tmp_path / "adaptation_grid_peft.json").write_text(json.dumps({"results": _peft_grid()}))
    difference = {"mean": -0.4, "sd": 0.02, "n": 3, "verdict": "worse"}
    row = {
        "start": "minilm_l6",
        "label": "prompt_tuning",
        "method": "prompt_tuning",
        "learning_rate": 3e-2,
        "acc_mean": 0.28,
        "acc_sd": 0.01,
        "trainable_pct": 0.04,
        "difference": difference,
        "baseline": "full",
    }
    comparison = {"task": "trec", "test_examples": 500, "rows": [row]}
    assert adaptation.grid_majority(comparison, tmp_path) == 0.276
    (claim, *_) = adaptation.notes("lab16_peft", comparison, tmp_path)
    assert "at the majority class (test 0.280 against 0.276, within 1 point)" in claim
    assert "as the source expects" not in claim
    # Without a grid for this task and test set, no majority is known: read as found.
    other = {**comparison, "test_examples": 96}
    assert adaptation.grid_majority(other, tmp_path) is None
    (claim,) = adaptation.notes("lab16_peft", other, tmp_path)
    assert "behind, as the source expects" in claim


def test_no_committed_comparison_row_near_the_majority_class_is_unexplained():
    page = (report.ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    assert UNEXPLAINED not in page


def test_the_headline_names_the_row_chosen_on_validation_not_the_best_test_score():
    rows = [
        {"start": "lab01", "label": "full", "acc_mean": 0.70, "val_mean": 0.72},
        {"start": "lab01", "label": "adapters", "acc_mean": 0.74, "val_mean": 0.69},
        {"start": "lab01", "label": "lora", "acc_mean": 0.71, "val_mean": 0.73},
        {"start": "minilm_l6", "label": "full", "acc_mean": 0.93, "val_mean": None},
    ]
    text = adaptation.headline({"rows": rows})
    assert text.startswith("TREC-6 test accuracy of the row chosen on validation, ")
    assert "lab01: lora 0.710 (full 0.700)" in text
    assert "0.740" not in text  # the highest test score, not chosen
    assert "minilm_l6: full 0.930" in text  # no validation scores: no "best"


def test_the_table_gives_each_row_its_paired_difference_to_full():
    def row(label, acc, difference):
        return {
            "start": "minilm_l6",
            "label": label,
            "trainable_params": 10,
            "trainable_pct": 1.0,
            "val_mean": acc,
            "acc_mean": acc,
            "acc_sd": 0.01,
            "seeds": 3,
            "train_s": 5.0,
            "difference": difference,
        }

    rows = [
        row("full", 0.93, None),
        row("adapters", 0.925, {"mean": -0.005, "sd": 0.01, "n": 3, "verdict": "no difference"}),
    ]
    results = {**_comparison(rows), "starts": {"minilm_l6": "minilm_l6"}}
    text = adaptation.render(results)
    assert "Δ to full, paired by seed (points)" in text
    assert "-0.50 ± 1.00 (no difference)" in text
    # Records whose rows name their own baseline (lab04's ULMFiT rows, lab06's tutorial row).
    results["rows"][0]["baseline"], results["rows"][1]["baseline"] = None, "full_longer"
    text = adaptation.render(results)
    assert "Δ to its baseline, paired by seed (points)" in text
    assert "| -0.50 ± 1.00 (no difference) vs full_longer |" in text
    # And the rate each row trained at, where the record has it.
    assert "| start | method | trainable |" in text
    results["rows"][1]["learning_rate"] = 3e-3
    assert "| minilm_l6 | adapters | 0.003 | 10 (1.00%) |" in adaptation.render(results)
    # A record made before the column existed renders without it.
    for each in results["rows"]:
        del each["difference"]
    assert "Δ to full" not in adaptation.render(results)


def _comparison_row(label, epochs, landed, **extra):
    return {
        "start": "lab01",
        "label": label,
        "seeds": 3,
        "learning_rate": 1e-3,
        "trainable_params": 10,
        "trainable_pct": 100.0,
        "val_mean": 0.7,
        "acc_mean": 0.7,
        "acc_sd": 0.01,
        "train_s": 20.0,
        "epochs": epochs,
        "runs_at_majority": landed,
        **extra,
    }


def _comparison(rows):
    return {
        "starts": {"lab01": "ckpt"},
        "train_examples": 1000,
        "epochs": 3,
        "batch_size": 32,
        "sequence_length": 64,
        "seeds": 3,
        "validation_examples": 545,
        "test_examples": 500,
        "rows": rows,
    }


def test_a_row_that_trained_other_epochs_and_runs_at_the_majority_are_columns():
    rows = [
        _comparison_row("full", 3, 0),
        _comparison_row("full_ulmfit", 9, 2),
        _comparison_row("older", None, None),  # saved before rows recorded either
    ]
    page = adaptation.render(_comparison(rows))
    assert "| peak rate | epochs | trainable |" in page
    assert "| runs at the majority class | train s per run |" in page
    assert "| lab01 | full_ulmfit | 0.001 | 9 |" in page and "| 2 of 3 | 20 |" in page
    assert "| lab01 | older | 0.001 | – |" in page and "| – | 20 |" in page
    assert "A row's epochs are shown where it trained other than these." in page
    # Every row at the record's epochs, none counted: neither column.
    plain = adaptation.render(
        _comparison([{**row, "epochs": 3, "runs_at_majority": None} for row in rows])
    )
    assert "| epochs |" not in plain and "majority" not in plain
