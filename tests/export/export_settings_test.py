"""`ExportSettings` checked against a model and tokenizer: the defaults `resolve_settings` fills in.

The errors each bad setting raises, and the signatures built from the settings, are checked end to
end in `saved_model_export_test.py`; here only what needs no graph.
"""

import dataclasses

import pytest
import tensorflow as tf

from kbert.export import ExportSettings
from kbert.export.export_settings import (
    CHARS_PER_TOKEN,
    LONG_INPUT_CHARS,
    check_fits,
    resolve_export_dtype,
    resolve_settings,
)
from kbert.models import Encoder, SequenceClassifier
from kbert.text import BertPreprocessor, LongTextPreprocessor
from kbert.train import precision
from tests.text.text_test_case import TINY_VOCABULARY


@pytest.fixture(scope="module")
def classifier():
    encoder = Encoder.from_preset("tiny", vocabulary_size=len(TINY_VOCABULARY))
    return SequenceClassifier(encoder, num_classes=2)


def test_settings_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        ExportSettings().task = "tag"


def test_defaults_from_a_bare_tokenizer(classifier, tokenizer):
    model, graph_tokenizer, resolved = resolve_settings(classifier, tokenizer, ExportSettings())
    assert model is classifier and graph_tokenizer is tokenizer
    assert (resolved.task, resolved.sequence_length, resolved.truncation) == (
        "classify",
        128,
        "longest_first",
    )
    assert resolved.max_input_chars == CHARS_PER_TOKEN * 128
    assert (resolved.max_answer_length, resolved.pair, resolved.padding) == (30, False, "longest")
    assert resolved.label_names is None and resolved.long_inputs is None
    assert resolved.dtype == "float32"


def test_a_preprocessor_brings_its_length_and_truncation(classifier, tokenizer):
    preprocessor = BertPreprocessor(tokenizer, sequence_length=8, truncation="only_first")
    _, graph_tokenizer, resolved = resolve_settings(
        classifier, preprocessor, ExportSettings(label_names=("a", "b"))
    )
    assert graph_tokenizer is tokenizer
    assert (resolved.sequence_length, resolved.truncation) == (8, "only_first")
    assert resolved.label_names == ["a", "b"]
    _, _, explicit = resolve_settings(classifier, preprocessor, ExportSettings(sequence_length=12))
    assert explicit.sequence_length == 12


@pytest.mark.parametrize("strategy, chars", [("head", CHARS_PER_TOKEN * 8), ("head_tail", None)])
def test_long_text_strategies_keep_whole_documents(classifier, tokenizer, strategy, chars):
    reader = LongTextPreprocessor(tokenizer, sequence_length=8, strategy=strategy)
    _, _, resolved = resolve_settings(classifier, reader, ExportSettings())
    assert resolved.long_inputs["strategy"] == strategy
    assert resolved.max_input_chars == (chars or LONG_INPUT_CHARS)


def test_embed_exports_only_the_encoder(classifier, tokenizer):
    model, _, resolved = resolve_settings(classifier, tokenizer, ExportSettings(task="embed"))
    assert model is classifier.encoder and resolved.task == "embed"


def test_settings_must_be_export_settings(classifier, tokenizer):
    with pytest.raises(ValueError, match="settings must be a kbert.export.ExportSettings"):
        resolve_settings(classifier, tokenizer, {"task": "classify"})


def test_check_fits_refuses_a_window_beyond_the_position_table(classifier, tokenizer):
    positions = classifier.encoder.config.max_sequence_length
    settings = ExportSettings(sequence_length=positions + 1)
    model, _, resolved = resolve_settings(classifier, tokenizer, settings)
    with pytest.raises(ValueError, match=f"its position table has {positions} positions"):
        check_fits(model, resolved)
    with pytest.raises(ValueError, match="padding must be one of"):
        check_fits(model, dataclasses.replace(resolved, padding="max_length"))


def test_dtype_is_checked_by_name_and_auto_resolved(classifier, tokenizer, tmp_path, monkeypatch):
    with pytest.raises(ValueError, match=r"dtype must be one of .*; received 'float16'"):
        ExportSettings(dtype="float16")
    with pytest.raises(ValueError, match=r"dtype must be one of .*; received 'mixed_bfloat16'"):
        resolve_export_dtype("mixed_bfloat16")
    _, _, resolved = resolve_settings(classifier, tokenizer, ExportSettings(dtype="bfloat16"))
    assert resolved.dtype == "bfloat16"
    # "auto" reads the CPU's flags (this machine's GPUs too, where there are any), then times
    # a forward pass in both policies (stubbed here: a faster and a slower bfloat16).
    native, emulated = tmp_path / "native", tmp_path / "emulated"
    native.write_text("processor : 0\nflags : fpu avx2 avx512f avx512_bf16\n")
    emulated.write_text("processor : 0\nflags : fpu avx2\n")
    timed = []

    def probe_with(bfloat16):
        def probe():
            timed.append(bfloat16)
            return {"float32": 100.0, "mixed_bfloat16": bfloat16}

        return probe

    monkeypatch.setitem(precision.PROBES, "inference", probe_with(150.0))
    monkeypatch.setenv("KBERT_CACHE_DIR", str(tmp_path / "faster"))
    assert resolve_export_dtype("auto", cpuinfo=str(native)) == "bfloat16"
    monkeypatch.setitem(precision.PROBES, "inference", probe_with(90.0))
    monkeypatch.setenv("KBERT_CACHE_DIR", str(tmp_path / "slower"))
    gpus = tf.config.list_physical_devices("GPU")
    assert resolve_export_dtype("auto", cpuinfo=str(native)) == ("bfloat16" if gpus else "float32")
    if not gpus:
        assert timed == [150.0, 90.0]  # the inference probe, once per cache
        assert resolve_export_dtype("auto", cpuinfo=str(emulated)) == "float32"
