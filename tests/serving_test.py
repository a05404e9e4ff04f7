"""Request building and response parsing against TF Serving's documented formats.

No TF Serving binary is available here, so nothing pretends to be a server: the payloads and
protos below are written by hand in the shapes https://www.tensorflow.org/tfx/serving/api_rest
and tensorflow_serving/apis/predict.proto define.
"""

import base64
import contextlib
import http.server
import json
import socket
import threading
import time
import urllib.error

import numpy as np
import pytest
import tensorflow as tf
from tensorflow_serving.apis import predict_pb2

from kbert import serving
from kbert.serving import (
    GrpcClient,
    RestClient,
    ServingError,
    answer,
    classify,
    embed,
    grpc_predict_request,
    parse_grpc_response,
    parse_rest_response,
    rest_predict_body,
    rest_predict_url,
    tag,
)


def closed_port():
    """A localhost port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def silent_port():
    """A loopback port that accepts connections (the kernel's backlog) and never answers."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        yield server.getsockname()[1]


@contextlib.contextmanager
def answering_port(payload):
    """A loopback HTTP server that answers every request with `payload` as JSON."""
    body = json.dumps(payload).encode("utf-8")

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *arguments):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


# ---- REST URLs


def test_predict_urls():
    assert rest_predict_url("localhost", "trec") == "http://localhost:8501/v1/models/trec:predict"
    assert (
        rest_predict_url("10.0.0.2", "trec", version=3, port=9000, scheme="https")
        == "https://10.0.0.2:9000/v1/models/trec/versions/3:predict"
    )
    assert (
        rest_predict_url("localhost", "trec", label="canary")
        == "http://localhost:8501/v1/models/trec/labels/canary:predict"
    )
    assert rest_predict_url("::1", "m") == "http://[::1]:8501/v1/models/m:predict"


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"host": "http://localhost", "model": "m"}, "no scheme"),
        ({"host": "localhost", "model": ""}, "model must be a non-empty"),
        ({"host": "localhost", "model": "m", "version": 1, "label": "x"}, "at most one of"),
        ({"host": "localhost", "model": "m", "version": -1}, "non-negative int; got -1"),
        ({"host": "localhost", "model": "m", "version": "2"}, "non-negative int; got '2'"),
        ({"host": "localhost", "model": "m", "scheme": "grpc"}, "'http' or 'https'"),
    ],
)
def test_bad_url_arguments(arguments, message):
    with pytest.raises(ValueError, match=message):
        rest_predict_url(**arguments)


def test_ipv6_literals_get_brackets_in_urls_and_grpc_targets():
    for host in ("::1", "[::1]"):
        assert rest_predict_url(host, "m") == "http://[::1]:8501/v1/models/m:predict"
        assert RestClient(host, "m", port=9000).model_url == "http://[::1]:9000/v1/models/m"
        with GrpcClient(host, "m") as client:
            assert client.target == "[::1]:8500"
    assert rest_predict_url("fe80::1", "m") == "http://[fe80::1]:8501/v1/models/m:predict"
    with GrpcClient("localhost", "m", port=9000) as client:
        assert client.target == "localhost:9000"
    with GrpcClient("10.0.0.2", "m") as client:
        assert client.target == "10.0.0.2:8500"


@pytest.mark.parametrize(
    "host, message",
    [
        ("localhost:8501", r"got 'localhost:8501'; pass host='localhost', port=8501"),
        ("127.0.0.1:9000", r"got '127.0.0.1:9000'; pass host='127.0.0.1', port=9000"),
        ("[::1]:8501", r"got '\[::1\]:8501'; pass host='::1', port=8501"),
        ("http://localhost:8501", r"no scheme, port or path.*got 'http://localhost:8501'"),
        ("localhost:", "no scheme, port or path"),
        ("[::1", "no scheme, port or path"),
        ("[localhost]", "no scheme, port or path"),
        ("not::an::address", "no scheme, port or path"),
        ("local host", "no scheme, port or path"),
        ("", "no scheme, port or path"),
        (None, "no scheme, port or path"),
    ],
)
def test_a_port_or_scheme_inside_host_is_refused(host, message):
    with pytest.raises(ValueError, match=message):
        rest_predict_url(host, "m")
    with pytest.raises(ValueError, match=message):
        RestClient(host, "m")
    with pytest.raises(ValueError, match=message):
        GrpcClient(host, "m")


