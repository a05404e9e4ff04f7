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

Modules: `rest_client` (REST URLs, bodies, payloads, `RestClient`), `grpc_client`
(`PredictRequest`/`PredictResponse`, `GrpcClient`), `checks` (`ServingError` and the argument
checks both share), `signatures` (the calls of kbert's exported signatures).

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

from kbert.serving.checks import (
    DEFAULT_SIGNATURE,
    GRPC_PORT,
    REQUEST_FORMATS,
    REST_PORT,
    ServingError,
)
from kbert.serving.grpc_client import GrpcClient, grpc_predict_request, parse_grpc_response
from kbert.serving.rest_client import (
    RestClient,
    parse_rest_response,
    rest_predict_body,
    rest_predict_url,
)
from kbert.serving.signatures import answer, classify, embed, tag

__all__ = [
    "DEFAULT_SIGNATURE",
    "GRPC_PORT",
    "REQUEST_FORMATS",
    "REST_PORT",
    "GrpcClient",
    "RestClient",
    "ServingError",
    "answer",
    "classify",
    "embed",
    "grpc_predict_request",
    "parse_grpc_response",
    "parse_rest_response",
    "rest_predict_body",
    "rest_predict_url",
    "tag",
]
