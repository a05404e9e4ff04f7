from benchmarks.reports import pretrain_speed


def test_the_pretrain_speed_benchmark_renders_its_table_and_headline():
    pretrain = {
        "float32": {"tokens_per_s": 900.0, "mfu": 0.2},
        "mixed_bfloat16+xla": {"tokens_per_s": 1500.5, "mfu": 0.17},
        "peak_gflops": {"float32": 450.0, "mixed_bfloat16": 870.0},
        "preset": "tutorial_50m",
        "parameters": 51_000_000,
        "batch_size": 8,
        "sequence_length": 256,
    }
    text = pretrain_speed.render(pretrain)
    assert "| mixed_bfloat16+xla | 1,500 | 17.0% |" in text and "51.0M parameters" in text
    assert "(mixed_bfloat16+xla, MFU 17.0%)" in pretrain_speed.headline(pretrain)