@pytest.mark.parametrize("port", [-1, 0, 65536, 70000, "8501", 8501.0, True, None])
def test_ports_outside_1_to_65535_are_refused(port):
    message = rf"port must be an int in 1\.\.65535; got {port!r}"
    with pytest.raises(ValueError, match=message):
        rest_predict_url("localhost", "m", port=port)
    with pytest.raises(ValueError, match=message):
        RestClient("localhost", "m", port=port)
    with pytest.raises(ValueError, match=message):
        GrpcClient("localhost", "m", port=port)


def test_ports_at_the_ends_of_the_range_are_kept():
    assert rest_predict_url("h", "m", port=1) == "http://h:1/v1/models/m:predict"
    assert rest_predict_url("h", "m", port=np.int64(65535)).startswith("http://h:65535/")


# ---- REST request bodies


def test_row_format_has_one_dict_per_example_even_for_one_input():
    body = rest_predict_body({"text": ["a", "b"]}, signature_name="embed")
    assert body == {"signature_name": "embed", "instances": [{"text": "a"}, {"text": "b"}]}
    body = rest_predict_body({"question": ("q1", "q2"), "context": ["c1", "c2"]})
    assert body["instances"] == [
        {"question": "q1", "context": "c1"},
        {"question": "q2", "context": "c2"},
    ]
    assert body["signature_name"] == "serving_default"
    json.dumps(body)


def test_columnar_format_keeps_lists():
    body = rest_predict_body(
        {"text": ["a", "b"], "text_pair": ["c", "d"]}, signature_name="classify", format="inputs"
    )
    assert body == {
        "signature_name": "classify",
        "inputs": {"text": ["a", "b"], "text_pair": ["c", "d"]},
    }


def test_bytes_go_as_b64_and_numpy_as_lists():
    body = rest_predict_body(
        {
            "text": [b"\xff\x00", "caf\u00e9"],
            "token_ids": np.array([[1, 2], [3, 4]], dtype=np.int32),
            "weight": np.array([0.5, 1.0], dtype=np.float32),
            "raw": np.array([b"ab", b"c"], dtype=object),
        }
    )
    first, second = body["instances"]
    assert first["text"] == {"b64": base64.b64encode(b"\xff\x00").decode()}
    assert second["text"] == "caf\u00e9"
    assert first["token_ids"] == [1, 2] and type(first["token_ids"][0]) is int
    assert second["weight"] == 1.0 and type(second["weight"]) is float
    assert second["raw"] == {"b64": "Yw=="}
    columns = rest_predict_body({"ids": np.arange(3, dtype=np.int64)}, format="inputs")["inputs"]
    assert columns == {"ids": [0, 1, 2]}
    json.dumps(body)


@pytest.mark.parametrize(
    "inputs, message",
    [
        ({}, "non-empty dict"),
        (["a"], "non-empty dict"),
        ({"text": "one string"}, r"input 'text' must be a list .*\(wrap it in a list\)"),
        ({"text": np.array("x")}, "input 'text' must be a list"),
        ({"text": 3}, "input 'text' must be a list"),
        ({"question": ["a", "b"], "context": ["c"]}, "'question': 2, 'context': 1"),
        ({"text": []}, "no examples"),
        ({"text": [object()]}, "cannot send a value of type object"),
    ],
)
def test_bad_inputs_are_refused(inputs, message):
    with pytest.raises(ValueError, match=message):
        rest_predict_body(inputs)


def test_bad_format_and_signature():
    with pytest.raises(ValueError, match=r"format must be one of \('instances', 'inputs'\)"):
        rest_predict_body({"text": ["a"]}, format="rows")
    with pytest.raises(ValueError, match="signature_name must be a non-empty string"):
        rest_predict_body({"text": ["a"]}, signature_name="")


# ---- REST responses


