"""Tests of the TF Serving exporter: signatures vs the Keras models, loaders, versions, bad input.

Each task is exported once per module (tiny models, `sequence_length=16`). The fast tier reloads
in-process (bad shapes and ids also through the session loader, fed unchecked); the slow tier also runs every signature in a fresh process that imports only
TensorFlow and tf-text, through the session-based loader that TF Serving's C++ server uses, and
compares `saved_model_cli show --all` with the documented table.
"""

import contextlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import keras
import numpy as np
import pytest
import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2

from kbert.export import (
    ExportSettings,
    export_saved_model,
    export_settings,
    load_exported,
    next_version,
    saved_model_export,
)
from kbert.export.graph_decoding import answer_outputs, tag_outputs
from kbert.models import Encoder, QuestionAnswerer, SequenceClassifier
from kbert.models.token_classifier import TokenClassifier
from kbert.tasks import classifier_logits
from kbert.text import BertPreprocessor, LongTextPreprocessor
from tests.text.preprocessor_test import ALLOWED_TF_TEXT_OPS, graph_ops
from tests.text.text_test_case import TINY_VOCABULARY

LENGTH = 16
HIDDEN = 16
CLASSES = ["negative", "neutral", "positive"]
TAGS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
TEXTS = ["Hello, world!", "the cat sat", "Café naïve 中文", "", "un aff able ok x"]
PAIRS = ["the cat", "", "hello world hello world hello world", "x", "abc"]
QUESTIONS = ["where sat the cat?", "hello?", "", "x", "naive?"]
CONTEXTS = ["the cat sat on a mat", "hello world", "cafe", "", "Café naïve, ok!"]
STRING = ("DT_STRING", "(-1)")
INT_MATRIX = ("DT_INT32", "(-1, -1)")
FLOAT_MATRIX = ("DT_FLOAT", "(-1, -1)")
EMBED = {
    "inputs": {"text": STRING},
    "outputs": {
        "cls_embedding": ("DT_FLOAT", f"(-1, {HIDDEN})"),
        "mean_embedding": ("DT_FLOAT", f"(-1, {HIDDEN})"),
    },
}
TOKEN_INPUTS = {"token_ids": INT_MATRIX, "segment_ids": INT_MATRIX, "padding_mask": INT_MATRIX}
CLASSIFY = {
    "inputs": {"text": STRING},
    "outputs": {
        "label_ids": ("DT_INT32", "(-1)"),
        "labels": STRING,
        "probabilities": ("DT_FLOAT", "(-1, 3)"),
        "tokens": ("DT_INT32", "(-1)"),
        "tokens_kept": ("DT_INT32", "(-1)"),
        "truncated": ("DT_BOOL", "(-1)"),
    },
}
TAG = {
    "inputs": {"text": STRING},
    "outputs": {
        "tags": ("DT_STRING", "(-1, -1)"),
        "word_starts": INT_MATRIX,
        "word_ends": INT_MATRIX,
        "num_words": ("DT_INT32", "(-1)"),
        "entity_types": ("DT_STRING", "(-1, -1)"),
        "entity_starts": INT_MATRIX,
        "entity_ends": INT_MATRIX,
        "entity_texts": ("DT_STRING", "(-1, -1)"),
        "num_entities": ("DT_INT32", "(-1)"),
    },
}
ANSWER = {
    "inputs": {"question": STRING, "context": STRING},
    "outputs": {
        "answer_start": ("DT_INT32", "(-1)"),
        "answer_end": ("DT_INT32", "(-1)"),
        "answer_text": STRING,
        "score": ("DT_FLOAT", "(-1)"),
    },
}
# The documented signatures per export: signature -> inputs and outputs (dtype, shape).
SIGNATURES = {
    "classifier": {
        "serving_default": CLASSIFY,
        "classify": CLASSIFY,
        "embed": EMBED,
        "token_ids": {"inputs": TOKEN_INPUTS, "outputs": {"logits": ("DT_FLOAT", "(-1, 3)")}},
    },
    "pair_classifier": {
        "serving_default": dict(CLASSIFY, inputs={"text": STRING, "text_pair": STRING}),
        "classify": dict(CLASSIFY, inputs={"text": STRING, "text_pair": STRING}),
        "embed": EMBED,
        "token_ids": {"inputs": TOKEN_INPUTS, "outputs": {"logits": ("DT_FLOAT", "(-1, 3)")}},
    },
    "tagger": {
        "serving_default": TAG,
        "tag": TAG,
        "embed": EMBED,
        "token_ids": {
            "inputs": TOKEN_INPUTS,
            "outputs": {"emissions": ("DT_FLOAT", f"(-1, -1, {len(TAGS)})")},
        },
    },
    "answerer": {
        "serving_default": ANSWER,
        "answer": ANSWER,
        "embed": EMBED,
        "token_ids": {
            "inputs": TOKEN_INPUTS,
            "outputs": {"start_logits": FLOAT_MATRIX, "end_logits": FLOAT_MATRIX},
        },
    },
    "encoder": {
        "serving_default": EMBED,
        "embed": EMBED,
        "token_ids": {
            "inputs": TOKEN_INPUTS,
            "outputs": {
                "sequence_output": ("DT_FLOAT", f"(-1, -1, {HIDDEN})"),
                "pooled_output": ("DT_FLOAT", f"(-1, {HIDDEN})"),
            },
        },
    },
}


# ---------------------------------------------------------------------------------- fixtures


def tiny_encoder(seed, dtype=None):
    keras.utils.set_random_seed(seed)
    return Encoder.from_preset("tiny", vocabulary_size=len(TINY_VOCABULARY), dtype=dtype)


@pytest.fixture(scope="module")
def export_root(tmp_path_factory):
    return tmp_path_factory.mktemp("exports")


