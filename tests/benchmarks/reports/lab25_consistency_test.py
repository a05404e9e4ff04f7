from benchmarks.reports import lab25_consistency
from kbert.metrics.seed_comparison import paired_difference


def _arms(supervised, **others):
    rows = {"supervised": {"mean": sum(supervised) / 3, "sd": 0.01, "runs": supervised}}
    for arm, runs in others.items():
        rows[arm] = {"mean": sum(runs) / 3, "sd": 0.01, "runs": runs}
        rows[arm]["vs_supervised"] = paired_difference(runs, supervised)
    return rows


RESULTS = {
    "model": "minilm_l6",
    "settings": {"temperature": 0.85, "seeds": 3},
    "sizes": {
        "100": _arms([0.60, 0.62, 0.61], both=[0.70, 0.71, 0.73], mask=[0.61, 0.60, 0.62]),
        "300": _arms([0.80, 0.81, 0.82], both=[0.81, 0.80, 0.83]),
    },
    "unlabelled_examples": {"100": 4807, "300": 4607},
    "validation_examples": 545,
    "test_examples": 500,
    "majority_accuracy": 0.276,
}


def test_the_consistency_lab_renders_each_arm_with_its_paired_difference():
    page = lab25_consistency.render(RESULTS)
    assert "| 100 | supervised only | 0.610 ± 0.010 (n=3) | – |" in page
    # Per-seed differences 0.10, 0.09, 0.12: mean 10.33, sd 1.53 points.
    assert "| 100 | + consistency (both) | 0.713 ± 0.010 (n=3) | +10.33 ± 1.53 (better) |" in page
    assert "(no difference)" in page.split("| 300 | + consistency (both)")[1].split("\n")[0]
    assert page.count("| 300 |") == 2 and page.count("| 100 |") == 3
    assert "4,807 beside 100 labels" in page and "majority class 0.276" in page
    assert "temperature 0.85" in page
    headline = lab25_consistency.headline(RESULTS)
    assert headline.startswith("TREC-6 at 100 labels: consistency (both) +10.3 ± 1.5 (better)")
    assert "300 labels: consistency (both)" in headline and "supervised" not in headline


def _lab_runs(size, arm, accuracies, shares, best_epochs, epochs):
    """Runs as `labs/lab25_consistency.py` records them (`run_lab`: labels, seed, arm and what
    `train_run` returns); the supervised arm's trainer logs a confident share of 0."""
    return [
        {
            "labels": size,
            "seed": seed,
            "arm": arm,
            "test_accuracy": accuracy,
            "epochs": epochs,
            "steps": 40,
            "best_epoch": best,
            "val_accuracy": accuracy + 0.01,
            "consistency_loss": 0.0 if arm == "supervised" else 0.05,
            "confident_share": share,
            "train_s": 30.0,
        }
        for seed, (accuracy, share, best) in enumerate(
            zip(accuracies, shares, best_epochs, strict=True)
        )
    ]


# The shape the lab writes now: `runs` (every label count, seed and arm), `perturbed_example`
# (`show_perturbations`: the original question and each arm's copy) and every setting.
LAB_RECORD = {
    **RESULTS,
    "settings": {
        "pooling": "mean",
        "learning_rate": 3e-4,
        "batch_size": 16,
        "unlabelled_ratio": 3,
        "sequence_length": 32,
        "epochs": 3,
        "min_steps": 40,
        "mask_rate": 0.15,
        "replace_rate": 0.1,
        "consistency_weight": 1.0,
        "confidence_threshold": 0.45,
        "temperature": 0.85,
        "seeds": 3,
        "dtype": "float32",
    },
    "perturbed_example": {
        "original": "[CLS] what is the capital of peru ? [SEP]",
        "both": "[CLS] what [MASK] the capital of zebra ? [SEP]",
    },
    "runs": [
        *_lab_runs(100, "supervised", [0.60, 0.62, 0.61], [0.0] * 3, [7, 6, 7], 7),
        *_lab_runs(100, "both", [0.70, 0.71, 0.73], [0.20, 0.30, 0.40], [5, 7, 6], 7),
        *_lab_runs(100, "mask", [0.61, 0.60, 0.62], [0.50, 0.50, 0.50], [7, 7, 7], 7),
        *_lab_runs(300, "supervised", [0.80, 0.81, 0.82], [0.0] * 3, [3, 3, 2], 3),
        *_lab_runs(300, "both", [0.81, 0.80, 0.83], [0.60, 0.70, 0.80], [3, 2, 3], 3),
    ],
}


