"""gRPC requests and responses against tensorflow_serving/apis/predict.proto, and `GrpcClient`.

No TF Serving binary is available here: the protos below are built by hand.
"""

import time

import numpy as np
import pytest
import tensorflow as tf
from tensorflow_serving.apis import predict_pb2

from kbert.serving import (
    GrpcClient,
    ServingError,
    embed,
    grpc_predict_request,
    parse_grpc_response,
)
from tests.serving.ports import closed_port, silent_port


def test_grpc_response_rows_are_checked_against_the_batch_size():
    response = hand_built_response()  # two rows per output
    assert parse_grpc_response(response, batch_size=2)["label_ids"].tolist() == [3, 1]
    with pytest.raises(ServingError, match=r"output '\w+' has 2 row\(s\); expected 3"):
        parse_grpc_response(response, batch_size=3)
    response.outputs["label_ids"].CopyFrom(tf.make_tensor_proto([3], dtype=tf.int32))
    with pytest.raises(ServingError, match=r"output 'label_ids' has 1 row\(s\); expected 2"):
        parse_grpc_response(response, batch_size=2)
    response.outputs["label_ids"].CopyFrom(tf.make_tensor_proto(3, dtype=tf.int32))
    with pytest.raises(ServingError, match=r"output 'label_ids' has no batch axis"):
        parse_grpc_response(response, batch_size=2)


class AnsweringStub:
    """Stands in for `PredictionServiceStub`: answers every call with one fixed response."""

    def __init__(self, response):
        self.response = response

    def Predict(self, request, timeout):
        return self.response


def test_grpc_client_refuses_an_answer_with_too_few_rows(monkeypatch):
    response = predict_pb2.PredictResponse()
    response.outputs["labels"].CopyFrom(tf.make_tensor_proto(["NUM"]))
    with GrpcClient("127.0.0.1", "trec", port=closed_port()) as client:
        monkeypatch.setattr(client, "_stub", AnsweringStub(response))
        assert client.predict({"text": ["a"]})["labels"].tolist() == ["NUM"]
        with pytest.raises(
            ServingError,
            match=r"^grpc://127.0.0.1:\d+ \(model 'trec'\): "
            r"output 'labels' has 1 row\(s\); expected 2",
        ):
            client.predict({"text": ["a", "b"]})
        with pytest.raises(ServingError, match=r"output 'labels' has 1 row\(s\); expected 2"):
            embed(client, ["a", "b"])


# ---- gRPC requests and responses


def test_grpc_request_fields_and_dtypes():
    request = grpc_predict_request(
        {
            "text": ["a", "caf\u00e9"],
            "raw": [b"\xff", b"b"],
            "token_ids": [[1, 2], [3, 4]],
            "ids64": np.array([[1], [2]], dtype=np.int64),
        },
        "trec",
        signature_name="classify",
        version=7,
    )
    assert isinstance(request, predict_pb2.PredictRequest)
    assert request.model_spec.name == "trec"
    assert request.model_spec.signature_name == "classify"
    assert request.model_spec.version.value == 7
    assert request.model_spec.version_label == ""
    text = request.inputs["text"]
    assert text.dtype == tf.string.as_datatype_enum
    assert list(text.string_val) == [b"a", "caf\u00e9".encode()]
    assert [dim.size for dim in text.tensor_shape.dim] == [2]
    assert list(request.inputs["raw"].string_val) == [b"\xff", b"b"]
    token_ids = request.inputs["token_ids"]
    assert token_ids.dtype == tf.int32.as_datatype_enum
    assert [dim.size for dim in token_ids.tensor_shape.dim] == [2, 2]
    np.testing.assert_array_equal(tf.make_ndarray(token_ids), [[1, 2], [3, 4]])
    assert request.inputs["ids64"].dtype == tf.int64.as_datatype_enum