@pytest.fixture(scope="module")
def classifier(tokenizer, export_root):
    model = SequenceClassifier(tiny_encoder(1), num_classes=3)
    path = export_saved_model(
        model,
        tokenizer,
        export_root,
        "classifier",
        ExportSettings(label_names=CLASSES, sequence_length=LENGTH),
    )
    return model, path


@pytest.fixture(scope="module")
def pair_classifier(tokenizer, export_root):
    """A bfloat16, multi-label, sentence-pair classifier."""
    model = SequenceClassifier(
        tiny_encoder(2, dtype="mixed_bfloat16"), num_classes=3, multi_label=True
    )
    path = export_saved_model(
        model,
        tokenizer,
        export_root,
        "pair_classifier",
        # A bfloat16 model exported in bfloat16 is exported as it is (float32 would rebuild it).
        ExportSettings(label_names=CLASSES, sequence_length=LENGTH, pair=True, dtype="bfloat16"),
    )
    return model, path


@pytest.fixture(scope="module")
def tagger(tokenizer, export_root):
    model = TokenClassifier(tiny_encoder(3), num_tags=len(TAGS), crf=True)
    # Non-zero transitions, so the CRF path differs from the per-token argmax.
    model.crf_layer.transitions.assign(
        np.random.default_rng(0).normal(size=(len(TAGS), len(TAGS))).astype("float32")
    )
    path = export_saved_model(
        model,
        tokenizer,
        export_root,
        "tagger",
        ExportSettings(label_names=TAGS, sequence_length=LENGTH),
    )
    return model, path


@pytest.fixture(scope="module")
def answerer(tokenizer, export_root):
    model = QuestionAnswerer(tiny_encoder(4))
    path = export_saved_model(
        model,
        tokenizer,
        export_root,
        "answerer",
        ExportSettings(sequence_length=LENGTH, max_answer_length=3),
    )
    return model, path


@pytest.fixture(scope="module")
def encoder(tokenizer, export_root):
    model = tiny_encoder(5)
    path = export_saved_model(
        model, tokenizer, export_root, "encoder", ExportSettings(sequence_length=LENGTH)
    )
    return model, path


def numpy_outputs(outputs):
    return {key: np.asarray(value) for key, value in outputs.items()}


# ---------------------------------------------------------------------------------- expected


def expected_embed(encoder_model, tokenizer, texts):
    packed = BertPreprocessor(tokenizer, sequence_length=LENGTH)(tf.constant(texts))
    outputs = encoder_model(packed, training=False)
    sequence = np.asarray(tf.cast(outputs["sequence_output"], tf.float32))
    mask = np.asarray(packed["padding_mask"], np.float32)[:, :, None]
    return {
        "cls_embedding": sequence[:, 0],
        "mean_embedding": (sequence * mask).sum(1) / mask.sum(1),
    }


def expected_classify(model, tokenizer, texts, pairs=None):
    inputs = tf.constant(texts) if pairs is None else (tf.constant(texts), tf.constant(pairs))
    packed = BertPreprocessor(tokenizer, sequence_length=LENGTH)(inputs)
    logits = tf.cast(model(packed, training=False), tf.float32)
    probabilities = np.asarray(tf.sigmoid(logits) if model.multi_label else tf.nn.softmax(logits))
    ids = probabilities.argmax(-1)
    tokens = tokenizer(tf.constant(texts)).row_lengths().numpy() + 2
    if pairs is not None:
        tokens = tokens + tokenizer(tf.constant(pairs)).row_lengths().numpy() + 1
    kept = np.asarray(packed["padding_mask"]).sum(axis=1)
    return {
        "label_ids": ids,
        "labels": [CLASSES[i] for i in ids],
        "probabilities": probabilities,
        "tokens": tokens.astype(np.int32),
        "tokens_kept": kept.astype(np.int32),
        "truncated": kept < tokens,
    }


def expected_tag(model, tokenizer, texts):
    packed = BertPreprocessor(tokenizer, sequence_length=LENGTH, return_alignment=True)(
        tf.constant(texts)
    )
    inputs = {key: packed[key] for key in ("token_ids", "segment_ids", "padding_mask")}
    outputs = numpy_outputs(
        tag_outputs(
            model(inputs, training=False),
            packed["word_ids"],
            packed["start_offsets"],
            packed["end_offsets"],
            TAGS,
            crf=model.crf_layer,
        )
    )
    outputs["entity_texts"] = [
        [text[start:end] if start >= 0 else "" for start, end in zip(starts, ends, strict=True)]
        for text, starts, ends in zip(
            texts, outputs["entity_starts"], outputs["entity_ends"], strict=True
        )
    ]
    return outputs


def expected_answer(model, tokenizer, questions, contexts, max_answer_length=3):
    packed = BertPreprocessor(
        tokenizer, sequence_length=LENGTH, truncation="only_second", return_alignment=True
    )((tf.constant(questions), tf.constant(contexts)))
    inputs = {key: packed[key] for key in ("token_ids", "segment_ids", "padding_mask")}
    logits = model(inputs, training=False)
    outputs = numpy_outputs(
        answer_outputs(
            logits["start_logits"],
            logits["end_logits"],
            packed["segment_ids"],
            packed["padding_mask"],
            packed["start_offsets"],
            packed["end_offsets"],
            max_answer_length,
        )
    )
    outputs["answer_text"] = [
        context[start:end] if start >= 0 else ""
        for context, start, end in zip(
            contexts, outputs["answer_start"], outputs["answer_end"], strict=True
        )
    ]
    return outputs


def decoded(values):
    """Nested lists of str from str or bytes values (tensors, arrays or lists)."""
    values = np.asarray(values, dtype=object)
    if not values.size:
        return values.tolist()
    return np.vectorize(lambda v: v.decode() if isinstance(v, bytes) else v, otypes=[object])(
        values
    ).tolist()


