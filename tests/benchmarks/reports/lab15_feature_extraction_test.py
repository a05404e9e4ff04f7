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
