from benchmarks.reports import lab19_text_to_text

TEXT_TO_TEXT = {
    "text_to_text_trec_acc": 0.5,
    "encoder_trec_acc": 0.6,
    "random_text_to_text_trec_acc": 0.4,
    "random_encoder_trec_acc": 0.55,
    "labelled": 1000,
    "seeds": 3,
    "parameters": {"encoder": 100, "encoder_decoder": 101, "encoder_decoder_intermediate_dim": 64},
    "pretrain_seconds": {"encoder_decoder": 600.0, "encoder": 601.0},
    "pretraining": {
        "encoder_decoder": {"steps": 10, "seconds": 600.0, "held_out": {"loss": 5.0}},
        "encoder": {"steps": 8, "seconds": 601.0, "held_out": {"mlm_accuracy": 0.1}},
    },
    "budget_minutes": 10.0,
    "learning_rates": {"encoder_decoder_pretrained": 0.001, "encoder_pretrained": 0.0003},
    "curve": {
        "encoder_decoder_pretrained": {"1000": {"mean": 0.5, "sd": 0.01, "invalid": 0.02}},
        "encoder_pretrained": {"1000": {"mean": 0.6, "sd": 0.02, "invalid": 0.0}},
    },
    "other_tasks": {"squad_pretrained": {"exact_match": 1.5, "f1": 4.0, "split": "dev-split"}},
    "span_samples": [
        {"reads": "a <extra_id_0> c", "truth": "<extra_id_0> b", "writes": "<extra_id_0> b"}
    ],
    "export": {"path": "x", "num_beams": 4, "served_equals_keras": True, "examples": []},
}


def test_the_text_to_text_lab_renders_both_families_and_its_headline():
    page = lab19_text_to_text.render(TEXT_TO_TEXT)
    assert "| encoder_decoder_pretrained | 0.001 | 0.500 ± 0.010 (2.0% no label word) |" in page
    assert "| encoder_pretrained | 0.0003 | 0.600 ± 0.020 |" in page
    assert "| squad_pretrained | exact_match 1.5, f1 4.0 |" in page
    assert "equal the Keras model's: True" in page and "written “<extra_id_0> b”" in page
    headline = lab19_text_to_text.headline(TEXT_TO_TEXT)
    assert headline.endswith("text-to-text 0.500 vs encoder 0.600 (random init 0.400 / 0.550)")
    # A record without per-seed runs: no paired difference, and no sentence about its starts.
    assert "seed by seed" not in page and "text_to_text_start" not in page
    assert "majority" not in page


def _cell(*runs):
    return {"mean": sum(runs) / len(runs), "sd": 0.0, "runs": list(runs), "invalid": 0.0}


def _with_runs():
    """The committed record's shape: four starts, two sizes, per-seed runs in each cell."""
    curve = {
        "encoder_decoder_pretrained": {"300": _cell(0.30, 0.40), "1000": _cell(0.50, 0.52)},
        "encoder_decoder_random": {"300": _cell(0.50, 0.50), "1000": _cell(0.50, 0.52)},
        "encoder_pretrained": {"300": _cell(0.50, 0.50), "1000": _cell(0.60, 0.66)},
        "encoder_random": {"300": _cell(0.50, 0.50), "1000": _cell(0.60, 0.60)},
    }
    rates = {name: 0.001 for name in curve}
    return {**TEXT_TO_TEXT, "seeds": 2, "curve": curve, "learning_rates": rates}


def test_text_to_text_against_the_encoder_is_paired_seed_by_seed_per_size():
    results = _with_runs()
    # Per seed at 300: -0.20, -0.10; at 1,000: -0.10, -0.14.
    assert lab19_text_to_text.headline(results).endswith(
        "(random init 0.400 / 0.550); text-to-text − encoder, seed by seed: "
        "300 labels -15.0 ± 7.1 (worse), 1,000 labels -12.0 ± 2.8 (worse)"
    )
    line = lab19_text_to_text.family_line(results)
    assert line.endswith(
        "labelled questions): 300 labels -15.00 ± 7.07 (worse); 1,000 labels -12.00 ± 2.83 (worse)."
    )
    assert line in lab19_text_to_text.render(results)
    # Equal runs at every seed: inside the spread.
    results["curve"]["encoder_pretrained"]["1000"] = _cell(0.50, 0.52)
    assert "1,000 labels +0.0 ± 0.0 (no difference)" in lab19_text_to_text.headline(results)


def test_the_pointer_to_text_to_text_start_needs_the_pretrained_start_below_its_random_init():
    results = _with_runs()
    # Pretrained encoder-decoder minus random: worse at 300, equal at 1,000.
    line = lab19_text_to_text.below_random_line(results)
    assert line.startswith(
        "The pretrained encoder-decoder fine-tunes below its random init (seed by seed, above) "
        "at 300 labels: `benchmarks/text_to_text_start`"
    )
    assert line in lab19_text_to_text.render(results)
    results["curve"]["encoder_decoder_random"]["300"] = _cell(0.30, 0.40)
    assert lab19_text_to_text.below_random_line(results) == ""
    assert "text_to_text_start" not in lab19_text_to_text.render(results)