def assert_outputs_match(actual, expected, atol=1e-5):
    assert sorted(actual) == sorted(expected)
    for key, value in expected.items():
        got = np.asarray(actual[key])
        if got.dtype == object or (got.size and isinstance(got.flat[0], (bytes, str))):
            assert decoded(got) == decoded(value), key
        elif np.issubdtype(got.dtype, np.floating):
            assert got.dtype == np.float32, key
            np.testing.assert_allclose(got, value, atol=atol, err_msg=key)
        else:
            np.testing.assert_array_equal(got, value, err_msg=key)


# ---------------------------------------------------------------------------------- in-process


def test_classifier_signatures_match_keras(classifier, tokenizer):
    model, path = classifier
    loaded = load_exported(path)
    expected = expected_classify(model, tokenizer, TEXTS)
    for name in ("serving_default", "classify"):
        actual = loaded.signatures[name](text=tf.constant(TEXTS))
        assert actual["label_ids"].dtype == tf.int32
        assert_outputs_match(actual, expected)
    np.testing.assert_allclose(expected["probabilities"].sum(-1), 1.0, atol=1e-5)
    embed = loaded.signatures["embed"](text=tf.constant(TEXTS))
    assert_outputs_match(embed, expected_embed(model.encoder, tokenizer, TEXTS))
    packed = BertPreprocessor(tokenizer, sequence_length=LENGTH)(tf.constant(TEXTS))
    raw = loaded.signatures["token_ids"](**packed)
    np.testing.assert_allclose(raw["logits"], model(packed, training=False), atol=1e-5)


def test_pair_multi_label_bfloat16_classifier(pair_classifier, tokenizer):
    model, path = pair_classifier
    assert model.encoder.embeddings.compute_dtype == "bfloat16"
    loaded = load_exported(path)
    expected = expected_classify(model, tokenizer, TEXTS, PAIRS)
    actual = loaded.signatures["classify"](text=tf.constant(TEXTS), text_pair=tf.constant(PAIRS))
    # Sigmoids: independent per class, so rows need not sum to 1; float32 out of a bf16 model.
    assert actual["probabilities"].dtype == tf.float32
    assert_outputs_match(actual, expected, atol=1e-3)
    embed = loaded.signatures["embed"](text=tf.constant(TEXTS))
    assert all(value.dtype == tf.float32 for value in embed.values())
    assert_outputs_match(embed, expected_embed(model.encoder, tokenizer, TEXTS), atol=1e-2)
    ids = tf.constant([[2, 5, 3]])
    raw = loaded.signatures["token_ids"](
        token_ids=ids, segment_ids=tf.zeros_like(ids), padding_mask=tf.ones_like(ids)
    )
    assert raw["logits"].dtype == tf.float32


def test_tagger_signatures_match_keras(tagger, tokenizer):
    model, path = tagger
    loaded = load_exported(path)
    expected = expected_tag(model, tokenizer, TEXTS)
    for name in ("serving_default", "tag"):
        assert_outputs_match(loaded.signatures[name](text=tf.constant(TEXTS)), expected)
    assert expected["num_entities"].sum() > 0  # the random tagger finds some entities
    packed = BertPreprocessor(tokenizer, sequence_length=LENGTH)(tf.constant(TEXTS))
    raw = loaded.signatures["token_ids"](**packed)
    np.testing.assert_allclose(raw["emissions"], model(packed, training=False), atol=1e-5)


def test_answerer_signatures_match_keras(answerer, tokenizer):
    model, path = answerer
    loaded = load_exported(path)
    expected = expected_answer(model, tokenizer, QUESTIONS, CONTEXTS)
    for name in ("serving_default", "answer"):
        actual = loaded.signatures[name](
            question=tf.constant(QUESTIONS), context=tf.constant(CONTEXTS)
        )
        assert_outputs_match(actual, expected)
    assert expected["answer_start"][3] == -1 and expected["answer_text"][3] == ""  # no context
    spans = expected["answer_end"] - expected["answer_start"]
    assert (spans[expected["answer_start"] >= 0] > 0).all()


def test_encoder_signatures_match_keras(encoder, tokenizer):
    model, path = encoder
    loaded = load_exported(path)
    expected = expected_embed(model, tokenizer, TEXTS)
    for name in ("serving_default", "embed"):
        assert_outputs_match(loaded.signatures[name](text=tf.constant(TEXTS)), expected)
    packed = BertPreprocessor(tokenizer, sequence_length=LENGTH)(tf.constant(TEXTS))
    raw = loaded.signatures["token_ids"](**packed)
    reference = model(packed, training=False)
    for key in ("sequence_output", "pooled_output"):
        np.testing.assert_allclose(raw[key], reference[key], atol=1e-5)
    assert sorted(loaded.signatures) == sorted(SIGNATURES["encoder"])


def test_layout_and_assets(classifier, answerer):
    _, path = classifier
    assert Path(path).name == "1" and Path(path).parent.name == "classifier"
    assets = Path(path) / "assets"
    assert (assets / "vocab.txt").read_text().split("\n")[:-1] == TINY_VOCABULARY
    assert (assets / "labels.txt").read_text() == "negative\nneutral\npositive\n"
    assert not (Path(answerer[1]) / "assets" / "labels.txt").exists()
    assert [p.name for p in Path(path).parent.iterdir()] == ["1"]  # no temporary left


def signature_functions(graph_def, signature_defs):
    """Names of the functions the signatures call, transitively (not TF's save/restore ones)."""
    library = {function.signature.name: function for function in graph_def.library.function}
    nodes = {node.name: node for node in graph_def.node}

    def called(node_defs):
        for node in node_defs:
            for value in node.attr.values():
                if value.func.name:
                    yield value.func.name
                yield from (f.name for f in value.list.func)

    roots = [
        nodes[tensor.name.split(":")[0]]
        for signature in signature_defs.values()
        for tensor in signature.outputs.values()
        if tensor.name.split(":")[0] in nodes
    ]
    seen, todo = set(), list(called(roots))
    while todo:
        name = todo.pop()
        if name not in seen and name in library:
            seen.add(name)
            todo.extend(called(library[name].node_def))
    return roots, [library[name] for name in seen]


