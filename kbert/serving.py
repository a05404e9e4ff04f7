"""Client side of TF Serving: build predict requests, send them, parse the answers.

Two transports, one shape of result. Both clients take a dict of input name -> list (one value per
example) and return a dict of output name -> numpy array:

- REST (`RestClient`, port 8501) speaks TF Serving's JSON API with nothing but `urllib`. Requests
  are in the row format (`{"instances": [{...}, ...]}`) or the columnar one
  (`{"inputs": {...}}`); see https://www.tensorflow.org/tfx/serving/api_rest.
- gRPC (`GrpcClient`, port 8500) sends a `tensorflow_serving.apis.predict_pb2.PredictRequest`
  whose tensors are `TensorProto`s; it is the faster transport for large numeric outputs.

The request builders and response parsers are pure functions, so they can be read and tested
without a server. `classify`, `tag`, `answer` and `embed` call the signatures that
`kbert export` writes (input names `text`, `text_pair`, `question`, `context`).

What the clients refuse rather than guess:

- `host` is a host alone: a name, an IPv4 address, or an IPv6 literal with or without brackets
  (`::1`, `[::1]`). A port, scheme or path inside it (`localhost:8501`, `http://...`) is a
  ValueError that says to pass `port=` separately; kbert never merges two sources of one port.
- `port` is an int in 1..65535; `timeout` a positive, finite number of seconds.
- A request that times out says "timed out after <timeout> s"; "cannot reach TF Serving" means
  the connection itself failed (refused, no route, unknown host).
- An answer must hold one row per example sent, for every output; `{"b64": ...}` values must be
  valid base64. Either failure raises instead of returning a short or empty result.

Example:

    client = RestClient("localhost", "trec")
    classify(client, ["How far is the moon?"])
    # {"labels": array(['NUM'], ...), "label_ids": array([...]), "probabilities": array([[...]])}
"""

import base64
import ipaddress
import json
import math
import numbers
import re
import urllib.error
import urllib.parse
import urllib.request

import numpy as np
import tensorflow as tf
from tensorflow.core.framework import tensor_pb2
from tensorflow_serving.apis import predict_pb2

REST_PORT = 8501
GRPC_PORT = 8500
DEFAULT_SIGNATURE = "serving_default"
REQUEST_FORMATS = ("instances", "inputs")
# `[v6]:port` or `name:port`; a bare IPv6 literal (two colons or more) never matches.
_HOST_AND_PORT = re.compile(r"(?:\[([^\[\]]+)\]|([^\[\]:]+)):([0-9]+)")
_HOST_REFUSED_CHARACTERS = frozenset("/?#@[] \t\r\n")


class ServingError(RuntimeError):
    """TF Serving refused or failed a request, or could not be reached.

    Attributes:
        url: the REST URL or gRPC target the request went to (None when unknown, e.g. an error
            payload parsed on its own).
        status: the HTTP status or gRPC status code name, when there was one.
    """

    def __init__(self, message, url=None, status=None):
        super().__init__(message)
        self.url = url
        self.status = status


# ------------------------------------------------------------------------------------------------
# Inputs shared by both transports


def _check_batch(inputs):
    """Checks `inputs` is a non-empty dict name -> batch and returns the batch size."""
    if not isinstance(inputs, dict) or not inputs:
        raise ValueError(
            f"inputs must be a non-empty dict of input name -> list of values, one "
            f"per example; got {inputs!r:.200}"
        )
    sizes = {}
    for name, values in inputs.items():
        if not isinstance(name, str) or not name:
            raise ValueError(f"input names must be non-empty strings; got {name!r}")
        if isinstance(values, tensor_pb2.TensorProto):
            if not values.tensor_shape.dim:
                raise ValueError(
                    f"input {name!r} is a scalar TensorProto; expected a batch "
                    "(one value per example on the first axis)"
                )
            sizes[name] = values.tensor_shape.dim[0].size
            continue
        is_scalar_array = isinstance(values, np.ndarray) and values.ndim == 0
        if (
            isinstance(values, (str, bytes, dict))
            or not hasattr(values, "__len__")
            or is_scalar_array
        ):
            raise ValueError(
                f"input {name!r} must be a list (or array) with one value per "
                f"example; got the single value {values!r:.200} (wrap it in a list)"
            )
        sizes[name] = len(values)
    if len(set(sizes.values())) > 1:
        listed = ", ".join(f"{name!r}: {size}" for name, size in sizes.items())
        raise ValueError(f"inputs must all hold the same number of examples; got {listed}")
    batch_size = next(iter(sizes.values()))
    if batch_size == 0:
        raise ValueError(f"inputs hold no examples: {', '.join(map(repr, sizes))} are empty")
    return batch_size


