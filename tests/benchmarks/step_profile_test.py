"""benchmarks/step_profile: op kinds, and a traced step of a tiny model."""

import pytest

from benchmarks import step_profile


@pytest.mark.parametrize(
    "op_name, op_type, kind",
    [
        ("model/encoder/block_0/attention/query/MatMul", "_MklNativeFusedMatMul", "matmul"),
        ("model/encoder/block_0/attention/Softmax", "_MklSoftmax", "softmax_and_mask"),
        ("model/encoder/block_0/attention_layer_norm/Rsqrt", "Rsqrt", "layer_norm"),
        ("model/encoder/block_0/ffn/gelu/Erf", "Erf", "gelu"),
        ("model/encoder/block_0/Cast_3", "Cast", "cast"),
        ("model/encoder/token_embedding/GatherV2", "GatherV2", "embedding"),
        ("model/encoder/block_0/attention/transpose", "Transpose", "data_movement"),
        ("compile_loss/sparse_categorical_crossentropy/Mean", "Mean", "loss"),
        ("adamw/Mul_5", "Mul", "optimizer"),
        ("adam_w/Sqrt", "Sqrt", "optimizer"),
        ("model/encoder/block_0/attention_norm/moments/mean", "Mean", "layer_norm"),
        ("model/encoder/block_0/stateless_dropout/random", "StatelessRandomUniformV2", "dropout"),
        ("adamw/AssignSubVariableOp", "AssignSubVariableOp", "optimizer"),
        ("model/encoder/block_0/add", "AddV2", "other"),
    ],
)
def test_each_op_counts_as_its_kind(op_name, op_type, kind):
    assert step_profile.op_kind(op_name, op_type) == kind


def test_a_traced_step_of_a_tiny_model_is_split_into_kinds(capsys):
    step_profile.main(
        [
            "--models",
            "lab01",
            "--dtypes",
            "float32",
            "--batch-size",
            "2",
            "--sequence-length",
            "16",
            "--warmup",
            "1",
            "--steps",
            "1",
            "--trace-steps",
            "1",
        ]
    )
    import json

    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    row = summary["models"]["lab01"]["float32"]
    assert row["step_ms"] > 0 and row["tokens_per_s"] > 0
    # The profiler saw the step's ops: matmuls and the optimizer among them, summing to op_ms.
    assert row["kinds"]["matmul"] > 0 and row["kinds"]["optimizer"] > 0
    assert abs(sum(row["kinds"].values()) - row["op_ms"]) < 0.1 + 0.01 * row["op_ms"]
    # Ops only: the runtime's span around the whole step would double every op's time.
    assert row["kinds"].get("other", 0.0) < 0.5 * row["op_ms"]


def test_unknown_models_and_dtypes_are_named():
    with pytest.raises(SystemExit):
        step_profile.main(["--models", "gpt5"])
