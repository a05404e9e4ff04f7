from benchmarks.reports import _claims


def _row(start, label, mean=None, sd=0.01, verdict=None, baseline="full", acc=None):
    row = {"start": start, "label": label, "difference": None, "baseline": None, "acc_mean": acc}
    if mean is not None:
        row["difference"] = {"mean": mean, "sd": sd, "n": 3, "verdict": verdict}
        row["baseline"] = baseline
    return row


def test_an_adapters_record_reads_as_the_claim_then_each_row_s_difference():
    rows = [
        _row("minilm_l6", "full"),
        _row("minilm_l6", "feature_extraction", -0.2, 0.01, "worse"),  # tests no claim here
        _row("minilm_l6", "adapters_tutorial", -0.004, 0.006, "no difference"),
        _row("minilm_l6", "adapters (chosen: minilm_l6)", -0.05, 0.01, "worse"),
        # lab01's choice runs on MiniLM-L6 too, but it is not MiniLM-L6's own setting.
        _row("minilm_l6", "adapters (chosen: lab01)", 0.02, 0.01, "better"),
        _row("lab01", "adapters (chosen: lab01)", -0.03, 0.05, "no difference"),
    ]
    (text,) = _claims.claim_paragraph("lab03_adapters", {"rows": rows})
    assert text.startswith("What the source claims: the tutorial's hands-on #3")
    assert "minilm_l6 adapters_tutorial vs full: -0.40 ± 0.60 (no difference), the claim shows" in (
        text
    )
    assert (
        "minilm_l6 adapters (chosen: minilm_l6) vs full: -5.00 ± 1.00 (worse), below it beyond "
        "the seeds' spread: the claim does not show"
    ) in text
    assert "minilm_l6 adapters (chosen: lab01)" not in text and "feature_extraction" not in text
    assert "lab01 adapters (chosen: lab01) vs full: -3.00 ± 5.00 (no difference), no " in text


def test_help_lag_and_no_claim_rows_say_what_their_source_expects():
    rows = [
        _row("lab01", "discriminative_lr", 0.02, 0.01, "better"),
        _row("lab01", "layerwise_decay", 0.0, 0.01, "no difference"),
        _row("lab01", "l2_sp", -0.03, 0.01, "worse"),
    ]
    (text,) = _claims.claim_paragraph("lab05_discriminative_lr", {"rows": rows})
    assert "discriminative_lr vs full: +2.00 ± 1.00 (better), the claim shows" in text
    assert "layerwise_decay vs full: +0.00 ± 1.00 (no difference), no gain beyond" in text
    assert text.endswith("l2_sp vs full: -3.00 ± 1.00 (worse), worse.")
    peft = [_row("minilm_l6", "prompt_tuning", -0.3, 0.02, "worse")]
    (text,) = _claims.claim_paragraph("lab16_peft", {"rows": peft})
    assert "prompt_tuning vs full: -30.00 ± 2.00 (worse), behind, as the source expects" in text
    tutorial = [_row("lab01", "multitask_tutorial", -0.01, 0.02, "no difference", "full_longer")]
    (text,) = _claims.claim_paragraph("lab06_multitask", {"rows": tutorial})
    assert "lab01 multitask_tutorial vs full_longer: -1.00 ± 2.00" in text


