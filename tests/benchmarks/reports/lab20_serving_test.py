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