def test_row_predictions_with_named_outputs():
    payload = {
        "predictions": [
            {"labels": "NUM", "label_ids": 3, "probabilities": [0.1, 0.9]},
            {"labels": "LOC", "label_ids": 1, "probabilities": [0.7, 0.3]},
        ]
    }
    outputs = parse_rest_response(json.dumps(payload))
    assert outputs["labels"].tolist() == ["NUM", "LOC"] and outputs["labels"].dtype.kind == "U"
    assert outputs["label_ids"].tolist() == [3, 1]
    np.testing.assert_allclose(outputs["probabilities"], [[0.1, 0.9], [0.7, 0.3]])


def test_single_output_predictions_without_name():
    outputs = parse_rest_response({"predictions": [[0.5, 0.25], [1.0, 2.0]]})
    assert list(outputs) == ["predictions"]
    np.testing.assert_array_equal(outputs["predictions"], [[0.5, 0.25], [1.0, 2.0]])
    text = parse_rest_response(b'{"predictions": ["B-PER", "O"]}')["predictions"]
    assert text.tolist() == ["B-PER", "O"]
    # A one-output `_bytes` tensor comes back as b64 objects, which are values, not rows.
    binary = parse_rest_response({"predictions": [{"b64": "/wA="}, {"b64": "YQ=="}]})
    assert binary["predictions"].dtype == object
    assert binary["predictions"].tolist() == [b"\xff\x00", b"a"]


def test_columnar_outputs_named_and_unnamed():
    outputs = parse_rest_response(
        {
            "outputs": {
                "tags": [["B-PER", "I-PER"], ["O", "O"]],
                "num_words": [2, 2],
                "entity_texts": [[{"b64": base64.b64encode(b"Ada\x00").decode()}], [{"b64": ""}]],
            }
        }
    )
    assert outputs["tags"].shape == (2, 2) and outputs["tags"][0, 1] == "I-PER"
    assert outputs["num_words"].dtype.kind == "i"
    # Object, not numpy's `S`, so a trailing NUL byte survives.
    assert outputs["entity_texts"].tolist() == [[b"Ada\x00"], [b""]]
    assert outputs["entity_texts"].shape == (2, 1)
    unnamed = parse_rest_response({"outputs": [[1, 2], [3, 4]]})
    np.testing.assert_array_equal(unnamed["outputs"], [[1, 2], [3, 4]])


def test_error_payload_raises_serving_error_with_the_message():
    message = "Failed to process element: 0 key: text of 'instances' list. Error: Invalid argument"
    with pytest.raises(ServingError, match="Failed to process element: 0 key: text") as caught:
        parse_rest_response(json.dumps({"error": message}))
    assert caught.value.url is None


@pytest.mark.parametrize(
    "payload, name",
    [
        ({"predictions": [{"b64": "%%%%"}, {"b64": "YQ=="}]}, "predictions"),  # bare values
        ({"predictions": [{"b64": "YQ==!"}]}, "predictions"),
        ({"predictions": [{"raw": {"b64": "%%%%"}, "ids": 1}]}, "raw"),  # named rows
        ({"outputs": {"raw": [[{"b64": "Y Q=="}]]}}, "raw"),  # columnar, named
        ({"outputs": {"raw": [{"b64": "YQ"}]}}, "raw"),  # padding missing
        ({"outputs": {"b64": "****"}}, "outputs"),  # columnar, one unnamed value
        ({"outputs": {"raw": [{"b64": 3}]}}, "raw"),
        ({"outputs": {"raw": [{"b64": "caf\u00e9"}]}}, "raw"),
    ],
)
def test_invalid_b64_is_refused_not_decoded_to_empty_bytes(payload, name):
    with pytest.raises(ValueError, match=rf"output '{name}'.*expected base64 text.*; got"):
        parse_rest_response(payload)


