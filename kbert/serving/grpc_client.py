"""TF Serving's gRPC predict API: `PredictRequest` building, `PredictResponse` parsing, `GrpcClient`.

The request's tensors are `TensorProto`s; gRPC is the faster transport for large numeric outputs.
"""

import numpy as np
import tensorflow as tf
from tensorflow.core.framework import tensor_pb2
from tensorflow_serving.apis import predict_pb2

from kbert.serving.checks import (
    DEFAULT_SIGNATURE,
    GRPC_PORT,
    ServingError,
    address_host,
    check_batch,
    check_batch_size,
    check_port,
    check_rows,
    check_timeout,
    check_version_and_label,
)


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
    check_version_and_label(version, label)
    check_batch(inputs)
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
    check_batch_size(batch_size)
    outputs = {}
    for name, tensor in response.outputs.items():
        array = tf.make_ndarray(tensor)
        outputs[name] = _decode_text(array) if decode_strings else array
    if batch_size is not None:
        check_rows(outputs, batch_size)
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

        host = address_host(host)
        port = check_port(port)
        if not isinstance(model, str) or not model:
            raise ValueError(f"model must be a non-empty model name; got {model!r}")
        check_version_and_label(version, label)
        self.model = model
        self.version = version
        self.label = label
        self.timeout = check_timeout(timeout)
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
                response, decode_strings=decode_strings, batch_size=check_batch(inputs)
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
