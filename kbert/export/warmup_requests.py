"""TF Serving warm-up requests: every input shape an XLA-compiled export will meet, sent at load.

An export with `xla_rows` (`kbert.export.export_settings.ExportSettings`) compiles its model once
per input shape: per rows count up to `xla_rows` and per length a batch is padded to (multiples
of `kbert.export.dynamic_padding.PAD_MULTIPLE` up to `sequence_length`, or `sequence_length`
alone with fixed padding). Left to the first requests, each compile would land on their
latency. TF Serving reads
`<version>/assets.extra/tf_serving_warmup_requests` (a TFRecord file of `PredictionLog`s) and runs
each request while it loads the model, before the version serves. This module writes one request
per (rows, length) for the task's own signature, and reads them back for a loader that is not
TF Serving (`benchmarks/serving.py` runs them the way the server does).

The texts are a single-token word repeated ("x" for an English WordPiece vocabulary): enough of
them to fill the length exactly, checked through the export's own cleaning and packing, so a
request that misses its length is an export error, not a silent gap. TF Serving reads at most
`MAX_WARMUP_REQUESTS` of them; `warmup_request_count` is checked against it before an export.
"""

import os

import numpy as np
import tensorflow as tf
from google.protobuf.message import DecodeError
from tensorflow_serving.apis import predict_pb2, prediction_log_pb2

from kbert.export.dynamic_padding import PAD_MULTIPLE, padded_length

WARMUP_FILE = os.path.join("assets.extra", "tf_serving_warmup_requests")
# TF Serving refuses to load a version whose warm-up file holds more records than this
# (`WarmupConsts::kMaxNumRecords`, tensorflow_serving/servables/tensorflow/saved_model_warmup_util.h).
MAX_WARMUP_REQUESTS = 1000
# Words tried, in order, for one that the tokenizer keeps as a single token: the shortest first,
# so that a request reaches its length in the fewest characters (`max_input_chars` cuts inputs).
_FILLER_WORDS = ("x", "a", "1", ".", "is", "of", "the")
# The inputs of each task's own signature; a pair classifier's "classify" takes two.
_INPUTS = {
    "classify": ("text",),
    "tag": ("text",),
    "embed": ("text",),
    "answer": ("question", "context"),
}


def padded_lengths(settings):
    """The lengths a batch can be padded to under `settings` (`SignatureSettings`), ascending.

    Example:
    >>> from types import SimpleNamespace
    >>> padded_lengths(SimpleNamespace(padding="longest", sequence_length=20))
    [8, 16, 20]
    """
    if settings.padding == "fixed":
        return [settings.sequence_length]
    lengths = range(PAD_MULTIPLE, settings.sequence_length + PAD_MULTIPLE, PAD_MULTIPLE)
    return sorted({min(length, settings.sequence_length) for length in lengths})


def warmup_request_count(settings):
    """How many warm-up requests an export with these `SignatureSettings` writes."""
    return settings.xla_rows * len(padded_lengths(settings)) if settings.xla_rows else 0


def input_names(settings):
    """The input names of the task's own signature (`settings`: `SignatureSettings`)."""
    if settings.task == "classify" and settings.pair:
        return ("text", "text_pair")
    return _INPUTS[settings.task]


def _filler_word(tokenizer):
    """A word that `tokenizer` turns into exactly one token per space-separated copy."""
    for word in _FILLER_WORDS:
        lengths = tokenizer(tf.constant([word, f"{word} {word} {word}"])).row_lengths()
        if lengths.numpy().tolist() == [1, 3]:
            return word
    raise ValueError(
        f"the tokenizer splits each of {list(_FILLER_WORDS)} into several tokens; the warm-up "
        "requests need a word it keeps whole (export without xla_rows, or warm the server "
        "yourself)"
    )


def _packed_length(graph, segments):
    """The length the task's own signature pads a batch of `segments` (one row) to."""
    settings = graph.settings
    if settings.padding == "fixed":
        return settings.sequence_length
    cleaned = tuple(graph.clean(tf.constant([text])) for text in segments)
    if settings.task in ("tag", "answer"):
        pack = graph.aligned
    elif settings.task == "classify" and not settings.pair:
        pack = graph.long_text
    else:
        pack = graph.preprocessor
    packed = pack(cleaned if len(cleaned) > 1 else cleaned[0])
    return int(padded_length(packed["padding_mask"], settings.sequence_length))


