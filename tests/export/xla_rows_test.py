"""Small batches through XLA (`ExportSettings(xla_rows=...)`) and TF Serving's warm-up file.

Tiny models at `sequence_length=16` (padded lengths 8 and 16): the XLA branch and the plain one
give the Keras model's outputs; the export holds an XLA-compiled function; the warm-up file has one
request per (rows, padded length) of the task's own signature, each packing to its length, and the
session loader TF Serving uses runs them all.
"""

from pathlib import Path
from types import SimpleNamespace

import pytest
import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2

from kbert.cli import export as export_cli
from kbert.export import ExportSettings, export_saved_model, export_settings, load_exported
from kbert.export.dynamic_padding import padded_length
from kbert.export.signatures.serving_graph import ServingGraph
from kbert.export.warmup_requests import (
    WARMUP_FILE,
    _filler_word,
    padded_lengths,
    read_warmup_requests,
)
from kbert.models import QuestionAnswerer, SequenceClassifier
from kbert.text import BertPreprocessor, WordPieceTokenizer
from tests.export.saved_model_export_test import (
    CLASSES,
    LENGTH,
    PAIRS,
    TEXTS,
    assert_outputs_match,
    expected_classify,
    expected_embed,
    serving_session,
    tiny_encoder,
)
from tests.text.text_test_case import TINY_VOCABULARY


@pytest.fixture(scope="module")
def classifier(tokenizer, tmp_path_factory):
    model = SequenceClassifier(tiny_encoder(1), num_classes=3)
    path = export_saved_model(
        model,
        tokenizer,
        tmp_path_factory.mktemp("xla"),
        "classifier",
        ExportSettings(label_names=CLASSES, sequence_length=LENGTH, xla_rows=2),
    )
    return model, path


def compiled_functions(path):
    """Names of the SavedModel's library functions marked for XLA compilation."""
    saved = saved_model_pb2.SavedModel()
    saved.ParseFromString((path / "saved_model.pb").read_bytes())
    library = saved.meta_graphs[0].graph_def.library
    return [
        function.signature.name
        for function in library.function
        if function.attr["_XlaMustCompile"].b
    ]


def packed_lengths(tokenizer, inputs):
    """The length each warm-up batch pads to in the export's preprocessor."""
    values = [tf.constant(value) for value in inputs.values()]
    packed = BertPreprocessor(tokenizer, sequence_length=LENGTH)(
        tuple(values) if len(values) > 1 else values[0]
    )
    return int(padded_length(packed["padding_mask"], LENGTH))


def test_both_branches_give_the_keras_outputs(classifier, tokenizer):
    model, path = classifier
    path = Path(path)
    assert compiled_functions(path), "no XLA-compiled function in the export"
    loaded = load_exported(path)
    # 1 and 2 rows take the XLA branch, 5 the plain one.
    for texts in (TEXTS[:1], TEXTS[1:3], TEXTS):
        actual = loaded.signatures["classify"](text=tf.constant(texts))
        assert_outputs_match(actual, expected_classify(model, tokenizer, texts))
    for texts in (TEXTS[:1], TEXTS):
        actual = loaded.signatures["embed"](text=tf.constant(texts))
        assert_outputs_match(actual, expected_embed(model.encoder, tokenizer, texts))


def test_the_warmup_file_covers_every_shape_and_the_session_loader_runs_it(classifier, tokenizer):
    _, path = classifier
    requests = read_warmup_requests(path)
    assert [name for name, _ in requests] == ["classify"] * 4
    shapes = [(len(inputs["text"]), packed_lengths(tokenizer, inputs)) for _, inputs in requests]
    assert shapes == [(1, 8), (1, 16), (2, 8), (2, 16)]
    with serving_session(path) as run:
        for name, inputs in requests:
            outputs = run(name, inputs)
            assert outputs["probabilities"].shape == (len(inputs["text"]), 3)


def test_pair_answer_and_embed_exports_warm_their_own_signature(tokenizer, tmp_path):
    pair = export_saved_model(
        SequenceClassifier(tiny_encoder(2), num_classes=3),
        tokenizer,
        tmp_path,
        "pair",
        ExportSettings(sequence_length=LENGTH, pair=True, xla_rows=1),
    )
    answer = export_saved_model(
        QuestionAnswerer(tiny_encoder(4)),
        tokenizer,
        tmp_path,
        "answer",
        ExportSettings(sequence_length=LENGTH, xla_rows=1),
    )
    embed = export_saved_model(
        tiny_encoder(5),
        tokenizer,
        tmp_path,
        "embed",
        ExportSettings(sequence_length=LENGTH, xla_rows=1),
    )
    for path, signature, names in (
        (pair, "classify", ["text", "text_pair"]),
        (answer, "answer", ["context", "question"]),
        (embed, "embed", ["text"]),
    ):
        requests = read_warmup_requests(path)
        assert [name for name, _ in requests] == [signature] * 2
        assert [sorted(inputs) for _, inputs in requests] == [names] * 2
        assert [packed_lengths(tokenizer, inputs) for _, inputs in requests] == [8, 16]
    loaded = load_exported(pair)
    outputs = loaded.signatures["classify"](
        text=tf.constant(TEXTS[:1]), text_pair=tf.constant(PAIRS[:1])
    )
    assert outputs["probabilities"].shape == (1, 3)