def test_the_claim_pairs_each_family_s_pretrained_and_random_runs_seed_by_seed():
    def cell(*runs):
        return {"mean": sum(runs) / len(runs), "sd": 0.0, "runs": list(runs), "invalid": 0.0}

    curve = {
        "encoder_decoder_pretrained": {"300": cell(0.30, 0.40)},
        "encoder_decoder_random": {"300": cell(0.50, 0.50)},
        "encoder_pretrained": {"300": cell(0.62, 0.70)},
        "encoder_random": {"300": cell(0.60, 0.60)},
    }
    text = lab19_text_to_text.pretraining_lines({"curve": curve})
    assert "text-to-text at 300 labels -15.00 ± 7.07 (worse)" in text
    assert text.endswith("encoder at 300 labels +6.00 ± 5.66 (better).")
    # A record made before the runs were kept has no seeds to pair.
    del curve["encoder_random"]["300"]["runs"]
    assert lab19_text_to_text.pretraining_lines({"curve": curve}) == ""


def _counted(cell, *landed):
    return {**cell, "at_majority": list(landed), "runs_at_majority": sum(landed)}


def test_a_record_with_the_majority_class_shows_it_in_the_caption_and_counts_per_cell():
    results = _with_runs()
    results["majority_accuracy"] = 0.276
    curve = results["curve"]
    curve["encoder_decoder_pretrained"]["300"] = _counted(_cell(0.30, 0.40), True, False)
    curve["encoder_decoder_pretrained"]["1000"] = {
        **_counted(_cell(0.50, 0.52), False, False),
        "invalid": 0.02,
    }
    curve["encoder_pretrained"]["300"] = _counted(_cell(0.50, 0.50), False, False)
    page = lab19_text_to_text.render(results)
    assert (
        "chosen per start on validation; always answering the majority class scores 0.276 on "
        "test, and each cell counts its runs that landed there (all one class, or accuracy "
        "within a point of it):"
    ) in page
    assert (
        "| encoder_decoder_pretrained | 0.001 | 0.350 ± 0.000 (1 of 2 at majority) | "
        "0.510 ± 0.000 (2.0% no label word; 0 of 2 at majority) |"
    ) in page
    assert (
        "| encoder_pretrained | 0.001 | 0.500 ± 0.000 (0 of 2 at majority) | 0.630 ± 0.000 |"
        in (page)
    )
    # The count is read from the record, not recomputed from the mean.
    curve["encoder_pretrained"]["300"] = _counted(_cell(0.50, 0.50), True, True)
    assert "0.500 ± 0.000 (2 of 2 at majority)" in lab19_text_to_text.render(results)


def test_a_record_without_the_majority_keys_renders_as_before():
    results = _with_runs()
    page = lab19_text_to_text.render(results)
    assert "majority" not in page and "peak rate chosen per start on validation:" in page
    assert "| encoder_decoder_pretrained | 0.001 | 0.350 ± 0.000 | 0.510 ± 0.000 |" in page
    assert lab19_text_to_text.majority_caption(results) == ""


def test_other_tasks_over_seeds_render_mean_sd_and_the_pretrained_start_paired_with_random():
    runs = {
        "sst2_pretrained": {
            "accuracy": 0.8,
            "accuracy_sd": 0.01,
            "invalid": 0.0,
            "invalid_sd": 0.0,
            "runs": {"accuracy": [0.79, 0.81], "invalid": [0.0, 0.0]},
        },
        "sst2_random": {
            "accuracy": 0.6,
            "accuracy_sd": 0.02,
            "invalid": 0.1,
            "invalid_sd": 0.0,
            "runs": {"accuracy": [0.58, 0.62], "invalid": [0.1, 0.1]},
        },
        "squad_pretrained": {
            "exact_match": 2.0,
            "exact_match_sd": 1.0,
            "f1": 5.0,
            "f1_sd": 1.0,
            "runs": {"exact_match": [1.0, 3.0], "f1": [4.0, 6.0]},
            "split": "dev-split",
            "test_questions": 500,
        },
        "squad_random": {
            "exact_match": 1.0,
            "exact_match_sd": 0.0,
            "f1": 3.0,
            "f1_sd": 0.0,
            "runs": {"exact_match": [1.0, 1.0], "f1": [3.0, 3.0]},
            "split": "dev-split",
            "test_questions": 500,
        },
    }
    page = lab19_text_to_text.render({**TEXT_TO_TEXT, "seeds": 2, "other_tasks": runs})
    assert "Other tasks as text to text (mean ± sd of 2 seeds):" in page
    assert "| sst2_pretrained | accuracy 0.8 ± 0.01, invalid 0 ± 0 |" in page
    assert "| squad_random | exact_match 1 ± 0, f1 3 ± 0 |" in page
    # SST-2 in accuracy points (×100; the seeds differ by 21 and 19), SQuAD's F1 already in %
    # (by 1 and 3).
    assert "sst2 accuracy +20.00 ± 1.41 (better)" in page
    assert "squad f1 +2.00 ± 1.41 (better)" in page
    # The one-seed record of before renders as it did.
    assert "Other tasks as text to text (one seed):" in lab19_text_to_text.render(TEXT_TO_TEXT)
