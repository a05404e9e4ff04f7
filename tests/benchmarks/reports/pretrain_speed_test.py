from benchmarks.reports import pretrain_speed

SIZES = {"preset": "tutorial_50m", "batch_size": 8, "sequence_length": 256}


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


def test_the_pretrain_speed_report_shows_the_pytorch_peer_per_dtype():
    pretrain = {
        "float32": {"tokens_per_s": 900.0, "mfu": 0.2},
        "peak_gflops": {"float32": 450.0, "mixed_bfloat16": 870.0},
        "preset": "tutorial_50m",
        "batch_size": 8,
        "sequence_length": 256,
        "torch_peer": {
            "goal_ratio": 1.25,
            "versions": {"torch": "2.x", "transformers": "5.x"},
            "threads": {"torch_intra_op": 2, "tensorflow_intra_op_setting": 0, "rule": "as TF"},
        },
        "torch": {
            "float32": {
                "torch_tokens_per_s": 600.0,
                "torch_mfu": 0.133,
                "kbert_tokens_per_s": 900.0,
                "ratio": 1.5,
                "goal_met": True,
            }
        },
    }
    text = pretrain_speed.render(pretrain)
    assert "| float32 | 600 | 13.3% | 900 | 1.50 | yes |" in text and "GPT2LMHeadModel" in text
    assert "| torch |" not in text and "| torch_peer |" not in text
    assert pretrain_speed.headline(pretrain).endswith(
        "(float32, MFU 20.0%), 1.50x PyTorch in float32"
    )
    pretrain["torch_peer"] = {"skipped": "GPT-2 is pre-LN"}
    del pretrain["torch"]
    assert "PyTorch peer skipped: GPT-2 is pre-LN." in pretrain_speed.render(pretrain)


def test_the_bfloat16_speedup_is_read_beside_the_peaks_ratio():
    speeds = {
        "float32": {"tokens_per_s": 400.0, "mfu": 0.6},
        "mixed_bfloat16": {"tokens_per_s": 600.0, "mfu": 0.45},
        "mixed_bfloat16+xla": {"tokens_per_s": 100.0, "mfu": 0.1},  # not read: XLA
    }
    pretrain = {**speeds, **SIZES, "peak_gflops": {"float32": 200.0, "mixed_bfloat16": 400.0}}
    assert (
        "bfloat16 / float32 tokens/s: kbert 1.50×; the matmul peaks' ratio in the same run (the "
        "gain at equal shares of each peak): 2.00× (kbert reaches 75% of it)."
    ) in pretrain_speed.render(pretrain)
