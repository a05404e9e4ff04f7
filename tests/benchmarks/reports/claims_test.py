from benchmarks.reports import _claims


def _row(start, label, mean=None, sd=0.01, verdict=None, baseline="full"):
    row = {"start": start, "label": label, "difference": None, "baseline": None}
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


def test_records_without_paired_differences_or_claims_get_no_paragraph():
    old = {"rows": [{"start": "lab01", "label": "adapters", "acc_mean": 0.5}]}
    assert _claims.claim_paragraph("lab03_adapters", old) == []
    assert _claims.claim_paragraph("adaptation", {"rows": [_row("lab01", "x", 0.1, 0.0)]}) == []
    # A testing row that could not be paired (an ensemble) says so.
    rows = [_row("lab01", "full", 0.0, 0.0, "no difference"), _row("lab01", "distillation")]
    (text,) = _claims.claim_paragraph("lab17_distillation", {"rows": rows})
    assert "lab01 distillation: no paired difference" in text
