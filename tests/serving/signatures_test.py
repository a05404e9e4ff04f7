"""`classify`, `tag`, `answer` and `embed` through a recording stand-in for a client."""

import numpy as np
import pytest

from kbert.serving import (
    RestClient,
    ServingError,
    answer,
    classify,
    embed,
    tag,
)
from tests.serving.ports import closed_port

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
