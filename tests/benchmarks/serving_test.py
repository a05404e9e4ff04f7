"""benchmarks/serving.py on a few TREC-6 questions and IMDb reviews: every side runs and agrees.

The kbert side (the export padded to the longest row against the one packed to sequence_length,
the one computing in bfloat16 and the one sending batches of up to 2 rows through XLA, all
through the session loader) always runs; the ONNX Runtime
side only where onnxruntime, torch and transformers are installed (benchmark-only peers,
benchmarks/requirements-peer.txt).
"""

import importlib.util
import json

import pytest

from benchmarks.reports import serving as serving_report

PEERS = ("onnxruntime", "onnx", "torch", "transformers")


def run_benchmark(sides, data_root, tmp_path, *flags):
    from benchmarks import serving

    record = tmp_path / "serving.json"
    result = serving.main(
        [
            "--sides",
            ",".join(sides),
            "--max-examples",
            "6",
            "--batch-size",
            "4",
            "--passes",
            "1",
            "--sequence-length",
            "64",
            "--data-dir",
            str(data_root),
            "--record",
            str(record),
            *flags,
        ]
    )
    assert json.loads(record.read_text())["results"] == json.loads(json.dumps(result))
    return result


def check_timings(entry, sides):
    assert entry["examples"] == 6
    for side in sides:
        timing = entry[side]
        assert 0 < timing["batch1_p50_ms"] <= timing["batch1_p95_ms"]
        assert timing["batch_sentences_per_s"] > 0


@pytest.mark.slow
def test_the_kbert_side_pads_to_the_longest_with_the_same_outputs(minilm_dir, data_root, tmp_path):
    sides = ("kbert", "kbert_fixed", "kbert_bf16", "kbert_xla")
    result = run_benchmark(sides, data_root, tmp_path, "--xla-rows", "2")
    assert sorted(result["datasets"]) == ["imdb", "trec"]
    for entry in result["datasets"].values():
        check_timings(entry, sides)
        assert entry["max_abs_diff_kbert_fixed"] < 1e-4
        assert entry["max_abs_diff_kbert_xla"] < 1e-4
        # Measured, not bounded here: random head weights leave the classes close together.
        assert 0.0 <= entry["label_agreement_kbert_bf16"] <= 1.0
        assert 0.0 < entry["max_abs_diff_kbert_bf16"] < 1.0
    text = serving_report.render(result)
    assert "kbert SavedModel, rows at sequence_length" in text
    assert "kbert SavedModel, small batches through XLA" in text


@pytest.mark.slow
def test_the_onnx_runtime_side_agrees_with_kbert(minilm_dir, data_root, tmp_path):
    missing = [name for name in PEERS if importlib.util.find_spec(name) is None]
    if missing:
        pytest.skip(
            f"the ONNX Runtime side needs the benchmark-only peers {missing} "
            "(bash benchmarks/install_peers.sh, then PYTHONPATH=../kbert-peers)"
        )
    sides = ("kbert", "ort", "ort_optimized")
    result = run_benchmark(sides, data_root, tmp_path)
    for entry in result["datasets"].values():
        check_timings(entry, sides)
        for peer in ("ort", "ort_optimized"):
            # Same weights and tokens; float32 kernels differ (fused attention, GELU).
            assert entry[f"max_abs_diff_{peer}"] < 1e-3, peer
            assert entry[f"ratio_kbert_over_{peer}"]["batch"] > 0
    assert "onnxruntime" in result["versions"]
    assert "(ORT " in serving_report.headline(result)
