from benchmarks.reports import serving


def test_the_serving_speed_benchmark_renders_every_side_and_its_headline():
    timing = {"batch1_p50_ms": 4.0, "batch1_p95_ms": 6.5, "batch_sentences_per_s": 300.0}
    results = {
        "checkpoint": "MiniLM-L6-H384-uncased",
        "num_classes": 6,
        "sequence_length": 128,
        "batch_size": 32,
        "passes": 3,
        "cpu_count": 2,
        "versions": {"tensorflow": "2.21.0"},
        "datasets": {
            "trec": {
                "examples": 500,
                "latency_examples": 500,
                "kbert": timing,
                "ort": {**timing, "batch1_p50_ms": 8.0, "batch_sentences_per_s": 150.0},
                "max_abs_diff_ort": 2.5e-6,
                "ratio_kbert_over_ort": {"batch": 2.0, "batch1_p50": 2.0},
            },
            "imdb": {"examples": 20, "latency_examples": 20, "kbert": timing},
        },
    }
    text = serving.render(results)
    assert "trec (500 test texts):" in text and "imdb (20 test texts):" in text
    assert "| kbert SavedModel (session loader) | 4.00 | 6.50 | 300.0 |  |  |" in text
    assert (
        "| HF fast tokenizer + ONNX Runtime | 8.00 | 6.50 | 150.0 | 2.00× / 2.00× | 2.5e-06 |"
        in text
    )
    assert "batch 32 sentences/s" in text and "on 2 cores" in text
    # Every row of both tables has the header's six cells (no "|" inside a cell).
    assert {line.count("|") for line in text.splitlines() if line.startswith("|")} == {7}
    assert serving.headline(results) == (
        "classify from raw text, batch 32 / 1: trec 300/s, p50 4 ms "
        "(ORT 150/s, 8 ms); imdb 300/s, p50 4 ms"
    )


TIMING = {"batch1_p50_ms": 4.0, "batch1_p95_ms": 6.5, "batch_sentences_per_s": 300.0}


def trec_record(entry, **settings):
    """A record of one dataset (TREC-6, 500 texts) whose kbert side is `TIMING`, plus `entry`."""
    return {
        "num_classes": 6,
        "sequence_length": 128,
        "batch_size": 32,
        "passes": 3,
        "cpu_count": 2,
        **settings,
        "datasets": {"trec": {"examples": 500, "kbert": TIMING, **entry}},
    }


def test_the_bfloat16_side_renders_its_row_and_label_agreement():
    results = trec_record(
        {
            "kbert_bf16": {**TIMING, "batch_sentences_per_s": 600.0},
            "max_abs_diff_kbert_bf16": 0.03,
            "label_agreement_kbert_bf16": 0.994,
            "ratio_kbert_over_kbert_bf16": {"batch": 0.5, "batch1_p50": 1.0},
        }
    )
    text = serving.render(results)
    assert (
        "| kbert SavedModel in bfloat16 | 4.00 | 6.50 | 600.0 | 1.00× / 0.50× | 3.0e-02 |" in text
    )
    assert "gives the float32 export's label to trec 99.4% of the texts" in text


def test_the_xla_side_names_its_rows():
    results = trec_record(
        {
            "kbert_xla": {**TIMING, "batch1_p50_ms": 2.0},
            "max_abs_diff_kbert_xla": 1e-7,
            "ratio_kbert_over_kbert_xla": {"batch": 1.0, "batch1_p50": 0.5},
        },
        xla_rows=4,
    )
    assert (
        "| kbert SavedModel, small batches through XLA (1 to 4 rows) | 2.00 | 6.50 | 300.0 | "
        "0.50× / 1.00× | 1.0e-07 |"
    ) in serving.render(results)
    assert serving.headline(results) == (
        "classify from raw text, batch 32 / 1: trec 300/s, p50 4 ms (XLA 2 ms)"
    )