@pytest.mark.parametrize("export", ["classifier", "tagger", "answerer"])
def test_graph_is_portable(export, request):
    """Only core and TF Serving's tf-text ops; no device pinned in the serving functions."""
    _, path = request.getfixturevalue(export)
    saved = saved_model_pb2.SavedModel()
    saved.ParseFromString((Path(path) / "saved_model.pb").read_bytes())
    (graph,) = saved.meta_graphs
    not_core = graph_ops(graph.graph_def) - set(dir(tf.raw_ops))
    assert not_core <= ALLOWED_TF_TEXT_OPS, not_core
    signatures = {k: v for k, v in graph.signature_def.items() if not k.startswith("__")}
    roots, functions = signature_functions(graph.graph_def, signatures)
    assert len(roots) >= len(signatures) and len(functions) > 10
    pinned = [(node.name, node.device) for node in roots if node.device]
    pinned += [
        (f"{function.signature.name}/{node.name}", node.device)
        for function in functions
        for node in function.node_def
        if node.device
    ]
    assert pinned == []


def test_bad_inputs_in_the_graph(classifier, pair_classifier, answerer, tokenizer):
    model, path = classifier
    classify = load_exported(path).signatures["classify"]
    empty = classify(text=tf.constant([], tf.string))
    assert [tuple(empty[k].shape) for k in ("label_ids", "labels", "probabilities")] == [
        (0,),
        (0,),
        (0, 3),
    ]
    # Invalid UTF-8 is replaced, never a crash: it classifies like the replaced text.
    invalid = classify(text=tf.constant([b"caf\xff hello \xe4\xb8", b"\xff", b"a\x00b"]))
    clean = expected_classify(model, tokenizer, ["caf\ufffd hello \ufffd", "\ufffd", "a\x00b"])
    assert_outputs_match(invalid, clean)
    # 100k characters cost what max_input_chars (32 x 16 = 512) of them cost.
    long_text = "hello " * 20_000 + "cat"
    assert export_settings.CHARS_PER_TOKEN * LENGTH == 512
    assert_outputs_match(
        classify(text=tf.constant([long_text])),
        expected_classify(model, tokenizer, [long_text[:512]]),
    )

    pair = load_exported(pair_classifier[1]).signatures["classify"]
    with pytest.raises(
        tf.errors.InvalidArgumentError,
        match="inputs text and text_pair must have the same batch size",
    ):
        pair(text=tf.constant(["a", "b"]), text_pair=tf.constant(["c"]))
    assert pair(text=tf.constant([], tf.string), text_pair=tf.constant([], tf.string))[
        "probabilities"
    ].shape == (0, 3)
    answer = load_exported(answerer[1]).signatures["answer"]
    with pytest.raises(
        tf.errors.InvalidArgumentError, match="inputs question and context must have"
    ):
        answer(question=tf.constant(["a"]), context=tf.constant(["b", "c"]))
    empty = answer(question=tf.constant([], tf.string), context=tf.constant([], tf.string))
    assert all(value.shape[0] == 0 for value in empty.values())
    bad = answer(question=tf.constant([b"\xff?"]), context=tf.constant([b"the \xffcat"]))
    assert bad["answer_text"].numpy()[0].decode("utf-8") in "the \ufffdcat"


def test_tagger_bad_inputs(tagger):
    tag = load_exported(tagger[1]).signatures["tag"]
    empty = tag(text=tf.constant([], tf.string))
    assert {key: tuple(value.shape)[0] for key, value in empty.items()} == dict.fromkeys(
        TAG["outputs"], 0
    )
    outputs = tag(text=tf.constant([b"\xff\xfe", b"", "ok " * 50_000]))
    assert outputs["num_words"].numpy().tolist()[:2] == [0, 0]
    assert outputs["num_words"].numpy()[2] == LENGTH - 2  # one window of the cut text


# The signature that serving_default is, per export: in-graph errors name it.
MAIN_SIGNATURE = {
    "classifier": "classify",
    "pair_classifier": "classify",
    "tagger": "tag",
    "answerer": "answer",
    "encoder": "embed",
}
# Bad string inputs and the shape the error reports for each.
BAD_RANKS = (
    (np.array([["a b", "c"], ["d", "e"]], dtype=object), "[2 2] (rank 2)"),
    (np.array("a b", dtype=object), "[] (rank 0)"),
)


def rank_requests(export):
    """(signature, inputs, expected error) with one string input of rank 2 or 0, for every input
    of every string signature of `export`."""
    for signature, entry in SIGNATURES[export].items():
        names = list(entry["inputs"])
        if entry["inputs"][names[0]] != STRING:
            continue
        shown = MAIN_SIGNATURE[export] if signature == "serving_default" else signature
        for bad_name in names:
            for bad, shape in BAD_RANKS:
                inputs = {
                    name: bad if name == bad_name else np.array(["a", "b"], dtype=object)
                    for name in names
                }
                yield (
                    signature,
                    inputs,
                    re.escape(
                        f"signature {shown}, input {bad_name}: expected a rank-1 string tensor "
                        f"[batch]; received shape {shape}"
                    ),
                )


