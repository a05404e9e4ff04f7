from benchmarks.reports import lab24_slicing
from kbert.metrics.seed_comparison import paired_difference

BASELINE = {"overall": [0.90, 0.91, 0.92], "negation": [0.60, 0.62, 0.64]}
HEADS = {"overall": [0.91, 0.91, 0.93], "negation": [0.70, 0.72, 0.74]}
CONTROL = {"overall": [0.90, 0.90, 0.92], "negation": [0.64, 0.66, 0.68]}


def _rows(runs, compared_with=None, control=None):
    rows = {}
    for measure, values in runs.items():
        rows[measure] = {"mean": sum(values) / 3, "sd": 0.01, "runs": values}
        if compared_with is not None:
            rows[measure]["vs_baseline"] = paired_difference(values, compared_with[measure])
        if control is not None:
            rows[measure]["vs_upweighted"] = paired_difference(values, control[measure])
    return rows


RESULTS = {
    "model": "minilm_l6",
    "settings": {"learning_rate": 0.0003, "seeds": 3},
    "slices": {
        "negation": {"train": 80, "validation": 25, "test": 12, "example": "Why don't cats swim ?"},
        "number": {"train": 0, "validation": 0, "test": 0, "example": None},
    },
    "validation": {
        "overall": 0.9,
        "slices": {
            "negation": {"examples": 25, "accuracy": 0.6, "gap": -0.3},
            "number": {"examples": 0, "accuracy": None, "gap": None},
        },
    },
    "chosen": ["negation"],
    "test_examples": 500,
    "test_slice_examples": {"negation": 12, "number": 0},
    "baseline_test_slices": {"negation": 0.62, "number": None},
    "summary": {
        "baseline": _rows(BASELINE),
        "slice_aware": _rows(HEADS, BASELINE, CONTROL),
        "upweighted": _rows(CONTROL, BASELINE),
    },
    "membership_accuracy": {"negation": 0.99},
    "slice_share": {"train": 0.05, "upweighted": 0.136},
}


def test_the_slicing_lab_renders_slices_and_the_paired_comparison():
    page = lab24_slicing.render(RESULTS)
    assert (
        "| negation (chosen) | 80 / 25 / 12 | 0.600 | -30.0 | 0.620 | Why don't cats swim ? |"
        in page
    )
    assert "| number | 0 / 0 / 0 | – | – | – | – |" in page
    # Heads vs baseline per seed on negation: 0.10 each; vs the control: 0.06 each.
    assert (
        "| slice heads | negation | 12 | 0.720 ± 0.010 (n=3) | +10.00 ± 0.00 (better) | "
        "+6.00 ± 0.00 (better) |" in page
    )
    assert "| plain fine-tuning | overall | 500 | 0.910 ± 0.010 (n=3) | – | – |" in page
    assert "Chosen on validation: negation." in page and "negation 0.990" in page
    assert "share of the loss's weight raised from 0.050 to 0.136" in page
    headline = lab24_slicing.headline(RESULTS)
    assert headline.startswith("slice heads for negation: overall:")
    assert (
        "negation: +10.0 ± 0.0 (better) vs baseline, +6.0 ± 0.0 (better) vs upweighting" in headline
    )


def test_each_model_s_rate_chosen_on_validation_is_named_with_the_rates_tried():
    tried = [
        {"learning_rate": 1e-4, "validation_accuracy": 0.80, "test_accuracy": 0.82},
        {"learning_rate": 3e-4, "validation_accuracy": 0.85, "test_accuracy": 0.81},
    ]
    choices = {
        model: {"chosen": 3e-4, "chosen_on": "validation_accuracy", "tried": tried}
        for model in ("baseline", "slice_aware", "upweighted")
    }
    page = lab24_slicing.render({**RESULTS, "rate_choices": choices})
    label = lab24_slicing.MODELS["slice_aware"]
    assert f"{label} 0.0003 of 0.0001 (0.800 / 0.820), 0.0003 (0.850 / 0.810)" in page
    assert "chosen on overall validation accuracy" not in lab24_slicing.render(RESULTS)
