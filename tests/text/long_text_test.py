"""Long-input strategies: head, head + tail and sliding windows, against plain Python."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from kbert.data.classification_dataset import classification_dataset, long_text_dataset
from kbert.models import Encoder, SequenceClassifier
from kbert.tasks import classifier_logits
from kbert.text import (
    BertPreprocessor,
    LongTextPreprocessor,
    WordPieceTokenizer,
    aggregate_window_logits,
    window_spans,
)
from tests.text.text_test_case import TINY_VOCABULARY, check_preprocessing_layer

WORDS = ["hello", "world", "the", "cat", "sat", "cafe", "naive", "ok", "x", "abc", "b", "c", "d"]


@pytest.fixture(scope="module")
def tokenizer():
    return WordPieceTokenizer(TINY_VOCABULARY)


def random_texts(count, seed, longest=40):
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, size=rng.integers(0, longest))) for _ in range(count)]


def python_windows(length, window, stride, max_windows=None):
    """The spans by the rule in `window_spans`' docstring, written as a plain loop."""
    spans, start = [], 0
    while True:
        start_here = min(start, max(length - window, 0))
        spans.append((start_here, min(start_here + window, length)))
        if start_here + window >= length:
            break
        start += stride
    return spans[:max_windows] if max_windows else spans


@pytest.mark.parametrize(
    "window,stride,max_windows", [(4, 2, None), (5, 5, None), (6, 1, None), (4, 3, 2), (1, 1, None)]
)
def test_window_spans_match_a_python_loop(window, stride, max_windows):
    lengths = list(range(0, 23))
    text_index, starts, ends = window_spans(tf.constant(lengths), window, stride, max_windows)
    expected = [
        (i, s, e)
        for i, n in enumerate(lengths)
        for s, e in python_windows(n, window, stride, max_windows)
    ]
    got = list(
        zip(
            text_index.numpy().tolist(), starts.numpy().tolist(), ends.numpy().tolist(), strict=True
        )
    )
    assert got == expected
    if max_windows is None:  # every token is covered, no window is short unless its text is
        for i, n in enumerate(lengths):
            covered = set()
            for index, s, e in got:
                if index == i:
                    covered.update(range(s, e))
                    assert e - s == min(window, n)
            assert covered == set(range(n))


def test_aggregate_window_logits_against_numpy():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(7, 3)).astype("float32")
    index = np.array([0, 0, 1, 2, 2, 2, 3])
    for mode, reduce in (("mean", np.mean), ("max", np.max)):
        got = aggregate_window_logits(tf.constant(logits), tf.constant(index), 4, mode).numpy()
        expected = np.stack([reduce(logits[index == i], axis=0) for i in range(4)])
        np.testing.assert_allclose(got, expected, rtol=1e-6)
    with pytest.raises(ValueError, match="'mean' or 'max'"):
        aggregate_window_logits(tf.constant(logits), tf.constant(index), 4, "sum")


@pytest.mark.parametrize("strategy", ["head", "head_tail", "window_mean", "window_max"])
def test_each_strategy_against_python(tokenizer, strategy):
    length, head_tokens, stride = 9, 2, 3
    budget = length - 2
    layer = LongTextPreprocessor(
        tokenizer, sequence_length=length, strategy=strategy, head_tokens=head_tokens, stride=stride
    )
    texts = random_texts(30, seed=1) + ["", "hello"]
    out = check_preprocessing_layer(layer, tf.constant(texts))
    ids = [tokenizer(tf.constant(text)).numpy().tolist() for text in texts]
    rows, index, kept = [], [], []
    for i, tokens in enumerate(ids):
        if strategy == "head":
            pieces = [tokens[:budget]]
        elif strategy == "head_tail":
            pieces = [
                tokens
                if len(tokens) <= budget
                else tokens[:head_tokens] + tokens[len(tokens) - (budget - head_tokens) :]
            ]
        else:
            pieces = [tokens[s:e] for s, e in python_windows(len(tokens), budget, stride)]
        rows += pieces
        index += [i] * len(pieces)
        kept.append(min(len(tokens), budget) + 2)
    expected_ids = [[2] + row + [3] + [0] * (budget - len(row)) for row in rows]
    assert out["token_ids"] == expected_ids
    assert out["padding_mask"] == [[1] * (len(row) + 2) + [0] * (budget - len(row)) for row in rows]
    assert out["segment_ids"] == [[0] * length] * len(rows)
    assert out["text_index"] == index
    assert out["tokens"] == [len(tokens) + 2 for tokens in ids]
    if strategy.startswith("window"):
        assert out["tokens_kept"] == out["tokens"]  # windows read every token
    else:
        assert out["tokens_kept"] == kept