def test_no_warmup_file_without_xla_rows(tokenizer, tmp_path):
    path = export_saved_model(
        tiny_encoder(5), tokenizer, tmp_path, "plain", ExportSettings(sequence_length=LENGTH)
    )
    assert read_warmup_requests(path) == []
    assert not (Path(path) / WARMUP_FILE).exists()
    assert compiled_functions(Path(path)) == []


@pytest.mark.parametrize("value", [-1, 33, True, 1.5, "2"])
def test_bad_xla_rows_are_refused(value):
    with pytest.raises(ValueError, match=r"xla_rows must be an int from 0 \(off\) to 32"):
        ExportSettings(xla_rows=value)


def test_the_cli_bound_is_the_library_bound():
    assert export_cli.MAX_XLA_ROWS == export_settings.MAX_XLA_ROWS


def test_padded_lengths():
    from types import SimpleNamespace

    assert padded_lengths(SimpleNamespace(padding="longest", sequence_length=16)) == [8, 16]
    assert padded_lengths(SimpleNamespace(padding="longest", sequence_length=5)) == [5]
    assert padded_lengths(SimpleNamespace(padding="fixed", sequence_length=16)) == [16]


def test_a_tokenizer_that_splits_every_filler_word_is_refused():
    def two_per_word(texts):
        words = tf.strings.split(texts)
        return tf.RaggedTensor.from_row_lengths(
            tf.zeros([2 * tf.size(words.flat_values)], tf.int32), 2 * words.row_lengths()
        )

    with pytest.raises(ValueError, match="splits each of .* into several tokens"):
        _filler_word(two_per_word)
    assert _filler_word(WordPieceTokenizer(TINY_VOCABULARY)) == "x"


def test_only_batches_of_1_to_xla_rows_rows_take_the_compiled_branch():
    graph = ServingGraph.__new__(ServingGraph)  # `_run` reads only the settings and the cache
    graph.settings = SimpleNamespace(xla_rows=2, task="classify")

    def layer(inputs, training):
        return tf.zeros([tf.shape(inputs["token_ids"])[0]])

    # The compiled copy, replaced by one that marks its outputs with one extra row.
    graph._compiled = {id(layer): lambda inputs: tf.zeros([tf.shape(inputs["token_ids"])[0] + 1])}
    run = tf.function(lambda ids: graph._run(layer, {"token_ids": ids}))
    taken = {rows: len(run(tf.zeros([rows, 4], tf.int32))) == rows + 1 for rows in (0, 1, 2, 3, 5)}
    assert taken == {0: False, 1: True, 2: True, 3: False, 5: False}


def test_more_warmup_requests_than_tf_serving_loads_are_refused():
    settings = SimpleNamespace(
        task="embed", padding="longest", pair=False, xla_rows=32, sequence_length=256
    )
    with pytest.raises(
        ValueError,
        match=r"xla_rows 32 × 32 padded lengths \(sequence_length 256, padding 'longest'\) makes "
        r"1024 warm-up requests, and TF Serving refuses to load a version with more than 1000: "
        r"use xla_rows of at most 31",
    ):
        export_settings.check_fits(object(), settings)
    export_settings.check_fits(object(), SimpleNamespace(**{**vars(settings), "xla_rows": 31}))


def test_a_length_max_input_chars_cannot_reach_is_refused(tokenizer, tmp_path):
    with pytest.raises(ValueError, match=r"packs to length 8 with max_input_chars=10"):
        export_saved_model(
            tiny_encoder(5),
            tokenizer,
            tmp_path,
            "short",
            ExportSettings(sequence_length=LENGTH, max_input_chars=10, xla_rows=1),
        )
    assert not any((tmp_path / "short").glob("*/saved_model.pb"))


@pytest.mark.parametrize("content", [b"not a tfrecord file", None])
def test_a_warmup_file_that_is_no_prediction_log_is_named(tmp_path, content):
    target = tmp_path / WARMUP_FILE
    target.parent.mkdir(parents=True)
    if content is None:  # a well-formed TFRecord whose record is no PredictionLog
        with tf.io.TFRecordWriter(str(target)) as writer:
            writer.write(b"\xff\xff\xff")
    else:
        target.write_bytes(content)
    with pytest.raises(ValueError, match=r"tf_serving_warmup_requests must be a TFRecord file"):
        read_warmup_requests(tmp_path)