def test_the_lab_s_runs_add_the_confident_share_and_the_epoch_each_seed_kept():
    page = lab25_consistency.render(LAB_RECORD)
    assert (
        "| labels | arm | test accuracy | vs supervised only | confident share | epoch kept |"
        in (page)
    )
    assert "confidence threshold β (`confidence_threshold`)" in page
    # The share is each consistency arm's own, mean ± sd over its seeds (0.2, 0.3, 0.4).
    assert (
        page.split("| 100 | + consistency (both) |")[1]
        .split("\n")[0]
        .endswith("| 0.30 ± 0.10 | 5, 7, 6 of 7 |")
    )
    assert (
        page.split("| 100 | + consistency (mask) |")[1]
        .split("\n")[0]
        .endswith("| 0.50 ± 0.00 | 7, 7, 7 of 7 |")
    )
    assert (
        page.split("| 300 | + consistency (both) |")[1]
        .split("\n")[0]
        .endswith("| 0.70 ± 0.10 | 3, 2, 3 of 3 |")
    )
    # Supervised only reads no unlabelled question: no share, its epochs as kept.
    assert "| 300 | supervised only | 0.810 ± 0.010 (n=3) | – | – | 3, 3, 2 of 3 |" in page
    assert "confidence_threshold 0.45" in page
    # The perturbed copy, Markdown's brackets escaped so [MASK] reads as text.
    assert "- original: \\[CLS\\] what is the capital of peru ? \\[SEP\\]" in page
    assert "- both: \\[CLS\\] what \\[MASK\\] the capital of zebra ? \\[SEP\\]" in page
    # A record without runs (the shape the first test plants) renders as before.
    plain = lab25_consistency.render(RESULTS)
    assert "confident share" not in plain and "unlabelled question and" not in plain
    assert plain.split("\n")[2].startswith("| labels | arm | test accuracy | vs supervised only |")


def test_each_arm_s_rate_chosen_on_validation_is_a_column_and_its_tries_a_line():
    def choice(chosen, tried):
        rows = [
            {"learning_rate": rate, "val_accuracy": val, "test_accuracy": test}
            for rate, val, test in tried
        ]
        return {"chosen": chosen, "chosen_on": "val_accuracy", "tried": rows}

    tries = [(1e-4, 0.70, 0.71), (3e-4, 0.75, 0.74), (9e-4, 0.74, 0.78)]
    choices = {
        "100": {
            "supervised": choice(3e-4, tries),
            "both": choice(9e-4, tries),
            "mask": choice(1e-4, []),
        },
        "300": {"supervised": choice(3e-4, tries), "both": choice(3e-4, tries)},
    }
    page = lab25_consistency.render({**RESULTS, "rate_choices": choices})
    assert "| labels | arm | peak rate | test accuracy |" in page
    assert "| 100 | + consistency (both) | 0.0009 | 0.713 ± 0.010 (n=3) |" in page
    assert (
        "- 100 labels, supervised only: 0.0003 of 0.0001 (0.700 / 0.710), 0.0003 (0.750 / "
        "0.740), 0.0009 (0.740 / 0.780)"
    ) in page
    assert "- 100 labels, + consistency (mask): 0.0001\n" in page  # one rate: no choice
    # A record made before the choice: no rate column, no lines.
    assert "peak rate" not in lab25_consistency.render(RESULTS)