def _segments(length, names):
    """Words per input so the packed row holds `length` tokens ([CLS], [SEP]s included)."""
    words = length - 1 - len(names)  # [CLS] and one [SEP] per segment
    if len(names) == 1:
        return [words]
    first = max(1, words // 2)
    return [first, words - first]


def warmup_batches(graph):
    """One input batch per (rows, padded length) the XLA branch of `graph` can meet.

    Args:
        graph: `kbert.export.signatures.serving_graph.ServingGraph` with `settings.xla_rows`
            >= 1.

    Returns:
        list of dicts, input name -> numpy array of str, shape (rows,); rows ascending, then
        length.

    Raises:
        ValueError: a length no warm-up text reaches within `max_input_chars` characters (the
            signature cuts it first), or a tokenizer that splits every filler word.
    """
    settings = graph.settings
    names = input_names(settings)
    word = _filler_word(graph.preprocessor.tokenizer)
    texts = {}
    for length in padded_lengths(settings):
        segments = [" ".join([word] * count) for count in _segments(length, names)]
        got = _packed_length(graph, segments)
        if got != length:
            raise ValueError(
                f"a warm-up request of {length} tokens ({word!r} repeated, "
                f"{max(len(text) for text in segments)} characters) packs to length {got} "
                f"with max_input_chars={settings.max_input_chars}: raise max_input_chars to at "
                f"least {2 * settings.sequence_length} or export without xla_rows"
            )
        texts[length] = segments
    return [
        {
            name: np.asarray([segment] * rows, dtype=object)
            for name, segment in zip(names, texts[length], strict=True)
        }
        for rows in range(1, settings.xla_rows + 1)
        for length in sorted(texts)
    ]


def write_warmup_requests(path, model_name, signature, batches):
    """Writes `batches` as TF Serving's warm-up file of the version directory `path`.

    Args:
        path: str or `os.PathLike`, a version directory (its `assets.extra/` is created).
        model_name: str, the model's name in the requests (TF Serving runs warm-up requests
            against the version being loaded, whatever name they carry).
        signature: str, the signature each request calls.
        batches: list of dicts of input name -> array, as `warmup_batches` returns.

    Returns:
        str, the file written.
    """
    target = os.path.join(os.fspath(path), WARMUP_FILE)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with tf.io.TFRecordWriter(target) as writer:
        for inputs in batches:
            request = predict_pb2.PredictRequest()
            request.model_spec.name = model_name
            request.model_spec.signature_name = signature
            for name, value in inputs.items():
                request.inputs[name].CopyFrom(tf.make_tensor_proto(value, dtype=tf.string))
            log = prediction_log_pb2.PredictionLog(
                predict_log=prediction_log_pb2.PredictLog(request=request)
            )
            writer.write(log.SerializeToString())
    return target


def read_warmup_requests(path):
    """The warm-up requests of a version directory, in file order.

    Args:
        path: str or `os.PathLike`, a version directory written by `export_saved_model`.

    Returns:
        list of (signature name, dict of input name -> numpy array); empty when the export has
        no warm-up file (an export without `xla_rows`).

    Raises:
        ValueError: a warm-up file that is not a TFRecord file of PredictionLog requests.
    """
    source = os.path.join(os.fspath(path), WARMUP_FILE)
    if not os.path.isfile(source):
        return []
    requests = []
    try:
        for record in tf.data.TFRecordDataset(source).as_numpy_iterator():
            request = prediction_log_pb2.PredictionLog.FromString(record).predict_log.request
            inputs = {name: tf.make_ndarray(proto) for name, proto in request.inputs.items()}
            requests.append((request.model_spec.signature_name, inputs))
    except (tf.errors.DataLossError, DecodeError) as error:
        raise ValueError(
            f"{source} must be a TFRecord file of TF Serving PredictionLog requests (as "
            f"write_warmup_requests writes); reading it failed: {error}"
        ) from error
    return requests