def test_a_row_expected_to_lag_at_the_majority_class_is_not_read_as_the_lag():
    rows = [
        _row("lab01", "prompt_tuning", -0.45, 0.02, "worse", acc=0.28),
        _row("minilm_l6", "prompt_tuning", -0.2, 0.02, "worse", acc=0.74),
        _row("lab01", "lora", -0.45, 0.02, "worse", acc=0.28),  # expects "match": as before
    ]
    (text,) = _claims.claim_paragraph("lab16_peft", {"rows": rows}, majority=0.276)
    assert (
        "lab01 prompt_tuning vs full: -45.00 ± 2.00 (worse), at the majority class (test 0.280 "
        "against 0.276, within 1 point), not read as the lag the source expects"
    ) in text
    assert "minilm_l6 prompt_tuning vs full: -20.00 ± 2.00 (worse), behind, as the source" in text
    assert "lab01 lora vs full: -45.00 ± 2.00 (worse), below it beyond the seeds' spread" in text
    # One point above the majority counts as at it; more than a point does not.
    rows[0]["acc_mean"] = 0.286
    (text,) = _claims.claim_paragraph("lab16_peft", {"rows": rows[:1]}, majority=0.276)
    assert "at the majority class (test 0.286 against 0.276" in text
    rows[0]["acc_mean"] = 0.29
    (text,) = _claims.claim_paragraph("lab16_peft", {"rows": rows[:1]}, majority=0.276)
    assert text.endswith("(worse), behind, as the source expects.")
    # No majority known (no grid for this task): read as found.
    rows[0]["acc_mean"] = 0.28
    (text,) = _claims.claim_paragraph("lab16_peft", {"rows": rows[:1]})
    assert text.endswith("(worse), behind, as the source expects.")


def test_records_without_paired_differences_or_claims_get_no_paragraph():
    old = {"rows": [{"start": "lab01", "label": "adapters", "acc_mean": 0.5}]}
    assert _claims.claim_paragraph("lab03_adapters", old) == []
    assert _claims.claim_paragraph("adaptation", {"rows": [_row("lab01", "x", 0.1, 0.0)]}) == []
    # A testing row that could not be paired (an ensemble) says so.
    rows = [_row("lab01", "full", 0.0, 0.0, "no difference"), _row("lab01", "distillation")]
    (text,) = _claims.claim_paragraph("lab17_distillation", {"rows": rows})
    assert "lab01 distillation: no paired difference" in text


def test_the_tutorial_s_own_comparison_is_paired_from_the_runs():
    def runs(*accuracies):
        return [{"seed": seed, "accuracy": value} for seed, value in enumerate(accuracies)]

    tutorial = _row("lab01", "multitask_tutorial", -0.01, 0.02, "no difference", "full_longer")
    rows = [
        {**_row("lab01", "full"), "runs": runs(0.70, 0.72, 0.71)},
        {**_row("lab01", "full_longer", 0.02, 0.005, "better"), "runs": runs(0.72, 0.74, 0.73)},
        {**tutorial, "runs": runs(0.73, 0.74, 0.72)},
    ]
    (text,) = _claims.claim_paragraph("lab06_multitask", {"rows": rows})
    # The table's fair pairing (6 epochs each) first, then the tutorial's own (6 against 3).
    assert "lab01 multitask_tutorial vs full_longer: -1.00 ± 2.00 (no difference)" in text
    assert text.endswith(
        "lab01 multitask_tutorial vs full (the source's own comparison): +2.00 ± 1.00 "
        "(better), the claim shows."
    )
    # A record without runs (made before rows kept them): the table's pairing only.
    older = [{key: value for key, value in row.items() if key != "runs"} for row in rows]
    (text,) = _claims.claim_paragraph("lab06_multitask", {"rows": older})
    assert "the source's own comparison" not in text


def test_discriminative_rates_at_factor_1_are_not_read_as_ulmfit_s_claim():
    rows = [
        _row("lab01", "discriminative_lr factor=1 (chosen: lab01)", 0.02, 0.01, "better"),
        _row("lab01", "discriminative_lr factor=1.6 (chosen: lab01)", 0.02, 0.01, "better"),
    ]
    (text,) = _claims.claim_paragraph("lab05_discriminative_lr", {"rows": rows})
    assert (
        "factor=1 (chosen: lab01) vs full: +2.00 ± 1.00 (better), better; at factor 1 every "
        "group trains at the top rate, so this row does not test the claim"
    ) in text
    assert "factor=1.6 (chosen: lab01) vs full: +2.00 ± 1.00 (better), the claim shows" in text
