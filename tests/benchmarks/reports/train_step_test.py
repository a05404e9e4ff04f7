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


PEER_FACTS = {
    "goal_ratio": 1.25,
    "versions": {"torch": "2.x", "transformers": "5.x"},
    "threads": {"torch_intra_op": 2, "tensorflow_intra_op_setting": 0, "rule": "as TF"},
}
TORCH = {
    "float32": {
        "torch_tokens_per_s": 3000.0,
        "torch_mfu": 0.2,
        "kbert_tokens_per_s": 4500.0,
        "ratio": 1.5,
        "goal_met": True,
    },
    "mixed_bfloat16": {
        "torch_tokens_per_s": 6000.0,
        "torch_mfu": 0.15,
        "kbert_tokens_per_s": 6600.0,
        "ratio": 1.1,
        "goal_met": False,
    },
}


def test_the_train_step_report_shows_the_pytorch_peer_per_dtype_or_why_it_was_skipped():
    workload = {
        "kbert_tokens_per_s": 5000.0,
        "mfu": 0.31,
        "real_token_fraction": 1.0,
        "configuration": {
            "dtype": "float32",
            "jit_compile": False,
            "batch_size": 32,
            "sequence_length": 128,
        },
        "configurations": [
            {
                "dtype": "float32",
                "jit_compile": False,
                "kbert_tokens_per_s": 5000.0,
                "kbert_mfu": 0.31,
            }
        ],
        "torch": TORCH,
    }
    results = {
        **workload,
        "workload": "full",
        "peak_gflops": {"float32": 450.0, "mixed_bfloat16": 870.0},
        "torch_peer": PEER_FACTS,
    }
    text = train_step.render(results)
    assert "| float32 | no | 5,000 | 31.0% | — | — | — |" in text
    assert "| float32 | 3,000 | 20.0% | 4,500 | 1.50 | yes |" in text
    assert "| mixed_bfloat16 | 6,000 | 15.0% | 6,600 | 1.10 | no |" in text
    assert "torch 2.x, transformers 5.x, 2 intra-op threads" in text and "1.25x PyTorch" in text
    assert train_step.headline(results).endswith("(float32; MFU 31.0%), 1.50x PyTorch in float32")
    skipped = {**results, "torch_peer": {"skipped": "torch not importable"}}
    del skipped["torch"]
    assert "PyTorch peer skipped: torch not importable." in train_step.render(skipped)


def test_the_bfloat16_speedup_is_read_beside_the_peaks_ratio():
    bf16 = {**SPEED_ROW, "dtype": "mixed_bfloat16", "kbert_tokens_per_s": 7500.0}
    workload = {
        "real_token_fraction": 1.0,
        "configuration": {"batch_size": 32, "sequence_length": 128},
        "configurations": [SPEED_ROW, bf16, {**bf16, "jit_compile": True, "kbert_tokens_per_s": 1}],
        "torch": TORCH,
    }
    results = {
        **workload,
        "workload": "full",
        "peak_gflops": {"float32": 400, "mixed_bfloat16": 800},
    }
    text = train_step.render(results)
    # kbert 7,500 / 5,000 without XLA (the XLA row is not read), keras-hub 4,000 / 4,000,
    # PyTorch 6,000 / 3,000; peaks 800 / 400.
    assert (
        "Without XLA, bfloat16 / float32 tokens/s: kbert 1.50×, keras-hub 1.00×, PyTorch 2.00×; "
        "the matmul peaks' ratio in the same run (the gain at equal shares of each peak): 2.00× "
        "(kbert reaches 75% of it)."
    ) in text
    # A record with float32 alone has no such sentence.
    alone = {**results, "configurations": [SPEED_ROW], "torch": {}}
    assert "bfloat16 / float32" not in train_step.render(alone)
