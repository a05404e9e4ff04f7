from benchmarks.reports import lab08_tfhub_squad


def test_the_hub_squad_lab_renders_both_encoders():
    results = {
        "source": "dev-split",
        "train_questions": 3000,
        "train_windows": 3037,
        "eval_questions": 500,
        "train_seconds": 175.0,
        "exact_match": 15.0,
        "f1": 23.36,
        "hub_variables_updated": True,
        "same_preprocessing": True,
        "export": "saved_models/squad_hub/1",
    }
    # An old record: no kbert-encoder row, no difference.
    text = lab08_tfhub_squad.render(results)
    assert "| TF Hub BERT format, loaded into Keras 3 (`kbert.hub`) | 15.00 | 23.36 | 175 |" in text
    assert "own encoder" not in text and "differ by" not in text
    both = {
        **results,
        "max_abs_difference": 1.9e-6,
        "kbert_encoder": {"exact_match": 14.8, "f1": 22.86, "train_seconds": 170.0},
    }
    text = lab08_tfhub_squad.render(both)
    assert "| kbert's own encoder, same checkpoint and recipe | 14.80 | 22.86 | 170 |" in text
    assert "differ by at most 1.9e-06" in text
    assert lab08_tfhub_squad.headline(both).endswith(
        "EM 15.00 / F1 23.36 vs 14.80 / 22.86 on kbert's own encoder"
    )
    seeded = {
        **both,
        "seeds": 3,
        "exact_match_sd": 0.5,
        "f1_sd": 0.7,
        "kbert_encoder": {**both["kbert_encoder"], "exact_match_sd": 0.4, "f1_sd": 0.6},
        "differences": {
            "exact_match": {"mean": 0.2, "sd": 0.3, "n": 3, "verdict": "no difference"},
            "f1": {"mean": 0.5, "sd": 0.4, "n": 3, "verdict": "better"},
        },
    }
    text = lab08_tfhub_squad.render(seeded)
    assert "3 seed(s)" in text and "| 15.00 ± 0.50 | 23.36 ± 0.70 | 175 |" in text
    assert (
        "| Hub − kbert, paired by seed | +0.20 ± 0.30 (no difference) | +0.50 ± 0.40 (better) |"
        in text
    )
    assert lab08_tfhub_squad.headline(seeded).endswith("(F1: better)")
