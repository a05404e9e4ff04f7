"""What both TF Serving clients share: ports, `ServingError`, and the checks of their arguments.

Each check raises a ValueError that says what was expected and what was received, so a malformed
host, port, timeout or batch fails before any request is sent.
"""

import ipaddress
import math
import numbers
import re

import numpy as np
from tensorflow.core.framework import tensor_pb2

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


def check_batch(inputs):
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


def address_host(host):
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


def check_port(port):
    """Returns `port` as an int, or raises ValueError unless it is an int in 1..65535."""
    if isinstance(port, bool) or not isinstance(port, numbers.Integral) or not 1 <= port <= 65535:
        raise ValueError(f"port must be an int in 1..65535; got {port!r}")
    return int(port)


def check_timeout(timeout):
    """Returns `timeout`, or raises ValueError unless it is a positive, finite number."""
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, numbers.Real)
        or not math.isfinite(timeout)
        or timeout <= 0
    ):
        raise ValueError(f"timeout must be a positive, finite number of seconds; got {timeout!r}")
    return timeout


def check_rows(outputs, batch_size):
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


def check_batch_size(batch_size):
    if batch_size is not None and (
        isinstance(batch_size, bool)
        or not isinstance(batch_size, numbers.Integral)
        or batch_size < 1
    ):
        raise ValueError(f"batch_size must be an int >= 1 or None; got {batch_size!r}")


def check_version_and_label(version, label):
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
