from benchmarks.reports import distillation_grid


def _row(role, label, temperature=None, soft_weight=None, marks=(), difference=None):
    return {
        "label": label,
        "role": role,
        "temperature": temperature,
        "soft_weight": soft_weight,
        "seeds": 3,
        "val_mean": 0.8,
        "acc_mean": 0.85,
        "acc_sd": 0.01,
        "teacher_acc_mean": 0.9,
        "difference": difference,
        "trainable_pct": 60.0,
        "train_s": 12.0,
        "marks": list(marks),
    }


RESULTS = {
    "settings": {
        "train_examples": 1000,
        "validation_examples": 545,
        "epochs": 3,
        "batch_size": 32,
        "seeds": 3,
    },
    "grid": {
        "temperatures": [1.0, 2.0],
        "soft_weights": [0.5, 0.9],
        "source": {"temperature": 2.0, "soft_weight": 0.5},
    },
    "starts": {
        "minilm_l6": {
            "rows": [
                _row("teacher", "full"),
                _row("baseline", "student_labels_only", soft_weight=0.0),
                _row("grid", "distillation T=2 α=0.5", 2.0, 0.5, ["source"]),
                _row(
                    "grid",
                    "distillation T=1 α=0.9",
                    1.0,
                    0.9,
                    ["chosen"],
                    {"mean": 0.012, "sd": 0.004, "n": 3, "verdict": "better"},
                ),
                _row("ensemble", "ensemble"),
                _row("ensemble_student", "distillation_from_ensemble T=1 α=0.9", 1.0, 0.9),
            ],
            "chosen": {"temperature": 1.0, "soft_weight": 0.9},
        }
    },
    "headline": {
        "minilm_l6": {
            "chosen": {"temperature": 1.0, "soft_weight": 0.9},
            "teacher": 0.9,
            "labels_only": 0.84,
            "source": 0.83,
            "chosen_student": 0.86,
            "ensemble": 0.91,
            "from_ensemble_chosen": 0.87,
        }
    },
}


def test_the_table_marks_the_chosen_and_the_source_s_rows_and_pairs_with_labels_only():
    page = distillation_grid.render(RESULTS)
    assert "**minilm_l6**" in page and "Δ to labels only, paired (points)" in page
    assert "| student distilled (source) | T 2, α 0.5 | 0.800 | 0.850 ± 0.010 (n=3) |" in page
    chosen = "| student distilled (chosen) | T 1, α 0.9 | **0.800** | **0.850 ± 0.010 (n=3)** |"
    assert chosen + " +1.20 ± 0.40 (better) | 0.900 | 12 |" in page
    # The labels-only student has no temperature; rows without a difference show a dash.
    assert "| student, labels only (α 0) | – | 0.800 | 0.850 ± 0.010 (n=3) | – |" in page
    assert page.count("\n| ") == 1 + 6  # the header and six rows


def test_the_headline_names_the_chosen_setting_beside_labels_only():
    assert distillation_grid.headline(RESULTS) == (
        "TREC-6 test, distilled students (T, α chosen on validation): minilm_l6 T 1 α 0.9: "
        "0.860 vs labels only 0.840, source's 0.830, from the ensemble 0.870"
    )
