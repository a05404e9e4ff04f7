from benchmarks.reports import lab13_ner


def _run(method, f1, **extra):
    return {
        "method": method,
        "train_sentences": 14041,
        "train_seconds": 300.0,
        "validation_f1": f1 + 1,
        "test_f1": f1,
        "test_precision": f1 - 1,
        "test_recall": f1 + 1,
        "test_token_accuracy": 97.0,
        "per_type_f1": {"PER": 90.0, "LOC": 88.0, "ORG": 80.0, "MISC": 75.0},
        **extra,
    }


def test_one_seed_records_render_as_before_and_three_seeds_add_sd_and_the_difference():
    old = {"methods": {"softmax": _run("softmax", 88.0), "crf": _run("crf", 88.5)}}
    page = lab13_ner.render(old)
    assert "1 seed(s)" in page and "| softmax | 14,041 | 300 | 89.00 | 88.00 | – |" in page
    new = {
        "methods": {
            "softmax": _run("softmax", 88.0, test_f1_sd=0.3),
            "crf": _run("crf", 88.5, test_f1_sd=0.2),
        },
        "differences": {"crf": {"mean": 0.5, "sd": 0.6, "n": 3, "verdict": "no difference"}},
        "settings": {"seeds": 3, "seed": 0, "epochs": 2},
    }
    page = lab13_ner.render(new)
    assert "3 seed(s)" in page
    assert "| crf | 14,041 | 300 | 89.50 | 88.50 ± 0.20 | +0.50 ± 0.60 (no difference) |" in page
    assert lab13_ner.headline(old) == "CoNLL-2003 test entity F1: softmax 88.00, crf 88.50"
    assert lab13_ner.headline(new) == (
        "CoNLL-2003 test entity F1: softmax 88.00, crf 88.50 (crf − softmax: no difference)"
    )