@pytest.mark.parametrize(
    "payload, message",
    [
        ({"result": []}, r"'predictions', 'outputs' or 'error'; got the keys \['result'\]"),
        ([1, 2], "expected a JSON object"),
        ("not json", "the response is not JSON"),
        ({"predictions": {"a": 1}}, "must be a list with one entry per example"),
        ({"predictions": [{"a": 1}, {"b": 2}]}, r"row 0 has \['a'\], row 1 has \['b'\]"),
        ({"predictions": [{"a": 1}, 2]}, "mixes named rows"),
        ({"outputs": {"a": [[1, 2], [3]]}}, "output 'a' is not a rectangular tensor"),
    ],
)
def test_malformed_payloads(payload, message):
    with pytest.raises(ValueError, match=message):
        parse_rest_response(payload)


# ---- one row per example sent


def test_rest_response_rows_are_checked_against_the_batch_size():
    one_row = {"predictions": [{"labels": "NUM", "label_ids": 3}]}
    assert parse_rest_response(one_row, batch_size=1)["labels"].tolist() == ["NUM"]
    with pytest.raises(ServingError, match=r"output 'labels' has 1 row\(s\); expected 2"):
        parse_rest_response(one_row, batch_size=2)
    columnar = {"outputs": {"tags": [["O"], ["O"]], "num_words": [1]}}
    with pytest.raises(ServingError, match=r"output 'num_words' has 1 row\(s\); expected 2"):
        parse_rest_response(columnar, batch_size=2)
    with pytest.raises(
        ServingError,
        match=r"output 'outputs' has no batch axis \(a scalar\); "
        r"expected 2",
    ):
        parse_rest_response({"outputs": 0.5}, batch_size=2)
    with pytest.raises(ValueError, match="batch_size must be an int >= 1 or None; got 0"):
        parse_rest_response(one_row, batch_size=0)


def test_rest_client_refuses_an_answer_with_too_few_rows():
    with answering_port({"predictions": [{"labels": "NUM", "label_ids": 3}]}) as port:
        client = RestClient("127.0.0.1", "trec", port=port, timeout=5)
        url = f"http://127.0.0.1:{port}/v1/models/trec:predict"
        assert client.predict({"text": ["a"]})["labels"].tolist() == ["NUM"]
        for format in ("instances", "inputs"):
            with pytest.raises(
                ServingError,
                match=r"output 'labels' has 1 row\(s\); "
                r"expected 2",
            ) as caught:
                client.predict({"text": ["a", "b"]}, format=format)
            assert str(caught.value).startswith(f"{url}: ") and caught.value.url == url
        with pytest.raises(ServingError, match=r"output 'labels' has 1 row\(s\); expected 2"):
            classify(client, ["a", "b"])


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


# ---- REST client: only what needs no server


def test_rest_client_to_a_closed_port_names_the_url():
    port = closed_port()
    client = RestClient("127.0.0.1", "trec", port=port, version=2, timeout=5)
    url = f"http://127.0.0.1:{port}/v1/models/trec/versions/2"
    with pytest.raises(ServingError, match="cannot reach TF Serving") as caught:
        client.predict({"text": ["a"]}, signature_name="classify")
    assert str(caught.value).startswith(url + ":predict: ")
    assert caught.value.url == url + ":predict"
    with pytest.raises(ServingError, match=f"^{url}: cannot reach"):
        client.status()
    with pytest.raises(ServingError, match=f"^{url}/metadata: cannot reach"):
        client.metadata()


@pytest.mark.parametrize("timeout", [0, -1, -0.5, True, "5", None, float("nan"), float("inf")])
def test_timeouts_must_be_positive_numbers(timeout):
    message = rf"timeout must be a positive, finite number of seconds; got {timeout!r}"
    with pytest.raises(ValueError, match=message):
        RestClient("localhost", "m", timeout=timeout)
    with pytest.raises(ValueError, match=message):
        GrpcClient("localhost", "m", timeout=timeout)


def test_rest_client_timeout_says_it_timed_out():
    with silent_port() as port:
        client = RestClient("127.0.0.1", "trec", port=port, timeout=0.25)
        url = f"http://127.0.0.1:{port}/v1/models/trec"
        started = time.monotonic()
        with pytest.raises(ServingError, match=r"timed out after 0\.25 s") as caught:
            client.predict({"text": ["a"]})
        assert time.monotonic() - started < 5
        assert str(caught.value).startswith(url + ":predict: ")
        assert "cannot reach" not in str(caught.value)
        with pytest.raises(ServingError, match=f"^{url}: timed out after 0.25 s"):
            client.status()