@contextlib.contextmanager
def serving_session(path):
    """Runs signatures as TF Serving's C++ server does: TF1 session loader, feeds by tensor name.

    `Session.run` refuses a (2, 2) feed for a (None,) placeholder in Python, before the graph sees
    it; the C++ `Session::Run` that TF Serving calls checks no shape, so the feeds go through
    `_call_tf_sessionrun`, the call below that Python check. Yields `run(signature, inputs)`.
    """
    graph = tf.Graph()
    session = tf.compat.v1.Session(graph=graph)  # not `with`: that would leave eager mode
    with graph.as_default():
        meta = tf.compat.v1.saved_model.loader.load(session, ["serve"], str(path))

    def run(signature, inputs):
        definition = meta.signature_def[signature]
        feeds = {}
        for name, value in inputs.items():
            tensor = graph.get_tensor_by_name(definition.inputs[name].name)
            dtype = object if tensor.dtype == tf.string else tensor.dtype.as_numpy_dtype
            feeds[tensor._as_tf_output()] = np.asarray(value, dtype=dtype)
        names = sorted(definition.outputs)
        fetches = [
            graph.get_tensor_by_name(definition.outputs[name].name)._as_tf_output()
            for name in names
        ]
        return dict(
            zip(names, session._call_tf_sessionrun(None, feeds, fetches, [], None), strict=True)
        )

    try:
        yield run
    finally:
        session.close()


@pytest.mark.parametrize("export", sorted(SIGNATURES))
def test_string_inputs_must_be_rank_1(export, request):
    """A (2, 2) batch or a scalar fails in the graph, through both loaders, naming the input."""
    _, path = request.getfixturevalue(export)
    signatures = load_exported(path).signatures
    requests = list(rank_requests(export))
    assert len(requests) >= 4
    with serving_session(path) as run:
        for signature, inputs, message in requests:
            with pytest.raises(tf.errors.InvalidArgumentError, match=message):
                signatures[signature](**{k: tf.constant(v) for k, v in inputs.items()})
            with pytest.raises(tf.errors.InvalidArgumentError, match=message):
                run(signature, inputs)
        # The same signatures still answer a good batch in the session.
        good = {
            name: np.array(["the cat", ""], dtype=object)
            for name in SIGNATURES[export]["serving_default"]["inputs"]
        }
        assert all(len(value) == 2 for value in run("serving_default", good).values())


def test_token_ids_inputs_checked(classifier):
    _, path = classifier
    ids = [[2, 5, 3]]
    zeros, ones = [[0, 0, 0]], [[1, 1, 1]]
    size = len(TINY_VOCABULARY)
    cases = [  # (token_ids, segment_ids, padding_mask, error)
        (
            [[2, -1, 3]],
            zeros,
            ones,
            f"input token_ids: expected ids in [0, {size}) (vocabulary_size); received values "
            "from -1 to 3",
        ),
        (
            [[2, size, 3]],
            zeros,
            ones,
            f"input token_ids: expected ids in [0, {size}) (vocabulary_size); received values "
            f"from 2 to {size}",
        ),
        (
            ids,
            [[0, 2, 0]],
            ones,
            "input segment_ids: expected ids in [0, 2) (num_segments); received values from 0 to 2",
        ),
        (ids, [[0, -1, 0]], ones, "input segment_ids: expected ids in [0, 2)"),
        (
            ids,
            zeros,
            [[1, 2, 0]],
            "input padding_mask: expected values 0 (padding) or 1 (token); received values from 0 "
            "to 2",
        ),
        (
            [2, 5, 3],
            zeros,
            ones,
            "input token_ids: expected a rank-2 int32 tensor [batch, sequence]; received shape [3] "
            "(rank 1)",
        ),
        (
            ids,
            [[[0, 0, 0]]],
            ones,
            "input segment_ids: expected a rank-2 int32 tensor [batch, sequence]; received shape "
            "[1 1 3] (rank 3)",
        ),
        (
            ids,
            zeros,
            [[1, 1]],
            "inputs segment_ids and padding_mask must have the shape of token_ids; received "
            "token_ids [1 3], segment_ids [1 3], padding_mask [1 2]",
        ),
    ]
    function = load_exported(path).signatures["token_ids"]
    with serving_session(path) as run:
        for token_ids, segment_ids, padding_mask, error in cases:
            inputs = {
                "token_ids": np.array(token_ids, np.int32),
                "segment_ids": np.array(segment_ids, np.int32),
                "padding_mask": np.array(padding_mask, np.int32),
            }
            message = re.escape("signature token_ids") + ".*" + re.escape(error)
            with pytest.raises(tf.errors.InvalidArgumentError, match=message):
                function(**{k: tf.constant(v) for k, v in inputs.items()})
            with pytest.raises(tf.errors.InvalidArgumentError, match=message):
                run("token_ids", inputs)
        # Good ids, the largest included, and an empty batch pass.
        good = {
            "token_ids": [[2, size - 1, 3]],
            "segment_ids": [[0, 1, 1]],
            "padding_mask": [[1, 1, 0]],
        }
        assert run("token_ids", good)["logits"].shape == (1, 3)
        empty = {name: np.zeros((0, 3), np.int32) for name in good}
        assert run("token_ids", empty)["logits"].shape == (0, 3)
        assert function(**{k: tf.constant(v) for k, v in empty.items()})["logits"].shape == (0, 3)


# ---------------------------------------------------------------------------------- export time


def test_export_time_errors(tokenizer, tmp_path):
    model = tiny_encoder(6)
    classifier = SequenceClassifier(model, num_classes=3)
    with pytest.raises(
        ValueError, match="WordPieceTokenizer .* inside the serving graph; received list"
    ):
        export_saved_model(model, TINY_VOCABULARY, tmp_path, "m")
    with pytest.raises(ValueError, match=r"task must be one of .*received 'translate'"):
        export_saved_model(model, tokenizer, tmp_path, "m", ExportSettings(task="translate"))
    with pytest.raises(
        ValueError, match="task 'classify' needs a SequenceClassifier; received a Encoder"
    ):
        export_saved_model(model, tokenizer, tmp_path, "m", ExportSettings(task="classify"))
    with pytest.raises(
        ValueError, match="cannot infer the export task of a model of type Sequential"
    ):
        export_saved_model(keras.Sequential(), tokenizer, tmp_path, "m")
    with pytest.raises(ValueError, match="name each of the model's 3 classes; received 2"):
        export_saved_model(
            classifier, tokenizer, tmp_path, "m", ExportSettings(label_names=["a", "b"])
        )
    with pytest.raises(ValueError, match="without line breaks"):
        export_saved_model(
            classifier,
            tokenizer,
            tmp_path,
            "m",
            ExportSettings(label_names=["a", "b\nc", "d"], sequence_length=LENGTH),
        )
    with pytest.raises(ValueError, match="'tag' task needs label_names"):
        export_saved_model(TokenClassifier(model, num_tags=3), tokenizer, tmp_path, "m")
    with pytest.raises(ValueError, match="pair=True is for the 'classify' task"):
        export_saved_model(model, tokenizer, tmp_path, "m", ExportSettings(pair=True))
    with pytest.raises(ValueError, match=r"version must be an int >= 0 .*received '2'"):
        export_saved_model(model, tokenizer, tmp_path, "m", version="2")
    with pytest.raises(ValueError, match="max_input_chars must be an int >= 1; received 0"):
        export_saved_model(model, tokenizer, tmp_path, "m", ExportSettings(max_input_chars=0))
    with pytest.raises(ValueError, match="name must be a plain directory name"):
        export_saved_model(model, tokenizer, tmp_path, "../m")
    assert list(tmp_path.iterdir()) == []