def _address_host(host):
    """Checks `host` and returns it the way URLs and gRPC targets write it (IPv6 in brackets).

    Raises:
        ValueError: anything but a bare host name, IPv4 address or IPv6 literal; a port inside
            `host` gets a message that says how to split it.
    """
    expected = (
        "host must be a host name or address such as 'localhost', '10.0.0.2' or '::1' "
        "(no scheme, port or path; give the port as port=)"
    )
    if not isinstance(host, str) or not host:
        raise ValueError(f"{expected}; got {host!r}")
    with_port = _HOST_AND_PORT.fullmatch(host)
    if with_port:
        bracketed, name, port = with_port.groups()
        raise ValueError(
            f"{expected}; got {host!r}; pass host={bracketed or name!r}, port={int(port)}"
        )
    inner = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if ":" in inner:
        try:
            ipaddress.IPv6Address(inner)
        except ValueError:
            raise ValueError(f"{expected}; got {host!r}") from None
        return f"[{inner}]"  # an IPv6 address needs brackets before a port
    if inner != host or _HOST_REFUSED_CHARACTERS.intersection(host):
        raise ValueError(f"{expected}; got {host!r}")
    return host


def _check_port(port):
    """Returns `port` as an int, or raises ValueError unless it is an int in 1..65535."""
    if isinstance(port, bool) or not isinstance(port, numbers.Integral) or not 1 <= port <= 65535:
        raise ValueError(f"port must be an int in 1..65535; got {port!r}")
    return int(port)


def _check_timeout(timeout):
    """Returns `timeout`, or raises ValueError unless it is a positive, finite number."""
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, numbers.Real)
        or not math.isfinite(timeout)
        or timeout <= 0
    ):
        raise ValueError(f"timeout must be a positive, finite number of seconds; got {timeout!r}")
    return timeout


def _check_rows(outputs, batch_size):
    """Raises ServingError unless every output has one row (first axis) per example sent."""
    for name, value in outputs.items():
        shape = np.shape(value)
        if not shape:
            raise ServingError(
                f"output {name!r} has no batch axis (a scalar); expected "
                f"{batch_size} row(s), one per example sent"
            )
        if shape[0] != batch_size:
            raise ServingError(
                f"output {name!r} has {shape[0]} row(s); expected {batch_size}, "
                "one per example sent"
            )


def _check_batch_size(batch_size):
    if batch_size is not None and (
        isinstance(batch_size, bool)
        or not isinstance(batch_size, numbers.Integral)
        or batch_size < 1
    ):
        raise ValueError(f"batch_size must be an int >= 1 or None; got {batch_size!r}")


def _check_version_and_label(version, label):
    if version is not None and label is not None:
        raise ValueError(
            f"give at most one of version and label; got version={version!r} and label={label!r}"
        )
    if version is not None and (
        isinstance(version, bool) or not isinstance(version, int) or version < 0
    ):
        raise ValueError(f"version must be a non-negative int; got {version!r}")
    if label is not None and (not isinstance(label, str) or not label):
        raise ValueError(f"label must be a non-empty string; got {label!r}")


# ------------------------------------------------------------------------------------------------
# REST: URLs, request bodies and response payloads


