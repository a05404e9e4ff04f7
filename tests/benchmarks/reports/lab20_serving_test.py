from benchmarks.reports import lab20_serving


def test_the_serving_lab_renders_its_timings_and_headline():
    serving = {
        "export_sentences_per_s": 700.0,
        "keras_sentences_per_s": 350.0,
        "max_abs_diff": 1.5e-6,
        "test_accuracy": 0.96,
        "timings": {
            "export_batch32": {
                "batch_size": 32,
                "p50_ms": 45.0,
                "p95_ms": 51.0,
                "sentences_per_s": 700.0,
            }
        },
    }
    assert "| export_batch32 | 32 | 45.00 | 51.00 | 700.0 |" in lab20_serving.render(serving)
    assert "700 sentences/s from raw text vs 350 through model.predict (2.00x)" in (
        lab20_serving.headline(serving)
    )
    # enough significant digits: 1.5e-06 is not 2e-06
    assert "outputs differ by at most 1.5e-06" in lab20_serving.headline(serving)


def _row(batch_size, p50, p95, per_second):
    return {"batch_size": batch_size, "p50_ms": p50, "p95_ms": p95, "sentences_per_s": per_second}


def test_a_bfloat16_run_renders_both_exports_side_by_side_with_their_difference():
    serving = {
        "task": "sst2",
        "dtype": "bfloat16",
        "export_sentences_per_s": 900.0,
        "keras_sentences_per_s": 300.0,
        "max_abs_diff": 2.5e-3,
        "test_accuracy": 0.9,
        "timings": {"export_batch32": _row(32, 35.0, 40.0, 900.0)},
        "dtype_comparison": {
            "evaluation": "SST-2 GLUE dev",
            "examples": 872,
            "float32_accuracy": 0.905,
            "bfloat16_accuracy": 0.9,
            "accuracy_difference": 0.9 - 0.905,
            "label_agreement": 0.99,
            "max_abs_probability_difference": 0.031,
            "float32_timings": {
                "batch1": _row(1, 10.0, 12.0, 95.0),
                "batch32": _row(32, 53.3, 60.0, 600.0),
            },
            "bfloat16_timings": {
                "batch1": _row(1, 8.0, 9.5, 120.0),
                "batch32": _row(32, 35.0, 40.0, 900.0),
            },
        },
    }
    text = lab20_serving.render(serving)
    assert "MiniLM-L6 fine-tuned on SST-2 (GLUE dev accuracy 0.900), exported computing in " in text
    assert "on SST-2 GLUE dev (872 texts)" in text
    assert "| float32 | 0.9050 | 600.0 | 10.00 | 12.00 |" in text
    assert "| bfloat16 | 0.9000 | 900.0 | 8.00 | 9.50 |" in text
    assert "bfloat16 − float32 accuracy: -0.50 points; the same label on 99.00%" in text
    assert "the largest change of a probability: 3.1e-02" in text
    assert "throughput at batch 32: 1.50x." in text
    assert lab20_serving.headline(serving).startswith("SST-2 MiniLM-L6 exported")
    assert "bfloat16 − float32 accuracy -0.50 points" in lab20_serving.headline(serving)


def test_every_lab20_record_name_renders_with_the_lab20_family():
    from benchmarks.report import FAMILIES, for_record

    for name in ("lab20_serving", "lab20_serving_bf16", "lab20_serving_sst2_bf16"):
        assert for_record(FAMILIES, name) is lab20_serving