def test_versions(tokenizer, tmp_path, monkeypatch):
    model = SequenceClassifier(tiny_encoder(7), num_classes=2)
    assert next_version(tmp_path / "m") == 1
    (tmp_path / "m" / "7").mkdir(parents=True)
    (tmp_path / "m" / "notes").mkdir()  # not a version
    # task="embed" on a classifier exports its encoder alone.
    first = export_saved_model(
        model, tokenizer, tmp_path, "m", ExportSettings(task="embed", sequence_length=8)
    )
    assert Path(first).name == "8"
    loaded = load_exported(first)
    assert sorted(loaded.signatures) == sorted(SIGNATURES["encoder"])
    outputs = loaded.signatures["serving_default"](text=tf.constant(["the cat"]))
    assert sorted(outputs) == ["cls_embedding", "mean_embedding"]
    before = {p: p.read_bytes() for p in Path(first).rglob("*") if p.is_file()}
    with pytest.raises(ValueError, match="version 8 of model 'm' already exists"):
        export_saved_model(
            model, tokenizer, tmp_path, "m", ExportSettings(sequence_length=8), version=8
        )
    assert {p: p.read_bytes() for p in Path(first).rglob("*") if p.is_file()} == before

    def broken(*args, **kwargs):
        raise RuntimeError("verification failed")

    monkeypatch.setattr(saved_model_export, "_verify", broken)
    with pytest.raises(RuntimeError, match="verification failed"):
        export_saved_model(model, tokenizer, tmp_path, "m", ExportSettings(sequence_length=8))
    assert sorted(p.name for p in (tmp_path / "m").iterdir()) == ["7", "8", "notes"]
    assert {p: p.read_bytes() for p in Path(first).rglob("*") if p.is_file()} == before


def test_accepts_a_preprocessor(tokenizer, tmp_path):
    model = SequenceClassifier(tiny_encoder(8), num_classes=2)
    preprocessor = BertPreprocessor(tokenizer, sequence_length=8)
    path = export_saved_model(model, preprocessor, tmp_path, "m", version=3)
    assert path == os.path.join(tmp_path, "m", "3")
    outputs = load_exported(path).signatures["classify"](text=tf.constant(["the cat sat"]))
    expected = tf.nn.softmax(model(preprocessor(["the cat sat"]), training=False))
    np.testing.assert_allclose(outputs["probabilities"], expected, atol=1e-5)
    assert outputs["labels"].numpy().tolist() == [str(outputs["label_ids"].numpy()[0]).encode()]


@pytest.mark.parametrize("strategy", ["head", "head_tail", "window_mean", "window_max"])
def test_long_input_strategies_in_the_graph(tokenizer, tmp_path, strategy):
    """`classify` reads long texts as the LongTextPreprocessor does in Python, and says so."""
    model = SequenceClassifier(tiny_encoder(9), num_classes=3)
    reader = LongTextPreprocessor(tokenizer, sequence_length=8, strategy=strategy, stride=3)
    path = export_saved_model(model, reader, tmp_path, "long", ExportSettings(label_names=CLASSES))
    texts = ["the cat sat on the mat " * 3, "hello", "un aff able ok x hello world the cat"]
    outputs = load_exported(path).signatures["classify"](text=tf.constant(texts))
    expected = classifier_logits(model, reader, texts)
    np.testing.assert_allclose(
        outputs["probabilities"], tf.nn.softmax(expected["logits"]), atol=1e-5
    )
    np.testing.assert_array_equal(outputs["tokens"], expected["tokens"])
    np.testing.assert_array_equal(outputs["tokens_kept"], expected["tokens_kept"])
    truncated = outputs["truncated"].numpy().tolist()
    assert truncated == (
        [True, False, True] if strategy in ("head", "head_tail") else [False, False, False]
    )
    with pytest.raises(ValueError, match="single texts"):
        export_saved_model(model, reader, tmp_path, "long_pair", ExportSettings(pair=True))


# ---------------------------------------------------------------------------------- other loaders


