from benchmarks.reports import anchor_strength

SETTINGS = {
    "start": "minilm_l6",
    "train_examples": 1000,
    "epochs": 3,
    "batch_size": 32,
    "learning_rate": 3e-4,
    "seed": 0,
    "validation_examples": 545,
    "test_examples": 500,
    "test_majority": 0.276,
}


def _anchor_row(strength, test, loss):
    return {
        "strength": strength,
        "encoder": "frozen" if strength is None else "anchored",
        "clipnorm": 1.0,
        "test_accuracy": test,
        "validation_accuracy": test,
        "final_loss": loss,
        "final_penalty": 0.0,
        "displacement_by_epoch": [0.0],
        "step_rms_last_epoch": 0.0,
        "path_over_displacement": None if strength is None else 1.0,
        "head_displacement_rms": 5e-3,
    }


def test_a_strength_that_scores_as_the_frozen_control_is_named():
    results = {
        **SETTINGS,
        "rows": [
            _anchor_row(0.01, 0.936, 0.31),
            _anchor_row(10.0, 0.242, 1.73),
            _anchor_row(None, 0.240, 1.72),
        ],
    }
    page = anchor_strength.render(results)
    assert "| — (encoder frozen) | 1 |" in page
    assert page.count("scores as the encoder-frozen control") == 1
    assert "- λ 10 (clip 1) scores as the encoder-frozen control (0.242 against 0.240" in page
    without_control = {**results, "rows": results["rows"][:2]}
    assert "encoder-frozen control (" not in anchor_strength.render(without_control)


def _seeded_row(strength, tests, loss, control=None):
    runs = [{"seed": seed, "test_accuracy": test} for seed, test in enumerate(tests)]
    row = {**_anchor_row(strength, sum(tests) / len(tests), loss), "seeds": len(tests)}
    row |= {"test_accuracy_sd": 0.01, "validation_accuracy_sd": 0.01, "runs": runs}
    if control is not None:
        differences = [a - b for a, b in zip(tests, control, strict=True)]
        mean = sum(differences) / len(differences)
        spread = None
        if len(differences) > 1:
            spread = (sum((d - mean) ** 2 for d in differences) / (len(differences) - 1)) ** 0.5
        if spread is None or abs(mean) <= spread:
            verdict = "no difference"
        else:
            verdict = "better" if mean > 0 else "worse"
        row["vs_frozen"] = {"mean": mean, "sd": spread, "n": len(tests), "verdict": verdict}
    return row


def test_a_seeded_record_reads_the_control_by_its_paired_difference():
    control = [0.24, 0.26, 0.22]
    results = {
        **SETTINGS,
        "learning_rate_source": "adaptation_grid_minilm.json's anchors study for 'minilm_l6'",
        "seeds": 3,
        "rows": [
            _seeded_row(0.01, [0.93, 0.94, 0.95], 0.31, control),
            # Within 2 points of the control on average, but worse on every seed: not the control.
            _seeded_row(1.0, [0.225, 0.245, 0.205], 1.70, control),
            # Beyond 2 points on average, but inside its spread: the control.
            _seeded_row(10.0, [0.34, 0.20, 0.21], 1.73, control),
            _seeded_row(None, control, 1.72),
        ],
    }
    page = anchor_strength.render(results)
    assert "3 seeds from 0" in page and "(adaptation_grid_minilm.json's anchors study" in page
    assert "| 0.250 ± 0.010 |" in page  # λ 10's test accuracy: mean ± sd
    assert page.count("scores as the encoder-frozen control") == 1
    assert (
        "- λ 10 (clip 1) scores as the encoder-frozen control (0.250 against 0.240, paired" in page
    )
    assert "- λ 1 (clip 1)" not in page
    # One seed: no spread to read a difference against, so nothing is named.
    one = {
        **results,
        "rows": [_seeded_row(10.0, [0.24], 1.7, [0.24]), _seeded_row(None, [0.24], 1.7)],
    }
    assert "scores as the encoder-frozen control" not in anchor_strength.render(one)
