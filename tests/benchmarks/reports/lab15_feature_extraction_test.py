from benchmarks.reports import lab15_feature_extraction


def test_feature_extraction_picks_on_validation():
    runs = [
        {
            "pooling": p,
            "layers": "top",
            "head": "mlp",
            "validation_accuracy": v,
            "test_accuracy": t,
            "parameters": 10,
            "epochs": 3,
        }
        for p, v, t in (("cls", 0.7, 0.9), ("mean", 0.8, 0.85))
    ]
    features = {
        "checkpoint": "m",
        "examples": {"train": 9, "validation": 1, "test": 5},
        "majority_baseline_test_accuracy": 0.2,
        "runs": runs,
    }
    assert "| mean | top | mlp | 0.800 | 0.850 | 10 | 3 |" in lab15_feature_extraction.render(
        features
    )
    assert lab15_feature_extraction.headline(features).endswith("mean / top / mlp head, test 0.850")


def test_three_seeds_render_mean_sd_and_the_differences():
    run = {
        "pooling": "mean",
        "layers": "top",
        "head": "mlp",
        "validation_accuracy": 0.9,
        "test_accuracy": 0.92,
        "test_accuracy_sd": 0.004,
        "parameters": 10,
        "epochs": 7.3,
        "seeds": [{"seed": s, "validation_accuracy": 0.9, "test_accuracy": 0.92} for s in range(3)],
    }
    features = {
        "checkpoint": "m",
        "examples": {"train": 9, "validation": 1, "test": 5},
        "majority_baseline_test_accuracy": 0.2,
        "runs": [run],
        "differences": [
            {
                "compared": "top mlp: mean − cls",
                "difference": {"mean": 0.3, "sd": 0.01, "n": 3, "verdict": "better"},
            }
        ],
    }
    page = lab15_feature_extraction.render(features)
    assert "3 seed(s) per head" in page and "| mean | top | mlp | 0.900 | 0.920 ± 0.004 |" in page
    assert "| top mlp: mean − cls | +30.00 ± 1.00 (better) |" in page


def test_the_note_sets_beside_it_the_same_checkpoint_fine_tuned_whole(tmp_path):
    import json

    results = {"checkpoint": "minilm_l6"}
    (note,) = lab15_feature_extraction.notes("lab15_feature_extraction", results, tmp_path)
    assert note.endswith("no lab02_finetuning record yet.")
    part = {"model": "minilm_l6", "test_accuracy": 0.956, "test_accuracy_sd": 0.004}
    part["runs"] = [{}, {}, {}]
    (tmp_path / "lab02_finetuning.json").write_text(json.dumps({"results": {"ii": part}}))
    (note,) = lab15_feature_extraction.notes("lab15_feature_extraction", results, tmp_path)
    assert "minilm_l6 in lab02 (part ii" in note and "0.956 ± 0.004 test accuracy over 3" in note
    other = {"checkpoint": "another"}
    assert lab15_feature_extraction.notes("lab15_feature_extraction", other, tmp_path) == []