def _rest_model_url(host, model, version=None, label=None, port=REST_PORT, scheme="http"):
    host = _address_host(host)
    port = _check_port(port)
    if not isinstance(model, str) or not model:
        raise ValueError(f"model must be a non-empty model name; got {model!r}")
    if scheme not in ("http", "https"):
        raise ValueError(f"scheme must be 'http' or 'https'; got {scheme!r}")
    _check_version_and_label(version, label)
    url = f"{scheme}://{host}:{port}/v1/models/{urllib.parse.quote(model, safe='')}"
    if version is not None:
        url += f"/versions/{version}"
    elif label is not None:
        url += f"/labels/{urllib.parse.quote(label, safe='')}"
    return url


def rest_predict_url(host, model, version=None, label=None, port=REST_PORT, scheme="http"):
    """Returns TF Serving's REST predict URL for a model.

    Args:
        host: str, the server's host name or address (`localhost`, `10.0.0.2`, `::1` or
            `[::1]`), without scheme or port.
        model: str, the model name (the `--model_name` or a `models.config` entry).
        version: int or None (default), a version to pin; None asks for the served default.
        label: str or None (default), a version label from `models.config` (`stable`, `canary`);
            at most one of `version` and `label`.
        port: int, default 8501, the `--rest_api_port`, in 1..65535.
        scheme: str, "http" (default) or "https".

    Returns:
        A str, `<scheme>://<host>:<port>/v1/models/<model>[/versions/<v>|/labels/<l>]:predict`.

    Raises:
        ValueError: a malformed host (a port or scheme inside it included) or model, a port
            outside 1..65535, a negative version, or both version and label.

    Example:

        >>> rest_predict_url("localhost", "trec", version=2)
        'http://localhost:8501/v1/models/trec/versions/2:predict'
    """
    return _rest_model_url(host, model, version, label, port, scheme) + ":predict"


