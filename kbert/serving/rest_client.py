"""TF Serving's REST predict API: URLs, JSON request bodies, response payloads, `RestClient`.

Speaks https://www.tensorflow.org/tfx/serving/api_rest with nothing but `urllib`: requests in the
row format (`{"instances": [{...}, ...]}`) or the columnar one (`{"inputs": {...}}`).
"""

import base64
import json
import urllib.error
import urllib.parse
import urllib.request

import numpy as np

from kbert.serving.checks import (
    DEFAULT_SIGNATURE,
    REQUEST_FORMATS,
    REST_PORT,
    ServingError,
    address_host,
    check_batch,
    check_batch_size,
    check_port,
    check_rows,
    check_timeout,
    check_version_and_label,
)


def _rest_model_url(host, model, version=None, label=None, port=REST_PORT, scheme="http"):
    host = address_host(host)
    port = check_port(port)
    if not isinstance(model, str) or not model:
        raise ValueError(f"model must be a non-empty model name; got {model!r}")
    if scheme not in ("http", "https"):
        raise ValueError(f"scheme must be 'http' or 'https'; got {scheme!r}")
    check_version_and_label(version, label)
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
    batch_size = check_batch(inputs)
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
    check_batch_size(batch_size)
    outputs = _rest_outputs(payload)
    if batch_size is not None:
        check_rows(outputs, batch_size)
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
        check_timeout(timeout)

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
            return parse_rest_response(payload, batch_size=check_batch(inputs))
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
