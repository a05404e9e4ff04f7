from benchmarks.reports import anchor_strength


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
        "start": "minilm_l6",
        "train_examples": 1000,
        "epochs": 3,
        "batch_size": 32,
        "learning_rate": 3e-4,
        "seed": 0,
        "validation_examples": 545,
        "test_examples": 500,
        "test_majority": 0.276,
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