def test_grpc_request_defaults_label_and_ready_protos():
    request = grpc_predict_request({"text": ["a"]}, "m")
    assert request.model_spec.signature_name == "serving_default"
    assert not request.model_spec.HasField("version")
    request = grpc_predict_request(
        {"text": tf.make_tensor_proto(["a", "b"]), "text_pair": ["c", "d"]}, "m", label="stable"
    )
    assert request.model_spec.version_label == "stable"
    assert list(request.inputs["text"].string_val) == [b"a", b"b"]
    with pytest.raises(ValueError, match="'text': 2, 'text_pair': 1"):
        grpc_predict_request({"text": tf.make_tensor_proto(["a", "b"]), "text_pair": ["c"]}, "m")


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"inputs": {"text": "a"}, "model": "m"}, "input 'text' must be a list"),
        ({"inputs": {"text": ["a"]}, "model": ""}, "model must be a non-empty"),
        ({"inputs": {"text": ["a"]}, "model": "m", "version": 1, "label": "x"}, "at most one"),
        ({"inputs": {"text": tf.make_tensor_proto("a")}, "model": "m"}, "scalar TensorProto"),
    ],
)
def test_bad_grpc_requests(arguments, message):
    with pytest.raises(ValueError, match=message):
        grpc_predict_request(**arguments)


def hand_built_response():
    response = predict_pb2.PredictResponse()
    response.model_spec.name = "trec"
    response.model_spec.version.value = 2
    response.outputs["labels"].CopyFrom(tf.make_tensor_proto(["NUM", "caf\u00e9"]))
    response.outputs["label_ids"].CopyFrom(tf.make_tensor_proto([3, 1], dtype=tf.int32))
    response.outputs["probabilities"].CopyFrom(
        tf.make_tensor_proto(np.array([[0.1, 0.9], [0.6, 0.4]], dtype=np.float32))
    )
    response.outputs["raw"].CopyFrom(tf.make_tensor_proto([b"\xff\xfe", b"ok"]))
    # The wire round trip, as a real answer would arrive.
    return predict_pb2.PredictResponse.FromString(response.SerializeToString())


def test_parse_hand_built_predict_response():
    outputs = parse_grpc_response(hand_built_response())
    assert sorted(outputs) == ["label_ids", "labels", "probabilities", "raw"]
    assert outputs["labels"].tolist() == ["NUM", "caf\u00e9"]
    assert outputs["labels"].dtype.kind == "U"
    assert outputs["label_ids"].dtype == np.int32 and outputs["label_ids"].tolist() == [3, 1]
    assert outputs["probabilities"].dtype == np.float32
    np.testing.assert_allclose(outputs["probabilities"], [[0.1, 0.9], [0.6, 0.4]])
    assert outputs["raw"].tolist() == [b"\xff\xfe", b"ok"]  # not UTF-8: stays bytes
    raw = parse_grpc_response(hand_built_response(), decode_strings=False)
    assert raw["labels"].tolist() == [b"NUM", "caf\u00e9".encode()]
    with pytest.raises(ValueError, match="expected a tensorflow_serving PredictResponse"):
        parse_grpc_response({"labels": ["NUM"]})


def test_grpc_client_to_a_closed_port_names_the_target():
    port = closed_port()
    with GrpcClient("127.0.0.1", "trec", port=port, timeout=5) as client:
        with pytest.raises(ServingError, match=f"grpc://127.0.0.1:{port} .*UNAVAILABLE"):
            client.predict({"text": ["a"]}, signature_name="classify")


def test_grpc_client_timeout_says_it_timed_out():
    with silent_port() as port, GrpcClient("127.0.0.1", "trec", port=port, timeout=0.25) as client:
        started = time.monotonic()
        with pytest.raises(ServingError, match=r"timed out after 0\.25 s") as caught:
            client.predict({"text": ["a"]})
        assert time.monotonic() - started < 5
        assert caught.value.status == "DEADLINE_EXCEEDED"
