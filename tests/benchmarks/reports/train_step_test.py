from benchmarks.reports import train_step

SPEED_ROW = {
    "dtype": "float32",
    "jit_compile": False,
    "kbert_tokens_per_s": 5000.0,
    "kbert_mfu": 0.31,
    "keras_hub_tokens_per_s": 4000.0,
    "keras_hub_mfu": 0.25,
    "ratio": 1.25,
}


def test_the_train_step_benchmark_renders_every_workload_and_its_headline():
    workload = {
        "kbert_tokens_per_s": 5000.0,
        "keras_hub_tokens_per_s": 4000.0,
        "ratio": 1.25,
        "mfu": 0.31,
        "keras_hub_mfu": 0.25,
        "real_token_fraction": 1.0,
        "configuration": {
            "dtype": "float32",
            "jit_compile": False,
            "batch_size": 32,
            "sequence_length": 128,
        },
        "configurations": [SPEED_ROW, {**SPEED_ROW, "dtype": "mixed_bfloat16", "ratio": 2.5}],
    }
    results = {
        **workload,
        "workload": "full",
        "sst2": {**workload, "real_token_fraction": 0.2},
        "peak_gflops": {"float32": 450.0, "mixed_bfloat16": 870.0},
    }
    text = train_step.render(results)
    assert "| float32 | no | 5,000 | 31.0% | 4,000 | 25.0% | 1.25 |" in text
    assert "| mixed_bfloat16 | no | 5,000 | 31.0% | 4,000 | 25.0% | 2.50 |" in text
    assert "Workload `sst2` (20% of the positions" in text and "bfloat16 870 GFLOP/s" in text
    assert train_step.headline(results).endswith("1.25x keras-hub in the same setting")
