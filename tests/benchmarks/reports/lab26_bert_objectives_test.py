from benchmarks.reports import lab26_bert_objectives
from kbert.metrics.seed_comparison import paired_difference


def _objectives(masked, nsp, sbo, landed):
    """One reading's rows: each objective's runs, `landed` of them at the majority class, and
    the paired difference to MLM alone read the same way."""
    rows = {}
    arms = (("masked", masked), ("masked+nsp", nsp), ("span+sbo", sbo))
    for (objective, runs), count in zip(arms, landed, strict=True):
        rows[objective] = {
            "mean": sum(runs) / len(runs),
            "sd": 0.01,
            "runs": runs,
            "runs_at_majority": count,
        }
        if objective != "masked":
            rows[objective]["vs_masked"] = paired_difference(runs, masked)
    return {"objectives": rows}


RESULTS = {
    "settings": {"steps": 500, "seeds": 3, "poolings": ["cls", "mean"]},
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
            "poolings": {
                # At [CLS], NSP is ahead of MLM alone; read by mean pooling, it is not, and
                # span + SBO is.
                "cls": _objectives(
                    [0.66, 0.67, 0.68], [0.70, 0.70, 0.72], [0.66, 0.67, 0.68], (2, 0, 1)
                ),
                "mean": _objectives(
                    [0.70, 0.71, 0.72], [0.70, 0.71, 0.72], [0.72, 0.73, 0.74], (0, 0, 0)
                ),
            },
        }
    },
}


def test_the_objectives_lab_renders_both_measures_with_paired_differences():
    page = lab26_bert_objectives.render(RESULTS)
    assert "| MLM alone (RoBERTa) | 6.500 | 0.100 | – |" in page
    assert "| MLM + NSP (BERT) | 6.600 | 0.090 | nsp 0.800 |" in page
    assert "| span masking, MLM + SBO (SpanBERT) | 6.700 | 0.080 | sbo 0.050 |" in page
    assert "steps 500" in page and "poolings cls,mean" in page


def test_each_pooling_has_its_section_paired_within_it_with_the_runs_at_majority():
    page = lab26_bert_objectives.render(RESULTS)
    # One section per reading, [CLS] first (the order the lab ran them).
    cls, mean = page.split("Read by mean pooling")
    assert "Read at [CLS]" in cls and "Read at [CLS]" not in mean
    assert cls.count("| mrpc |") == 3 and mean.count("| mrpc |") == 3
    assert "| mrpc | MLM alone (RoBERTa) | 0.670 ± 0.010 (n=3) | – | 2 of 3 | 0.660 |" in cls
    # Per-seed differences to MLM alone at [CLS] 0.04, 0.03, 0.04.
    assert (
        "| mrpc | MLM + NSP (BERT) | 0.707 ± 0.010 (n=3) | +3.67 ± 0.58 (better) | 0 of 3 | "
        "0.660 |" in cls
    )
    assert "+0.00 ± 0.00 (no difference) | 1 of 3 |" in cls.split("SpanBERT) | 0.670")[1]
    # Read by mean pooling, each arm is paired with MLM alone read the same way.
    assert "| mrpc | MLM alone (RoBERTa) | 0.710 ± 0.010 (n=3) | – | 0 of 3 | 0.660 |" in mean
    assert (
        "| mrpc | MLM + NSP (BERT) | 0.710 ± 0.010 (n=3) | +0.00 ± 0.00 (no difference) |" in mean
    )
    assert (
        "| mrpc | span masking, MLM + SBO (SpanBERT) | 0.730 ± 0.010 (n=3) | +2.00 ± 0.00 "
        "(better) | 0 of 3 | 0.660 |" in mean
    )


def test_the_headline_covers_both_readings_and_the_runs_at_majority():
    headline = lab26_bert_objectives.headline(RESULTS)
    assert headline.startswith("MRPC vs MLM alone, points at [CLS] / mean: ")
    assert "masked+nsp +3.7 ± 0.6 (better) / +0.0 ± 0.0 (no difference)" in headline
    assert "span+sbo +0.0 ± 0.0 (no difference) / +2.0 ± 0.0 (better)" in headline
    assert "masked vs" not in headline and "masked +" not in headline
    # 2 + 0 + 1 at [CLS], none read by mean pooling, of 3 objectives × 2 readings × 3 seeds.
    assert headline.endswith("(3 of 18 runs at the majority class)")


def test_mrpc_f1_rows_sit_under_accuracy_beside_the_f1_of_always_paraphrase():
    mrpc = RESULTS["tasks"]["mrpc"]
    f1 = _objectives([0.80, 0.81, 0.82], [0.82, 0.83, 0.84], [0.79, 0.80, 0.81], (0, 0, 0))
    reading = {**mrpc["poolings"]["mean"], "f1_objectives": f1["objectives"]}
    study = {**mrpc, "majority_f1": 0.798, "poolings": {**mrpc["poolings"], "mean": reading}}
    page = lab26_bert_objectives.render({**RESULTS, "tasks": {"mrpc": study}})
    assert "| mrpc F1 | MLM + NSP (BERT) | 0.830 ± 0.010 (n=3) | +2.00 ± 0.00 (better) | – " in page
    assert "| always 'paraphrase' 0.798 |" in page
    # Only the mean reading holds F1 rows here; the accuracy rows are as before.
    assert page.count("| mrpc F1 |") == 3 and page.count("| mrpc |") == 6


def test_each_objective_s_rate_chosen_on_validation_is_a_column_where_recorded():
    mrpc = RESULTS["tasks"]["mrpc"]
    choices = {
        pooling: {
            objective: {"chosen": rate, "chosen_on": "validation_f1", "tried": []}
            for objective, rate in (("masked", 1e-3), ("masked+nsp", 3e-4), ("span+sbo", 1e-3))
        }
        for pooling in ("cls", "mean")
    }
    page = lab26_bert_objectives.render(
        {**RESULTS, "tasks": {"mrpc": {**mrpc, "rate_choices": choices}}}
    )
    assert "| task | objective | peak rate | test score |" in page
    assert "| mrpc | MLM + NSP (BERT) | 0.0003 | 0.707 ± 0.010 (n=3) |" in page
    assert "peak rate" not in lab26_bert_objectives.render(RESULTS)
