"""benchmarks/serving_profile.py: each serving op counts as its kind, bad thread settings are
named, the record renders, and (slow) a real export's call is split into kinds."""

import argparse
import json

import pytest

from benchmarks.reports import serving_profile as report


@pytest.mark.parametrize(
    ("op_name", "op_type", "kind"),
    [
        ("classify/RegexSplitWithOffsets", "RegexSplitWithOffsets", "tokenizer"),
        ("classify/NormalizeUTF8", "NormalizeUTF8", "tokenizer"),
        ("classify/WordpieceTokenizeWithOffsets", "WordpieceTokenizeWithOffsets", "tokenizer"),
        ("classify/None_Lookup/LookupTableFindV2", "LookupTableFindV2", "tokenizer"),
        ("classify/RaggedTensorToTensor", "RaggedTensorToTensor", "packing"),
        ("classify/ArgMax", "ArgMax", "output"),
        ("classify/labels/GatherV2", "GatherV2", "output"),
        ("encoder/layer_0/attention/query/MatMul", "MatMul", "matmul"),
        ("encoder/layer_0/attention/Softmax", "Softmax", "softmax_and_mask"),
        ("encoder/layer_0/ffn/Erf", "Erf", "gelu"),
    ],
)
def test_each_serving_op_counts_as_its_kind(op_name, op_type, kind):
    from benchmarks.serving_profile import serving_kind

    assert serving_kind(op_name, op_type) == kind


def test_thread_settings_are_intra_inter_pairs_and_bad_ones_are_named():
    from benchmarks.serving_profile import parse_arguments, parse_threads

    assert parse_threads("0:0, 2:1") == [(0, 0), (2, 1)]
    with pytest.raises(argparse.ArgumentTypeError, match=r"intra:inter pairs.*received '2'"):
        parse_threads("0:0,2")
    with pytest.raises(SystemExit):
        parse_arguments(["--trace-calls", "0"])
    with pytest.raises(SystemExit):
        parse_arguments(["--datasets", "trec,squad"])


RECORD = {
    "batch_size": 32,
    "passes": 3,
    "trace_calls": 20,
    "cpu_count": 2,
    "threads": [
        {
            "intra_op": 0,
            "inter_op": 0,
            "datasets": {
                "trec": {
                    "batch1_p50_ms": 9.0,
                    "batch1_p95_ms": 11.0,
                    "batch_sentences_per_s": 400.0,
                }
            },
        },
        {
            "intra_op": 1,
            "inter_op": 1,
            "datasets": {
                "trec": {
                    "batch1_p50_ms": 8.0,
                    "batch1_p95_ms": 10.0,
                    "batch_sentences_per_s": 300.0,
                }
            },
        },
    ],
    "profile": {
        "trec": {
            "1": {"call_ms": 9.0, "op_ms": 10.0, "kinds": {"matmul": 6.0, "tokenizer": 2.5}},
            "32": {"call_ms": 80.0, "op_ms": 100.0, "kinds": {"matmul": 80.0, "tokenizer": 10.0}},
        }
    },
}


def test_the_record_renders_threads_and_kinds():
    page = report.render(RECORD)
    assert "| default | 9.00 / 11.00 ms · 400.0 |" in page
    assert "| 1 : 1 | 8.00 / 10.00 ms · 300.0 |" in page
    assert "| tokenizer | 2.50 (25%) | 10.00 (10%) |" in page
    assert report.headline(RECORD) == (
        "one serving call: trec 9.00 ms at batch 1, tokenizer 25% of op time; lowest batch-1 "
        "latency at threads 1 : 1"
    )


@pytest.mark.slow
def test_a_real_exports_call_is_timed_per_thread_setting_and_split_into_kinds(tmp_path, data_root):
    from benchmarks import serving_profile

    record = tmp_path / "serving_profile.json"
    result = serving_profile.main(
        [
            "--threads",
            "0:0,1:1",
            "--datasets",
            "trec",
            "--max-examples",
            "8",
            "--latency-examples",
            "4",
            "--batch-size",
            "4",
            "--passes",
            "1",
            "--trace-calls",
            "2",
            "--sequence-length",
            "64",
            "--data-dir",
            str(data_root),
            "--record",
            str(record),
        ]
    )
    assert [(row["intra_op"], row["inter_op"]) for row in result["threads"]] == [(0, 0), (1, 1)]
    assert result["threads"][1]["datasets"]["trec"]["batch1_p50_ms"] > 0
    kinds = result["profile"]["trec"]["1"]["kinds"]
    # The profiler sees the session's ops: the tokenizer's and the encoder's matmuls.
    assert kinds["tokenizer"] > 0 and kinds["matmul"] > 0
    assert set(result["profile"]["trec"]) == {"1", "4"}
    recorded = json.loads(record.read_text())["results"]
    assert "tokenizer" in report.render(recorded)