def test_rest_client_connect_timeout_says_it_timed_out(monkeypatch):
    def urlopen(request, timeout):
        raise urllib.error.URLError(TimeoutError("timed out"))

    monkeypatch.setattr(serving.urllib.request, "urlopen", urlopen)
    client = RestClient("10.255.255.1", "trec", timeout=2)
    with pytest.raises(ServingError, match=r"timed out after 2 s connecting") as caught:
        client.status()
    assert "cannot reach" not in str(caught.value)


def test_rest_client_checks_inputs_before_sending():
    client = RestClient("127.0.0.1", "trec", port=closed_port())
    with pytest.raises(ValueError, match="input 'text' must be a list"):
        client.predict({"text": "a"})
    with pytest.raises(ValueError, match="at most one of version and label"):
        RestClient("localhost", "trec", version=1, label="stable")


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


# ---- kbert's signatures, through a recording stand-in for a client (not a server)


class RecordingClient:
    """Records what the helpers send; answers `{"ok": [1, ...]}`, one row per example or `rows`."""

    def __init__(self, rows=None):
        self.calls = []
        self.rows = rows

    def predict(self, inputs, signature_name):
        self.calls.append((signature_name, inputs))
        rows = self.rows if self.rows is not None else len(next(iter(inputs.values())))
        return {"ok": np.array([1] * rows)}


def test_signature_helpers_use_kbert_names():
    client = RecordingClient()
    assert classify(client, ["a"])["ok"].tolist() == [1]
    classify(client, ["a"], text_pairs=("b",))
    tag(client, np.array(["a", "b"]))
    answer(client, ["q"], ["c"])
    embed(client, ["a"])
    assert [call[0] for call in client.calls] == ["classify", "classify", "tag", "answer", "embed"]
    assert client.calls[1][1] == {"text": ["a"], "text_pair": ["b"]}
    assert client.calls[3][1] == {"question": ["q"], "context": ["c"]}


@pytest.mark.parametrize(
    "call",
    [
        lambda client: classify(client, ["a", "b"]),
        lambda client: classify(client, ["a", "b"], ["c", "d"]),
        lambda client: tag(client, ["a", "b"]),
        lambda client: answer(client, ["q1", "q2"], ["c1", "c2"]),
        lambda client: embed(client, ["a", "b"]),
    ],
)
def test_signature_helpers_refuse_an_answer_with_too_few_rows(call):
    with pytest.raises(ServingError, match=r"output 'ok' has 1 row\(s\); expected 2"):
        call(RecordingClient(rows=1))
    with pytest.raises(ServingError, match=r"output 'ok' has 3 row\(s\); expected 2"):
        call(RecordingClient(rows=3))


def test_signature_helpers_refuse_a_bare_string():
    with pytest.raises(ValueError, match="texts must be a list of strings"):
        embed(RecordingClient(), "a sentence")
    with pytest.raises(ValueError, match="contexts must be a list of strings"):
        answer(RecordingClient(), ["q"], "c")
    with pytest.raises(ValueError, match="client must be a RestClient or GrpcClient"):
        tag(object(), ["a"])


def test_signature_helpers_reach_the_real_clients_request_builders():
    port = closed_port()
    with pytest.raises(ValueError, match="'question': 2, 'context': 1"):
        answer(RestClient("127.0.0.1", "squad", port=port), ["q1", "q2"], ["c"])
    with pytest.raises(ServingError, match=f"127.0.0.1:{port}/v1/models/trec:predict"):
        classify(RestClient("127.0.0.1", "trec", port=port), ["a"], ["b"])


def test_module_docstring_examples_hold():
    assert serving.rest_predict_body({"text": ["hi", b"\xff"]}) == {
        "signature_name": "serving_default",
        "instances": [{"text": "hi"}, {"text": {"b64": "/w=="}}],
    }
    request = grpc_predict_request({"text": ["hi"]}, "trec", signature_name="classify")
    assert (request.model_spec.name, list(request.inputs["text"].string_val)) == ("trec", [b"hi"])