def _to_json(value):
    """Numpy and bytes values -> what `json.dumps` writes the way TF Serving reads it."""
    if isinstance(value, np.ndarray):
        return _to_json(value.tolist())
    if isinstance(value, (bytes, np.bytes_)):
        return {"b64": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [_to_json(item) for item in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    raise ValueError(
        f"cannot send a value of type {type(value).__name__} ({value!r}); expected "
        "str, bytes, a number, a bool, or a list or numpy array of them"
    )


def rest_predict_body(inputs, signature_name=DEFAULT_SIGNATURE, format="instances"):
    """Builds the JSON body of a TF Serving REST predict request.

    Args:
        inputs: dict of input name -> list, tuple or numpy array with one value per example (the
            first axis is the batch); every input must hold the same number of examples.
            `str` values go as JSON strings (UTF-8 text); `bytes` go as `{"b64": ...}`, which TF
            Serving decodes into the raw bytes of a string tensor.
        signature_name: str, default "serving_default", the SavedModel signature to call.
        format: str, "instances" (default) for the row format, one dict per example even when
            there is a single input (`[{"text": "a"}, {"text": "b"}]`), or "inputs" for the
            columnar format (`{"text": ["a", "b"]}`).

    Returns:
        A dict ready for `json.dumps`: `{"signature_name": ..., "instances": [...]}` or
        `{"signature_name": ..., "inputs": {...}}`.

    Raises:
        ValueError: an unknown format, empty inputs, a bare value instead of a list, inputs of
            different lengths, or a value JSON cannot carry.

    Example:

        >>> rest_predict_body({"text": ["hi", b"\\xff"]})
        {'signature_name': 'serving_default', 'instances': [{'text': 'hi'}, {'text': {'b64': '/w=='}}]}
    """
    if format not in REQUEST_FORMATS:
        raise ValueError(f"format must be one of {REQUEST_FORMATS}; got {format!r}")
    if not isinstance(signature_name, str) or not signature_name:
        raise ValueError(f"signature_name must be a non-empty string; got {signature_name!r}")
    batch_size = _check_batch(inputs)
    columns = {name: _to_json(values) for name, values in inputs.items()}
    if format == "inputs":
        return {"signature_name": signature_name, "inputs": columns}
    rows = [{name: column[i] for name, column in columns.items()} for i in range(batch_size)]
    return {"signature_name": signature_name, "instances": rows}


def _is_b64(value):
    return isinstance(value, dict) and set(value) == {"b64"}


def _from_json(value, name):
    """Decodes `{"b64": ...}` leaves of output `name` back to bytes, recursively."""
    if _is_b64(value):
        text = value["b64"]
        try:
            if not isinstance(text, str):
                raise TypeError(type(text).__name__)
            # validate=True: a character outside the alphabet is an error, not skipped.
            return base64.b64decode(text, validate=True)
        except (TypeError, ValueError):  # binascii.Error is a ValueError
            raise ValueError(
                f"output {name!r}: a {{'b64': ...}} value is not valid base64; "
                f"expected base64 text (A-Z, a-z, 0-9, '+', '/', '=' padding); "
                f"got {text!r:.80}"
            ) from None
    if isinstance(value, list):
        return [_from_json(item, name) for item in value]
    return value


def _has_bytes(value):
    if isinstance(value, list):
        return any(_has_bytes(item) for item in value)
    return isinstance(value, bytes)


def _to_array(value, name):
    """A decoded JSON value -> numpy; text stays `str` (dtype `<U`), binary is an object array."""
    value = _from_json(value, name)
    try:
        if _has_bytes(value):
            # Object, not fixed-width `S`: numpy's `S` dtype drops trailing NUL bytes.
            return np.array(value, dtype=object)
        return np.asarray(value)
    except ValueError as error:
        raise ValueError(f"output {name!r} is not a rectangular tensor: {error}") from None


def parse_rest_response(payload, batch_size=None):
    """Turns a TF Serving REST predict response into a dict of numpy arrays.

    Args:
        payload: the response as a dict, or its JSON text (str or bytes). Three shapes are read:
            `{"predictions": [{name: value, ...}, ...]}` (row format, one dict per example),
            `{"predictions": [value, ...]}` (row format from a single-output signature, which TF
            Serving sends without the output name), and `{"outputs": {name: [...], ...}}` or
            `{"outputs": [...]}` (columnar format, named or single-output).
        batch_size: int or None (default), the number of examples sent; when given, every output
            must have exactly that many rows.

    Returns:
        A dict of output name -> numpy array with the batch on the first axis. A single output
        sent without its name is returned under the payload's key, "predictions" or "outputs".
        Text outputs come back as `str` arrays; `{"b64": ...}` outputs as object arrays of bytes.

    Raises:
        ServingError: the payload is TF Serving's `{"error": "..."}` (the message is the
            server's), or an output's row count differs from `batch_size`.
        ValueError: the payload has none of these shapes, its rows disagree on output names, or a
            `{"b64": ...}` value is not valid base64.

    Example:

        >>> parse_rest_response({"predictions": [{"labels": "NUM", "label_ids": 3}]})["labels"]
        array(['NUM'], dtype='<U3')
    """
    _check_batch_size(batch_size)
    outputs = _rest_outputs(payload)
    if batch_size is not None:
        _check_rows(outputs, batch_size)
    return outputs


def _rest_outputs(payload):
    """The dict of arrays in a REST payload; see `parse_rest_response`."""
    if isinstance(payload, (str, bytes)):
        try:
            payload = json.loads(payload)
        except json.JSONDecodeError as error:
            raise ValueError(f"the response is not JSON ({error}): {payload[:200]!r}") from None
    if not isinstance(payload, dict):
        raise ValueError(
            f"expected a JSON object with 'predictions', 'outputs' or 'error'; got {payload!r:.200}"
        )
    if "error" in payload:
        raise ServingError(f"TF Serving error: {payload['error']}")
    if "predictions" in payload:
        rows = payload["predictions"]
        if not isinstance(rows, list):
            raise ValueError(
                f"'predictions' must be a list with one entry per example; got {rows!r:.200}"
            )
        named = [isinstance(row, dict) and not _is_b64(row) for row in rows]
        if rows and all(named):
            names = list(rows[0])
            for i, row in enumerate(rows):
                if set(row) != set(names):
                    raise ValueError(
                        f"prediction rows disagree on output names: row 0 has "
                        f"{sorted(names)}, row {i} has {sorted(row)}"
                    )
            return {name: _to_array([row[name] for row in rows], name) for name in names}
        if any(named):
            raise ValueError("'predictions' mixes named rows (dicts) with bare values")
        # A single-output signature: TF Serving leaves the output's name out.
        return {"predictions": _to_array(rows, "predictions")}
    if "outputs" in payload:
        outputs = payload["outputs"]
        if isinstance(outputs, dict) and not _is_b64(outputs):
            return {name: _to_array(value, name) for name, value in outputs.items()}
        return {"outputs": _to_array(outputs, "outputs")}
    raise ValueError(
        f"expected a JSON object with 'predictions', 'outputs' or 'error'; got the "
        f"keys {sorted(payload)}"
    )


class RestClient:
    """Calls one model on a TF Serving REST endpoint, with the standard library only.

    Args:
        host: str, the server's host name or address, e.g. "localhost".
        model: str, the model name.
        port: int, default 8501, the server's `--rest_api_port`, in 1..65535.
        version: int or None (default), a version to pin; None uses the served default.
        label: str or None (default), a version label instead of a version.
        timeout: float, default 30.0, seconds to wait for each answer; positive and finite.
        scheme: str, "http" (default) or "https".

    Raises:
        ValueError: see `rest_predict_url`; or a timeout that is not a positive number.

    Example:

        client = RestClient("localhost", "trec")
        client.status()  # {"model_version_status": [{"version": "1", "state": "AVAILABLE", ...}]}
        client.predict({"text": ["How far is the moon?"]}, signature_name="classify")
    """

    def __init__(
        self, host, model, port=REST_PORT, version=None, label=None, timeout=30.0, scheme="http"
    ):
        self.host = host
        self.model = model
        self.port = port
        self.version = version
        self.label = label
        self.timeout = timeout
        self.scheme = scheme
        self.model_url = _rest_model_url(host, model, version, label, port, scheme)
        _check_timeout(timeout)

    def __repr__(self):
        return f"RestClient({self.model_url!r})"

    def predict(self, inputs, signature_name=DEFAULT_SIGNATURE, format="instances"):
        """Runs a signature on a batch.

        Args:
            inputs: dict of input name -> list with one value per example.
            signature_name: str, default "serving_default".
            format: str, "instances" (row, default) or "inputs" (columnar).

        Returns:
            A dict of output name -> numpy array, as `parse_rest_response` returns it.

        Raises:
            ValueError: malformed inputs (see `rest_predict_body`), or a malformed answer.
            ServingError: the server could not be reached, timed out, answered with an error,
                or answered with a row count per output other than the number of examples.
        """
        body = rest_predict_body(inputs, signature_name=signature_name, format=format)
        url = self.model_url + ":predict"
        payload = self._request(url, body)
        try:
            return parse_rest_response(payload, batch_size=_check_batch(inputs))
        except ServingError as error:
            raise ServingError(f"{url}: {error}", url=url) from None

    def status(self):
        """Returns the model's status, `GET /v1/models/<model>[/versions/<v>]`, as a dict.

        Raises:
            ServingError: the server could not be reached or answered with an error.
        """
        return self._request(self.model_url)

    def metadata(self):
        """Returns the model's signatures, `GET /v1/models/<model>/metadata`, as a dict.

        Raises:
            ServingError: the server could not be reached or answered with an error.
        """
        return self._request(self.model_url + "/metadata")

    def _request(self, url, body=None):
        data = None if body is None else json.dumps(body).encode("utf-8")
        request = urllib.request.Request(
            url,
            data=data,
            method="GET" if data is None else "POST",
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                text = response.read()
        except urllib.error.HTTPError as error:
            detail = error.read().decode("utf-8", errors="replace")
            try:
                detail = json.loads(detail).get("error", detail)
            except (json.JSONDecodeError, AttributeError):
                pass
            raise ServingError(
                f"{url}: HTTP {error.code}: {detail}", url=url, status=error.code
            ) from None
        except urllib.error.URLError as error:
            if isinstance(error.reason, TimeoutError):
                raise ServingError(
                    f"{url}: timed out after {self.timeout} s connecting to TF Serving", url=url
                ) from None
            raise ServingError(f"{url}: cannot reach TF Serving: {error.reason}", url=url) from None
        except TimeoutError:  # connected, but the answer did not come in time
            raise ServingError(
                f"{url}: timed out after {self.timeout} s waiting for TF Serving's answer", url=url
            ) from None
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            raise ServingError(f"{url}: the answer is not JSON: {text[:200]!r}", url=url) from None


# ------------------------------------------------------------------------------------------------
# gRPC: PredictRequest and PredictResponse


def grpc_predict_request(inputs, model, signature_name=DEFAULT_SIGNATURE, version=None, label=None):
    """Builds a TF Serving gRPC `PredictRequest`.

    Args:
        inputs: dict of input name -> list or numpy array with one value per example, or a
            ready `tf.TensorProto`. Lists go through `tf.make_tensor_proto`, so `str` and `bytes`
            become DT_STRING, Python ints DT_INT32 and floats DT_FLOAT; pass a numpy array to
            choose another dtype (`np.int64`).
        model: str, the model name.
        signature_name: str, default "serving_default".
        version: int or None (default), a version to pin (`model_spec.version`).
        label: str or None (default), a version label instead (`model_spec.version_label`).

    Returns:
        A `tensorflow_serving.apis.predict_pb2.PredictRequest`.

    Raises:
        ValueError: malformed inputs (see `rest_predict_body`), an empty model name, or both a
            version and a label.

    Example:

        >>> request = grpc_predict_request({"text": ["hi"]}, "trec", signature_name="classify")
        >>> request.model_spec.name, request.inputs["text"].string_val
        ('trec', [b'hi'])
    """
    if not isinstance(model, str) or not model:
        raise ValueError(f"model must be a non-empty model name; got {model!r}")
    if not isinstance(signature_name, str) or not signature_name:
        raise ValueError(f"signature_name must be a non-empty string; got {signature_name!r}")
    _check_version_and_label(version, label)
    _check_batch(inputs)
    request = predict_pb2.PredictRequest()
    request.model_spec.name = model
    request.model_spec.signature_name = signature_name
    if version is not None:
        request.model_spec.version.value = version
    elif label is not None:
        request.model_spec.version_label = label
    for name, value in inputs.items():
        if not isinstance(value, tensor_pb2.TensorProto):
            value = tf.make_tensor_proto(value)
        request.inputs[name].CopyFrom(value)
    return request


def _decode_text(array):
    """An object array of UTF-8 bytes -> a `str` array; binary that is not UTF-8 stays bytes."""
    if array.dtype != object:
        return array
    try:
        decoded = [item.decode("utf-8") for item in array.ravel()]
    except (UnicodeDecodeError, AttributeError):
        return array
    return np.array(decoded, dtype=str).reshape(array.shape)


def parse_grpc_response(response, decode_strings=True, batch_size=None):
    """Turns a gRPC `PredictResponse` into a dict of numpy arrays.

    Args:
        response: a `tensorflow_serving.apis.predict_pb2.PredictResponse`.
        decode_strings: bool, default True: decode DT_STRING outputs from UTF-8 into `str`
            arrays, as the REST parser returns them; an output that is not valid UTF-8 stays an
            object array of bytes. False keeps every string output as bytes.
        batch_size: int or None (default), the number of examples sent; when given, every output
            must have exactly that many rows.

    Returns:
        A dict of output name -> numpy array (`tf.make_ndarray` of each output tensor).

    Raises:
        ValueError: `response` is not a `PredictResponse`.
        ServingError: an output's row count differs from `batch_size`.

    Example:

        >>> response = predict_pb2.PredictResponse()
        >>> response.outputs["labels"].CopyFrom(tf.make_tensor_proto(["NUM"]))
        >>> parse_grpc_response(response)["labels"]
        array(['NUM'], dtype='<U3')
    """
    if not isinstance(response, predict_pb2.PredictResponse):
        raise ValueError(
            f"expected a tensorflow_serving PredictResponse; got {type(response).__name__}"
        )
    _check_batch_size(batch_size)
    outputs = {}
    for name, tensor in response.outputs.items():
        array = tf.make_ndarray(tensor)
        outputs[name] = _decode_text(array) if decode_strings else array
    if batch_size is not None:
        _check_rows(outputs, batch_size)
    return outputs


class GrpcClient:
    """Calls one model on a TF Serving gRPC endpoint (`PredictionService.Predict`).

    `grpc` is imported when the client is created, so REST users never load it.

    Args:
        host: str, the server's host name or address (`localhost`, `::1`), without port.
        model: str, the model name.
        port: int, default 8500, the server's `--port`, in 1..65535.
        version: int or None (default), a version to pin.
        label: str or None (default), a version label instead of a version.
        timeout: float, default 30.0, seconds to wait for each answer; positive and finite.
        max_message_mb: int, default 64, the largest answer accepted (gRPC's default is 4 MB,
            less than a batch of `token_ids` sequence outputs).

    Raises:
        ValueError: a malformed host (a port inside it included) or model, a port outside
            1..65535, a timeout that is not a positive number, or both a version and a label.

    Example:

        with GrpcClient("localhost", "trec") as client:
            client.predict({"text": ["How far is the moon?"]}, signature_name="classify")
    """

    def __init__(
        self, host, model, port=GRPC_PORT, version=None, label=None, timeout=30.0, max_message_mb=64
    ):
        import grpc
        from tensorflow_serving.apis import prediction_service_pb2_grpc

        host = _address_host(host)
        port = _check_port(port)
        if not isinstance(model, str) or not model:
            raise ValueError(f"model must be a non-empty model name; got {model!r}")
        _check_version_and_label(version, label)
        self.model = model
        self.version = version
        self.label = label
        self.timeout = _check_timeout(timeout)
        self.target = f"{host}:{port}"
        size = int(max_message_mb) * 1024 * 1024
        self._grpc = grpc
        self._channel = grpc.insecure_channel(
            self.target,
            options=[
                ("grpc.max_receive_message_length", size),
                ("grpc.max_send_message_length", size),
            ],
        )
        self._stub = prediction_service_pb2_grpc.PredictionServiceStub(self._channel)

    def __repr__(self):
        return f"GrpcClient({self.target!r}, {self.model!r})"

    def predict(self, inputs, signature_name=DEFAULT_SIGNATURE, decode_strings=True):
        """Runs a signature on a batch.

        Args:
            inputs: dict of input name -> list or numpy array, one value per example.
            signature_name: str, default "serving_default".
            decode_strings: bool, default True; see `parse_grpc_response`.

        Returns:
            A dict of output name -> numpy array.

        Raises:
            ValueError: malformed inputs (see `grpc_predict_request`).
            ServingError: the server could not be reached, timed out, returned an error status,
                or answered with a row count per output other than the number of examples.
        """
        request = grpc_predict_request(
            inputs,
            self.model,
            signature_name=signature_name,
            version=self.version,
            label=self.label,
        )
        where = f"grpc://{self.target} (model {self.model!r})"
        try:
            response = self._stub.Predict(request, timeout=self.timeout)
        except self._grpc.RpcError as error:
            code = error.code().name if error.code() is not None else "UNKNOWN"
            timed_out = f"timed out after {self.timeout} s: " if code == "DEADLINE_EXCEEDED" else ""
            raise ServingError(
                f"{where}: {timed_out}{code}: {error.details()}",
                url=f"grpc://{self.target}",
                status=code,
            ) from None
        try:
            return parse_grpc_response(
                response, decode_strings=decode_strings, batch_size=_check_batch(inputs)
            )
        except ServingError as error:
            raise ServingError(f"{where}: {error}", url=f"grpc://{self.target}") from None

    def close(self):
        """Closes the channel."""
        self._channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()


# ------------------------------------------------------------------------------------------------
# kbert's exported signatures


def _texts(values, name):
    if isinstance(values, (str, bytes)) or not isinstance(values, (list, tuple, np.ndarray)):
        raise ValueError(f"{name} must be a list of strings, one per example; got {values!r:.200}")
    return list(values)


def _call(client, signature_name, inputs):
    if not callable(getattr(client, "predict", None)):
        raise ValueError(f"client must be a RestClient or GrpcClient; got {type(client).__name__}")
    outputs = client.predict(inputs, signature_name=signature_name)
    # The clients check this already; any other object with a `predict` is checked here.
    try:
        _check_rows(outputs, _check_batch(inputs))
    except ServingError as error:
        raise ServingError(f"signature {signature_name!r}: {error}") from None
    return outputs


def classify(client, texts, text_pairs=None):
    """Calls the `classify` signature of a `kbert export`ed classifier.

    Args:
        client: a `RestClient` or `GrpcClient`.
        texts: list of str, one text per example (input `text`).
        text_pairs: list of str or None (default), second segments for a pair classifier
            (input `text_pair`), as many as `texts`.

    Returns:
        The signature's outputs, a dict of output name -> numpy array.

    Raises:
        ValueError: `texts` or `text_pairs` is a bare string, or they differ in length.
        ServingError: the server failed the request, or an output does not hold one row per
            example sent.

    Example:

        classify(RestClient("localhost", "mrpc"), ["A man sleeps."], ["Someone sleeps."])
    """
    inputs = {"text": _texts(texts, "texts")}
    if text_pairs is not None:
        inputs["text_pair"] = _texts(text_pairs, "text_pairs")
    return _call(client, "classify", inputs)


def tag(client, texts):
    """Calls the `tag` signature of a `kbert export`ed tagger (input `text`).

    Args:
        client: a `RestClient` or `GrpcClient`.
        texts: list of str, one sentence per example.

    Returns:
        The signature's outputs, a dict of output name -> numpy array.

    Raises:
        ValueError: `texts` is a bare string.
        ServingError: the server failed the request, or an output does not hold one row per
            example sent.

    Example:

        tag(RestClient("localhost", "ner"), ["Ada Lovelace was born in London."])
    """
    return _call(client, "tag", {"text": _texts(texts, "texts")})


def answer(client, questions, contexts):
    """Calls the `answer` signature of a `kbert export`ed extractive QA model.

    Args:
        client: a `RestClient` or `GrpcClient`.
        questions: list of str (input `question`).
        contexts: list of str, the passage for each question (input `context`).

    Returns:
        The signature's outputs, a dict of output name -> numpy array.

    Raises:
        ValueError: a bare string instead of a list, or questions and contexts differ in length.
        ServingError: the server failed the request, or an output does not hold one row per
            example sent.

    Example:

        answer(RestClient("localhost", "squad"), ["Who wrote it?"], ["Ada wrote it."])
    """
    return _call(
        client,
        "answer",
        {"question": _texts(questions, "questions"), "context": _texts(contexts, "contexts")},
    )


def embed(client, texts):
    """Calls the `embed` signature that every `kbert export`ed model has (input `text`).

    Args:
        client: a `RestClient` or `GrpcClient`.
        texts: list of str, one text per example.

    Returns:
        The signature's outputs, a dict of output name -> numpy array.

    Raises:
        ValueError: `texts` is a bare string.
        ServingError: the server failed the request, or an output does not hold one row per
            example sent.

    Example:

        embed(GrpcClient("localhost", "minilm"), ["a sentence", "another one"])
    """
    return _call(client, "embed", {"text": _texts(texts, "texts")})