def test_head_equals_bert_preprocessor(tokenizer):
    texts = random_texts(20, seed=2)
    long_text = LongTextPreprocessor(tokenizer, sequence_length=12)(tf.constant(texts))
    bert = BertPreprocessor(tokenizer, sequence_length=12)(tf.constant(texts))
    for key in ("token_ids", "segment_ids", "padding_mask"):
        np.testing.assert_array_equal(long_text[key], bert[key])


def test_max_windows_reports_the_cut(tokenizer):
    layer = LongTextPreprocessor(
        tokenizer, sequence_length=5, strategy="window_max", stride=3, max_windows=2
    )
    out = layer(["hello world the cat sat cafe naive ok x abc", "hello"])
    assert out["text_index"].numpy().tolist() == [0, 0, 1]
    # Windows [0, 3) and [3, 6) of 10 tokens: 6 + 2 of 12 read.
    assert out["tokens"].numpy().tolist() == [12, 3]
    assert out["tokens_kept"].numpy().tolist() == [8, 3]


def test_bad_arguments_name_what_was_expected(tokenizer):
    cases = [
        (dict(strategy="tail"), "strategy must be one of"),
        (dict(sequence_length=2), "sequence_length must be an int >= 3"),
        (dict(strategy="head_tail", head_tokens=9), "head_tokens must be at most"),
        (dict(strategy="window_mean", stride=0), "stride must be an int >= 1"),
        (dict(strategy="window_mean", stride=9), "stride must be at most the window"),
        (dict(strategy="window_mean", max_windows=0), "max_windows must be an int >= 1"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ValueError, match=message):
            LongTextPreprocessor(tokenizer, **{"sequence_length": 10, **kwargs})
    with pytest.raises(ValueError, match="WordPieceTokenizer"):
        LongTextPreprocessor("vocab.txt")
    with pytest.raises(ValueError, match="rank-1 string tensor"):
        LongTextPreprocessor(tokenizer)(tf.constant("a single text"))
    with pytest.raises(ValueError, match="1-D batch of strings"):
        LongTextPreprocessor(tokenizer)(tf.constant([["a", "b"]]))


def tiny_classifier(seed=0):
    keras.utils.set_random_seed(seed)
    encoder = Encoder.from_preset("tiny", vocabulary_size=len(TINY_VOCABULARY))
    return SequenceClassifier(encoder, num_classes=3)


@pytest.mark.parametrize("strategy,mode", [("window_mean", np.mean), ("window_max", np.max)])
def test_classifier_logits_aggregate_each_texts_windows(tokenizer, strategy, mode):
    model = tiny_classifier()
    layer = LongTextPreprocessor(tokenizer, sequence_length=8, strategy=strategy, stride=4)
    texts = random_texts(9, seed=3)
    scored = classifier_logits(model, layer, texts, batch_size=4)
    packed = layer(tf.constant(texts))
    rows = np.asarray(model(layer.encoder_inputs(packed), training=False))
    index = packed["text_index"].numpy()
    expected = np.stack([mode(rows[index == i], axis=0) for i in range(len(texts))])
    np.testing.assert_allclose(scored["logits"], expected, atol=1e-5)
    assert scored["rows"].tolist() == np.bincount(index, minlength=len(texts)).tolist()
    np.testing.assert_array_equal(scored["tokens_kept"], scored["tokens"])


def test_classifier_logits_with_a_bert_preprocessor_report_truncation(tokenizer):
    model = tiny_classifier()
    preprocessor = BertPreprocessor(tokenizer, sequence_length=8)
    scored = classifier_logits(model, preprocessor, ["hello world", "the cat sat " * 4])
    assert scored["tokens"].tolist() == [4, 14] and scored["tokens_kept"].tolist() == [4, 8]
    expected = model(preprocessor(["hello world", "the cat sat " * 4]), training=False)
    np.testing.assert_allclose(scored["logits"], expected, atol=1e-5)


def test_window_training_examples_carry_their_texts_label(tokenizer):
    layer = LongTextPreprocessor(tokenizer, sequence_length=6, strategy="window_mean", stride=2)
    texts = ["hello world the cat sat cafe naive", "ok", "x abc b c d"]
    dataset, packed = long_text_dataset(layer, texts, labels=[2, 0, 1], batch_size=4)
    labels = np.concatenate([y.numpy() for _, y in dataset])
    assert labels.tolist() == np.array([2, 0, 1])[packed["text_index"]].tolist()
    first, _ = next(iter(dataset))
    assert first["token_ids"].shape[1] == int(first["padding_mask"].numpy().sum(1).max())
    # classification_dataset hands a LongTextPreprocessor to the window path, and refuses pairs.
    assert sum(
        1
        for _ in classification_dataset(
            layer, texts, labels=[2, 0, 1], training=True, batch_size=4
        ).unbatch()
    ) == len(packed["text_index"])
    with pytest.raises(ValueError, match="single texts"):
        classification_dataset(layer, texts, text_pairs=texts, labels=[2, 0, 1])
