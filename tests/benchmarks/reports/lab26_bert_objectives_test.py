from benchmarks.reports import lab26_bert_objectives
from kbert.metrics.seed_comparison import paired_difference


def _objectives(masked, nsp, sbo):
    rows = {}
    for objective, runs in (("masked", masked), ("masked+nsp", nsp), ("span+sbo", sbo)):
        rows[objective] = {"mean": sum(runs) / len(runs), "sd": 0.01, "runs": runs}
        if objective != "masked":
            rows[objective]["vs_masked"] = paired_difference(runs, masked)
    return rows


RESULTS = {
    "settings": {"steps": 500, "seeds": 3},
    "pretraining": {
        "intrinsic": {
            "masked": {"mlm_loss": 6.5, "mlm_accuracy": 0.1, "train_s": 60.0},
            "masked+nsp": {"mlm_loss": 6.6, "mlm_accuracy": 0.09, "nsp_accuracy": 0.8},
            "span+sbo": {"mlm_loss": 6.7, "mlm_accuracy": 0.08, "sbo_accuracy": 0.05},
        },
        "runs": {},
    },
    "tasks": {
        "mrpc": {
            "train_examples": 1000,
            "test_examples": 500,
            "majority_accuracy": 0.66,
            "objectives": _objectives([0.66, 0.67, 0.68], [0.70, 0.70, 0.72], [0.66, 0.67, 0.68]),
        }
    },
}


def test_the_objectives_lab_renders_both_measures_with_paired_differences():
    page = lab26_bert_objectives.render(RESULTS)
    assert "| MLM alone (RoBERTa) | 6.500 | 0.100 | – |" in page
    assert "| MLM + NSP (BERT) | 6.600 | 0.090 | nsp 0.800 |" in page
    assert "| span masking, MLM + SBO (SpanBERT) | 6.700 | 0.080 | sbo 0.050 |" in page
    assert "| mrpc | MLM alone (RoBERTa) | 0.670 ± 0.010 (n=3) | – | 0.660 |" in page
    # Per-seed differences to MLM alone 0.04, 0.03, 0.04.
    assert "| mrpc | MLM + NSP (BERT) | 0.707 ± 0.010 (n=3) | +3.67 ± 0.58 (better) |" in page
    assert "+0.00 ± 0.00 (no difference)" in page.split("SpanBERT) | 0.670")[1].split("\n")[0]
    assert "steps 500" in page
    headline = lab26_bert_objectives.headline(RESULTS)
    assert "MRPC masked+nsp vs MLM alone +3.7 ± 0.6 (better) points" in headline
    assert "MRPC span+sbo" in headline and "MRPC masked vs" not in headline
