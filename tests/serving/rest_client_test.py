"""REST requests and responses against TF Serving's documented formats, and `RestClient`.

No TF Serving binary is available here, so nothing pretends to be a server: the payloads below
are written by hand in the shapes https://www.tensorflow.org/tfx/serving/api_rest defines.
"""

import base64
import json
import time
import urllib.error

import numpy as np
import pytest

from kbert.serving import (
    GrpcClient,
    RestClient,
    ServingError,
    classify,
    grpc_predict_request,
    parse_rest_response,
    rest_client,
    rest_predict_body,
    rest_predict_url,
)
from tests.serving.ports import answering_port, closed_port, silent_port

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

    monkeypatch.setattr(rest_client.urllib.request, "urlopen", urlopen)
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


def test_module_docstring_examples_hold():
    assert rest_predict_body({"text": ["hi", b"\xff"]}) == {
        "signature_name": "serving_default",
        "instances": [{"text": "hi"}, {"text": {"b64": "/w=="}}],
    }
    request = grpc_predict_request({"text": ["hi"]}, "trec", signature_name="classify")
    assert (request.model_spec.name, list(request.inputs["text"].string_val)) == ("trec", [b"hi"])
