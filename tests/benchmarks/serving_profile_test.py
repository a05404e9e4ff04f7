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


def timing(p50, p95, speed):
    return {"batch1_p50_ms": p50, "batch1_p95_ms": p95, "batch_sentences_per_s": speed}


def row(onednn, export, intra, inter, *values):
    return {
        "onednn": onednn,
        "export": export,
        "intra_op": intra,
        "inter_op": inter,
        "datasets": {"trec": timing(*values)},
    }


RECORD = {
    "batch_size": 32,
    "passes": 3,
    "trace_calls": 20,
    "xla_rows": 4,
    "cpu_count": 2,
    "threads": [
        row("on", "plain", 0, 0, 9.0, 11.0, 400.0),
        row("on", "plain", 1, 1, 8.0, 10.0, 300.0),
        row("off", "xla", 0, 0, 5.0, 7.0, 410.0),
    ],
    "sweep": {
        "off": {
            "dataset": "trec",
            "sizes": {
                "1": {"plain": 100.0, "xla": 150.0},
                "4": {"plain": 200.0, "xla": 260.0},
                "16": {"plain": 440.0, "xla": 370.0},
            },
        }
    },
    "profile": {
        "on": {
            "trec": {
                "1": {"call_ms": 9.0, "op_ms": 10.0, "kinds": {"matmul": 6.0, "tokenizer": 2.5}},
                "32": {
                    "call_ms": 80.0,
                    "op_ms": 100.0,
                    "kinds": {"matmul": 80.0, "tokenizer": 10.0},
                },
            }
        },
        "off": {
            "trec": {
                "1": {"call_ms": 7.0, "op_ms": 8.0, "kinds": {"matmul": 6.0}},
                "32": {"call_ms": 70.0, "op_ms": 90.0, "kinds": {"matmul": 80.0}},
            }
        },
    },
}


def test_the_record_renders_kernels_exports_threads_and_kinds():
    page = report.render(RECORD)
    assert "| oneDNN | plain | default | 9.00 / 11.00 ms · 400.0 |" in page
    assert "| oneDNN | plain | 1 : 1 | 8.00 / 10.00 ms · 300.0 |" in page
    assert "| TensorFlow's own (Eigen) | XLA for small batches | default | 5.00 / 7.00 ms" in page
    assert "| tokenizer | 2.50 (25%) | 10.00 (10%) |" in page
    assert "**trec, TensorFlow's own (Eigen) kernels, plain export**" in page
    assert "XLA ahead at batch sizes 1, 4 (`--xla-rows` is 4)" in page
    assert "| 16 | 440.0 | 370.0 | 0.84× |" in page
    assert report.headline(RECORD) == (
        "one serving call at batch 1: oneDNN trec 9.00 ms; TensorFlow's own (Eigen) trec "
        "7.00 ms; lowest batch-1 latency: TensorFlow's own (Eigen), XLA for small batches "
        "(4 rows), threads default"
    )


def test_unknown_kernels_and_exports_are_named(capsys):
    from benchmarks.serving_profile import parse_arguments

    assert parse_arguments([]).onednn == ["on", "off"]
    assert parse_arguments(["--no-sweep"]).sweep_sizes == []
    for flag, value, named in (
        ("--onednn", "maybe", "--onednn must name some of ('on', 'off'); received ['maybe']"),
        ("--exports", "plain,onnx", "--exports must name some of ('plain', 'xla'); received"),
        ("--xla-rows", "0", "--xla-rows must be"),
        ("--sweep-sizes", "1,64", "--sweep-sizes must be batch sizes from 1 to 32"),
    ):
        with pytest.raises(SystemExit):
            parse_arguments([flag, value])
        assert named in capsys.readouterr().err


@pytest.mark.slow
def test_a_real_exports_call_is_timed_per_thread_setting_and_split_into_kinds(tmp_path, data_root):
    from benchmarks import serving_profile

    record = tmp_path / "serving_profile.json"
    result = serving_profile.main(
        [
            "--threads",
            "0:0,1:1",
            "--xla-rows",
            "1",
            "--sweep-sizes",
            "1,2",
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
    settings = [
        (row["onednn"], row["export"], row["intra_op"], row["inter_op"])
        for row in result["threads"]
    ]
    assert settings == [
        (onednn, export, intra, intra)
        for onednn in ("on", "off")
        for export in ("plain", "xla")
        for intra in (0, 1)
    ]
    assert all(row["datasets"]["trec"]["batch1_p50_ms"] > 0 for row in result["threads"])
    for onednn in ("on", "off"):
        sweep = result["sweep"][onednn]
        assert sweep["dataset"] == "trec" and list(sweep["sizes"]) == ["1", "2"]
        assert all(speed > 0 for speeds in sweep["sizes"].values() for speed in speeds.values())
    for onednn in ("on", "off"):
        kinds = result["profile"][onednn]["trec"]["1"]["kinds"]
        # The profiler sees the session's ops: the tokenizer's and the encoder's matmuls.
        assert kinds["tokenizer"] > 0 and kinds["matmul"] > 0
        assert set(result["profile"][onednn]["trec"]) == {"1", "4"}
    # The kernels differ: oneDNN's ops carry its prefix, TensorFlow's own do not.
    assert any("Mkl" in op for op in result["profile"]["on"]["trec"]["1"]["top_ops"])
    assert not any("Mkl" in op for op in result["profile"]["off"]["trec"]["1"]["top_ops"])
    recorded = json.loads(record.read_text())["results"]
    assert "tokenizer" in report.render(recorded)
