from benchmarks.reports import step_profile

RESULTS = {
    "batch_size": 32,
    "sequence_length": 128,
    "trace_steps": 2,
    "models": {
        "minilm_l6": {
            "float32": {
                "step_ms": 2000.0,
                "tokens_per_s": 2048.0,
                "op_ms": 3500.0,
                "kinds": {"matmul": 2500.0, "cast": 0.0, "layer_norm": 300.0, "other": 700.0},
            },
            "mixed_bfloat16": {
                "step_ms": 1600.0,
                "tokens_per_s": 2560.0,
                "op_ms": 3000.0,
                "kinds": {"matmul": 1200.0, "cast": 900.0, "layer_norm": 400.0, "other": 500.0},
            },
            "bf16_over_fp32": {"matmul": 0.48, "layer_norm": 1.33, "other": 0.71},
        }
    },
}


def test_the_table_gives_each_kind_per_dtype_and_their_ratio():
    text = step_profile.render(RESULTS)
    assert "|  | float32 | mixed_bfloat16 | bf16 / fp32 |" in text
    assert "| step (wall) | 2,000.0 ms | 1,600.0 ms | 0.80 |" in text
    assert "| matmul | 2,500.0 | 1,200.0 | 0.48 |" in text
    assert "| cast | 0.0 | 900.0 |  |" in text  # no float32 time: no ratio


def test_the_headline_names_the_kind_that_adds_the_most_time_in_bfloat16():
    text = step_profile.headline(RESULTS)
    assert text == "training step time, bf16 / fp32: minilm_l6 0.80 (op time added most by cast)"