def request_cases(tokenizer, models):
    """(export name, path, signature, inputs, expected outputs) for every signature."""
    classifier, pair_classifier, tagger, answerer, encoder = models
    texts = {"text": TEXTS}
    tensors = BertPreprocessor(tokenizer, sequence_length=LENGTH)(tf.constant(TEXTS))
    packed = {key: np.asarray(value).tolist() for key, value in tensors.items()}

    def raw(model, keys=None):
        outputs = model(tensors, training=False)
        if keys is None:
            return np.asarray(tf.cast(outputs, tf.float32))
        return {key: np.asarray(tf.cast(outputs[key], tf.float32)) for key in keys}

    cases = []
    for name, (_, path), main, main_inputs, expected, token_outputs, encoder_model in (
        (
            "classifier",
            classifier,
            "classify",
            texts,
            expected_classify(classifier[0], tokenizer, TEXTS),
            {"logits": raw(classifier[0])},
            classifier[0].encoder,
        ),
        (
            "pair_classifier",
            pair_classifier,
            "classify",
            {"text": TEXTS, "text_pair": PAIRS},
            expected_classify(pair_classifier[0], tokenizer, TEXTS, PAIRS),
            {"logits": raw(pair_classifier[0])},
            pair_classifier[0].encoder,
        ),
        (
            "tagger",
            tagger,
            "tag",
            texts,
            expected_tag(tagger[0], tokenizer, TEXTS),
            {"emissions": raw(tagger[0])},
            tagger[0].encoder,
        ),
        (
            "answerer",
            answerer,
            "answer",
            {"question": QUESTIONS, "context": CONTEXTS},
            expected_answer(answerer[0], tokenizer, QUESTIONS, CONTEXTS),
            raw(answerer[0], ("start_logits", "end_logits")),
            answerer[0].encoder,
        ),
        (
            "encoder",
            encoder,
            "embed",
            texts,
            expected_embed(encoder[0], tokenizer, TEXTS),
            raw(encoder[0], ("sequence_output", "pooled_output")),
            encoder[0],
        ),
    ):
        cases.append((name, path, main, main_inputs, expected))
        cases.append((name, path, "serving_default", main_inputs, expected))
        cases.append((name, path, "embed", texts, expected_embed(encoder_model, tokenizer, TEXTS)))
        cases.append((name, path, "token_ids", packed, token_outputs))
    return cases


@pytest.fixture(scope="module")
def all_exports(classifier, pair_classifier, tagger, answerer, encoder):
    return classifier, pair_classifier, tagger, answerer, encoder


# Both scripts import only TensorFlow and tf-text (no kbert, no keras) and print one JSON line:
# a list of output dicts, one per request, strings decoded and -inf as None.
_JSON_OUTPUTS = (
    "def jsonable(v):\n"
    "    v = np.asarray(v)\n"
    "    if v.dtype == object:\n"
    "        return np.vectorize(lambda s: s.decode('utf-8'), otypes=[object])(v).tolist() "
    "if v.size else v.tolist()\n"
    "    return np.where(np.isinf(v), np.nan, v).tolist() if v.dtype.kind == 'f' else "
    "v.tolist()\n"
)
FRESH_PROCESS_SCRIPT = (
    "import json, sys\n"
    "import numpy as np\n"
    "import tensorflow as tf, tensorflow_text  # noqa: F401 (registers the tf-text ops)\n"
    + _JSON_OUTPUTS
    + "results, loaded = [], {}\n"
    "for path, signature, inputs in json.load(open(sys.argv[1])):\n"
    "    model = loaded.setdefault(path, tf.saved_model.load(path))\n"
    "    function = model.signatures[signature]\n"
    "    feeds = {k: tf.constant(v, function.structured_input_signature[1][k].dtype)\n"
    "             for k, v in inputs.items()}\n"
    "    results.append({k: jsonable(v) for k, v in function(**feeds).items()})\n"
    "print(json.dumps(results))\n"
)
SESSION_SCRIPT = (
    "import json, sys\n"
    "import numpy as np\n"
    "import tensorflow as tf, tensorflow_text  # noqa: F401 (registers the tf-text ops)\n"
    + _JSON_OUTPUTS
    + "results, sessions = [], {}\n"
    "for path, signature, inputs in json.load(open(sys.argv[1])):\n"
    "    if path not in sessions:\n"
    "        session = tf.compat.v1.Session(graph=tf.Graph())\n"
    "        meta = tf.compat.v1.saved_model.loader.load(session, ['serve'], path)\n"
    "        sessions[path] = session, meta\n"
    "    session, meta = sessions[path]\n"
    "    definition = meta.signature_def[signature]\n"
    "    feeds = {definition.inputs[k].name: v for k, v in inputs.items()}\n"
    "    fetches = {k: t.name for k, t in definition.outputs.items()}\n"
    "    results.append({k: jsonable(v) for k, v in session.run(fetches, feeds).items()})\n"
    "print(json.dumps(results))\n"
)


def run_script(script, requests, tmp_path):
    request_file = tmp_path / "requests.json"
    request_file.write_text(json.dumps(requests))
    result = subprocess.run(
        [sys.executable, "-c", script, str(request_file)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def check_remote(script, tokenizer, all_exports, tmp_path):
    cases = request_cases(tokenizer, all_exports)
    results = run_script(
        script,
        [[str(path), signature, inputs] for _, path, signature, inputs, _ in cases],
        tmp_path,
    )
    assert len(results) == len(cases)
    for (name, _, signature, _, expected), actual in zip(cases, results, strict=True):
        expected = {
            k: np.where(np.isinf(v), np.nan, v) if np.asarray(v).dtype.kind == "f" else v
            for k, v in expected.items()
        }
        actual = {
            k: np.asarray(v, np.float32) if np.asarray(expected[k]).dtype.kind == "f" else v
            for k, v in actual.items()
        }
        atol = (
            1e-2
            if name == "pair_classifier" and signature == "embed"
            else (1e-3 if name == "pair_classifier" else 1e-5)
        )
        try:
            assert_outputs_match(actual, expected, atol=atol)
        except AssertionError as error:
            raise AssertionError(f"{name} / {signature}: {error}") from error


@pytest.mark.slow
def test_fresh_process_runs_every_signature(tokenizer, all_exports, tmp_path):
    check_remote(FRESH_PROCESS_SCRIPT, tokenizer, all_exports, tmp_path)


@pytest.mark.slow
def test_session_loader_runs_every_signature(tokenizer, all_exports, tmp_path):
    """The TF1 session loader, by tensor names, as TF Serving's C++ server loads a SavedModel."""
    check_remote(SESSION_SCRIPT, tokenizer, all_exports, tmp_path)


def parse_saved_model_cli(listing):
    """`saved_model_cli show --all` text -> {signature: {inputs|outputs: {key: (dtype, shape)}}}."""
    signatures = {}
    blocks = re.split(r"^signature_def\['([^']+)'\]:$", listing, flags=re.MULTILINE)
    for name, block in zip(blocks[1::2], blocks[2::2], strict=True):
        if name.startswith("__"):
            continue
        block = block.split("\nConcrete Functions:")[0]
        entry = {"inputs": {}, "outputs": {}}
        for kind, key, dtype, shape in re.findall(
            r"(inputs|outputs)\['([^']+)'\] tensor_info:\s+dtype: (\w+)\s+shape: (\S.*)", block
        ):
            entry[kind][key] = (dtype, shape.strip())
        signatures[name] = entry
    return signatures


@pytest.mark.slow
@pytest.mark.parametrize("export", sorted(SIGNATURES))
def test_saved_model_cli_lists_the_documented_signatures(export, request):
    _, path = request.getfixturevalue(export)
    cli = Path(sys.executable).parent / "saved_model_cli"
    result = subprocess.run(
        [str(cli), "show", "--dir", str(path), "--all"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert parse_saved_model_cli(result.stdout) == SIGNATURES[export]


# ---------------------------------------------------------------------------------- unigram

SENTENCEPIECE_OPS = {"SentencepieceOp", "SentencepieceTokenizeOp", "SentencepieceDetokenizeOp"}


def _serve_classifier_through(layer, texts, tmp_path, name):
    """Exports a tiny classifier with graph tokenizer `layer` and checks what every graph
    tokenizer but WordPiece's must give: `classify` through the loaded SavedModel and the
    session loader equals Keras, `vocab.txt` is the layer's vocabulary, and tagging (which
    needs WordPiece's alignment) is refused, leaving nothing behind. Returns the graph's ops
    that are not core TensorFlow ops."""
    keras.utils.set_random_seed(7)
    encoder = Encoder.from_preset("tiny", vocabulary_size=layer.vocabulary_size())
    model = SequenceClassifier(encoder, num_classes=3)
    path = export_saved_model(
        model, layer, tmp_path, name, ExportSettings(label_names=CLASSES, sequence_length=LENGTH)
    )
    expected = expected_classify(model, layer, texts)
    assert_outputs_match(
        numpy_outputs(load_exported(path).signatures["classify"](text=tf.constant(texts))), expected
    )
    with serving_session(path) as run:
        assert_outputs_match(run("classify", {"text": np.array(texts, dtype=object)}), expected)
    assert (Path(path) / "assets" / "vocab.txt").read_text().splitlines() == layer.get_vocabulary()
    tagger = TokenClassifier(tiny_encoder(3), num_tags=len(TAGS))
    with pytest.raises(ValueError, match="task 'tag' maps tokens back .* needs a WordPieceTok"):
        export_saved_model(tagger, layer, tmp_path, "tagger", ExportSettings(label_names=TAGS))
    assert not (tmp_path / "tagger").exists()
    saved = saved_model_pb2.SavedModel()
    saved.ParseFromString((Path(path) / "saved_model.pb").read_bytes())
    return graph_ops(saved.meta_graphs[0].graph_def) - set(dir(tf.raw_ops))


def test_unigram_classifier_serves_raw_text_through_sentencepiece_ops(tmp_path):
    """A model pretrained on a unigram vocabulary exports with `SentencePieceTokenizer`: the
    graph tokenizes as the Python tokenizer does, answers through the session loader as the
    Keras model does, and holds only core ops and tf-text's SentencePiece ops (in the op
    library TF Serving links)."""
    from kbert.text import SentencePieceTokenizer, UnigramTokenizer

    corpus = ["the cat sat on the mat", "hello world, hello cat", "a naive cafe sat there"] * 5
    unigram = UnigramTokenizer.train(corpus, 40, float32_scores=True).with_roles()
    layer = SentencePieceTokenizer(unigram)
    texts = ["the cat sat", "hello, naive world!", "", "  two  spaces", "Ünïcode 中文"]
    assert layer(tf.constant(texts)).to_list() == [unigram.tokenize(t) for t in texts]
    not_core = _serve_classifier_through(layer, texts, tmp_path, "unigram")
    assert not_core and not_core <= SENTENCEPIECE_OPS | ALLOWED_TF_TEXT_OPS, not_core
    # The layer round-trips through its config.
    rebuilt = SentencePieceTokenizer.from_config(layer.get_config())
    assert rebuilt(tf.constant(texts)).to_list() == layer(tf.constant(texts)).to_list()


# ---------------------------------------------------------------------------------- BPE


@pytest.mark.slow
@pytest.mark.parametrize("byte_level", [False, True], ids=["character", "byte_level"])
def test_bpe_classifier_serves_raw_text_through_core_and_regex_split_ops(tmp_path, byte_level):
    """A model pretrained on a BPE vocabulary exports with `GraphBytePairTokenizer`: the graph
    tokenizes as the Python tokenizer does, answers through the session loader as the Keras
    model does, and holds only core ops and tf-text's RegexSplitWithOffsets."""
    from kbert.text import BytePairTokenizer, GraphBytePairTokenizer

    corpus = ["the cat sat on the mat", "hello world, hello cat", "don't stop  me now"] * 5
    bpe = BytePairTokenizer.train(corpus, 300 if byte_level else 60, byte_level=byte_level)
    layer = GraphBytePairTokenizer(bpe.with_roles())
    texts = ["the cat sat", "hello, naive world!", "", "  two  spaces", "Ünïcode 中文 's"]
    assert layer(tf.constant(texts)).to_list() == [layer.bpe.tokenize(t) for t in texts]
    not_core = _serve_classifier_through(layer, texts, tmp_path, "bpe")
    assert not_core == {"RegexSplitWithOffsets"}, not_core
