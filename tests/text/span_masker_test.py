"""Fast tests of SpanMasker: pinned rates, span structure, statistics over many draws, tf.data.

Statistical checks use a fixed seed (so they never flake) and a tolerance of 4 standard errors of
the estimate, as in `masked_lm_masker_test.py`.
"""

import keras
import numpy as np
import pytest
import tensorflow as tf

from kbert.text import InputPacker, SpanMasker
from kbert.text.span_masker import span_length_probabilities
from tests.text.text_test_case import TINY_VOCABULARY

PAD, UNK, CLS, SEP, MASK = 0, 1, 2, 3, 4
SPECIAL = [PAD, UNK, CLS, SEP]
VOCABULARY_SIZE = len(TINY_VOCABULARY)
ORDINARY = list(range(5, VOCABULARY_SIZE))
# SpanBERT's distribution: Geo(0.2) restricted to 1..10 words and renormalized (mean 3.80).
LENGTH_PROBABILITIES = span_length_probabilities(0.2, 10)
MEAN_LENGTH = float((np.arange(1, 11) * LENGTH_PROBABILITIES).sum())


def masker(**kwargs):
    arguments = {
        "vocabulary_size": VOCABULARY_SIZE,
        "mask_token_id": MASK,
        "special_token_ids": SPECIAL,
        "max_selections": 24,
        "seed": 0,
    }
    arguments.update(kwargs)
    return SpanMasker(**arguments)


def word_rows(rows, length, seed=0):
    """Random rows [CLS] words [SEP] [PAD]... whose words have 1 to 3 subwords.

    Returns token_ids, padding_mask and word_ids (-1 at special and padding positions).
    """
    rng = np.random.default_rng(seed)
    token_ids = rng.integers(5, VOCABULARY_SIZE, size=(rows, length)).astype(np.int32)
    word_ids = np.full((rows, length), -1, np.int32)
    for row in range(rows):
        used = rng.integers(length * 3 // 4, length + 1)
        sizes = rng.integers(1, 4, size=length)
        word_of_token = np.repeat(np.arange(length), sizes)[: used - 2]
        word_ids[row, 1 : used - 1] = word_of_token
        token_ids[row, 0] = CLS
        token_ids[row, used - 1] = SEP
        token_ids[row, used:] = PAD
    return token_ids, (token_ids != PAD).astype(np.int32), word_ids


def numpy_outputs(outputs):
    return {key: value.numpy() for key, value in outputs.items()}


def spans_of(outputs, row):
    """The spans (s, e, positions) listed in one row of the outputs."""
    used = outputs["mask_weights"][row] > 0
    left = outputs["mask_left_boundary"][row][used]
    right = outputs["mask_right_boundary"][row][used]
    positions = outputs["mask_positions"][row][used]
    spans = {}
    for s_minus_1, e_plus_1, position in zip(left, right, positions, strict=True):
        spans.setdefault((s_minus_1 + 1, e_plus_1 - 1), []).append(position)
    return spans


def word_count(word_ids, start, end):
    return len(set(word_ids[start : end + 1].tolist()))


# ---------------------------------------------------------------------------------- pinned rates


def test_selection_rate_zero_selects_nothing():
    token_ids, padding_mask, word_ids = word_rows(8, 20)
    outputs = numpy_outputs(masker(selection_rate=0.0)(token_ids, padding_mask, word_ids=word_ids))
    assert (outputs["token_ids"] == token_ids).all()
    for key in outputs:
        if key != "token_ids":
            assert (outputs[key] == 0).all(), key


def test_pinned_treatments():
    token_ids, padding_mask, word_ids = word_rows(16, 32)
    eligible = np.isin(token_ids, ORDINARY)
    for rates, check in [
        ((1.0, 0.0), lambda new, old: (new == MASK).all()),
        ((0.0, 1.0), lambda new, old: (new >= 5).all()),  # neither [MASK] nor special
        ((0.0, 0.0), lambda new, old: (new == old).all()),
    ]:
        layer = masker(mask_token_rate=rates[0], random_token_rate=rates[1], selection_rate=0.3)
        outputs = numpy_outputs(layer(token_ids, padding_mask, word_ids=word_ids))
        selected = np.zeros(token_ids.shape, bool)
        for row in range(token_ids.shape[0]):
            used = outputs["mask_weights"][row] > 0
            selected[row, outputs["mask_positions"][row][used]] = True
        assert selected.sum() > 0 and not (selected & ~eligible).any()
        assert check(outputs["token_ids"][selected], token_ids[selected]), rates
        assert (outputs["token_ids"][~selected] == token_ids[~selected]).all()
        # Ids recorded are the originals, whatever happened to the input.
        used = outputs["mask_weights"] > 0
        originals = np.take_along_axis(token_ids, outputs["mask_positions"], axis=1)
        assert (outputs["mask_ids"][used] == originals[used]).all()


def test_one_word_row_gives_exact_outputs():
    layer = masker(selection_rate=1.0, mask_token_rate=1.0, random_token_rate=0.0, max_selections=3)
    outputs = numpy_outputs(
        layer(
            np.array([[CLS, 10, 11, SEP, PAD]]),
            np.array([[1, 1, 1, 1, 0]]),
            word_ids=np.array([[-1, 0, 0, -1, -1]]),
        )
    )
    assert {key: value.tolist() for key, value in outputs.items()} == {
        "token_ids": [[CLS, MASK, MASK, SEP, PAD]],
        "mask_positions": [[1, 2, 0]],
        "mask_ids": [[10, 11, 0]],
        "mask_weights": [[1.0, 1.0, 0.0]],
        "mask_left_boundary": [[0, 0, 0]],  # [CLS]
        "mask_right_boundary": [[3, 3, 0]],  # [SEP]
        "mask_relative_positions": [[1, 2, 0]],
    }


# ---------------------------------------------------------------------------------- structure


def test_spans_are_whole_words_apart_and_inside_segments(tokenizer):
    # Real packed pairs: multi-subword words and two segments.
    first = tokenizer.tokenize_with_alignment(
        ["unaffable hello angstrom the cat sat", "naive cat sat unaffable ee"]
    )
    second = tokenizer.tokenize_with_alignment(["ee hello aa world the cat", "unaffable aa"])
    packed = InputPacker(sequence_length=32, start_token_id=CLS, end_token_id=SEP)(
        (first["token_ids"], second["token_ids"]),
        alignments=({"word_ids": first["word_ids"]}, {"word_ids": second["word_ids"]}),
    )
    token_ids = np.tile(packed["token_ids"].numpy(), (30, 1))
    padding_mask = np.tile(packed["padding_mask"].numpy(), (30, 1))
    word_ids = np.tile(packed["word_ids"].numpy(), (30, 1))
    segment_ids = np.tile(packed["segment_ids"].numpy(), (30, 1))
    layer = masker(selection_rate=0.3, max_span_length=3, mask_token_rate=0.5)
    spans_seen = 0
    for _ in range(4):
        outputs = numpy_outputs(layer(token_ids, padding_mask, word_ids=word_ids))
        for row in range(token_ids.shape[0]):
            selected = np.zeros(token_ids.shape[1], bool)
            for (start, end), positions in spans_of(outputs, row).items():
                spans_seen += 1
                assert positions == list(range(start, end + 1))  # contiguous
                assert np.isin(token_ids[row, start : end + 1], ORDINARY).all()  # no [SEP] inside
                assert len(set(segment_ids[row, start : end + 1])) == 1
                # Whole words: the tokens around the span belong to other words.
                words = word_ids[row]
                assert words[start - 1] != words[start]
                assert words[end + 1] != words[end]
                assert 1 <= word_count(words, start, end) <= 3
                # One treatment per span: all [MASK] or none.
                new = outputs["token_ids"][row, start : end + 1]
                assert (new == MASK).all() or not (new == MASK).any()
                selected[start : end + 1] = True
            # Never overlapping nor touching: every boundary token is unselected.
            used = outputs["mask_weights"][row] > 0
            assert not selected[outputs["mask_left_boundary"][row][used]].any()
            assert not selected[outputs["mask_right_boundary"][row][used]].any()
            relative = outputs["mask_relative_positions"][row][used]
            left = outputs["mask_left_boundary"][row][used]
            assert (relative == outputs["mask_positions"][row][used] - left).all()
    assert spans_seen > 100


def test_max_selections_is_never_exceeded():
    token_ids, padding_mask, word_ids = word_rows(32, 64)
    outputs = numpy_outputs(
        masker(max_selections=5, selection_rate=0.5)(token_ids, padding_mask, word_ids=word_ids)
    )
    assert (outputs["mask_weights"].sum(axis=1) <= 5).all()
    assert outputs["mask_weights"].sum() > 32  # but spans are still found


# ---------------------------------------------------------------------------------- statistics


def test_span_length_sampler_is_the_clipped_geometric():
    lengths = masker().sample_span_lengths(20000).numpy()
    assert lengths.min() >= 1 and lengths.max() <= 10
    # Mean within 4 standard errors; P(1), P(2) and P(10) within 4 standard errors each.
    assert abs(lengths.mean() - MEAN_LENGTH) < 4 * lengths.std() / np.sqrt(lengths.size)
    for length in (1, 2, 10):
        probability = LENGTH_PROBABILITIES[length - 1]
        share = (lengths == length).mean()
        assert abs(share - probability) < 4 * np.sqrt(probability * (1 - probability) / 20000)


def test_realized_span_lengths_coverage_and_per_span_treatment():
    # Long rows (about 1300 tokens of 1-3 subword words, ~28 spans each): lengths in words.
    token_ids, padding_mask, word_ids = word_rows(16, 1536, seed=3)
    layer = masker(max_selections=400, seed=3)
    eligible = np.isin(token_ids, ORDINARY)
    lengths, treatments = [], {"masked": 0, "random": 0, "kept": 0}
    row_coverage = []
    for _ in range(8):
        outputs = numpy_outputs(layer(token_ids, padding_mask, word_ids=word_ids))
        row_coverage.extend(outputs["mask_weights"].sum(axis=1) / eligible.sum(axis=1))
        for row in range(token_ids.shape[0]):
            for (start, end), _ in spans_of(outputs, row).items():
                lengths.append(word_count(word_ids[row], start, end))
                new = outputs["token_ids"][row, start : end + 1]
                old = token_ids[row, start : end + 1]
                if (new == MASK).all():
                    treatments["masked"] += 1
                elif (new == old).all():
                    treatments["kept"] += 1
                else:
                    assert not (new == MASK).any()  # a span is never partly masked
                    treatments["random"] += 1
    lengths = np.array(lengths)
    count = lengths.size
    # Span lengths in words, 4 standard errors on the mean and on P(1), P(2), P(10). Only a
    # row's last span is conditioned by the budget rule (long ones fit less often); with ~28
    # spans per row that bias is below one standard error (measured mean 3.83 here; rows of ~14
    # spans give 3.75, 128-token rows 3.63, against 3.80).
    assert abs(lengths.mean() - MEAN_LENGTH) < 4 * lengths.std() / np.sqrt(count), lengths.mean()
    for length in (1, 2, 10):
        probability = LENGTH_PROBABILITIES[length - 1]
        share = (lengths == length).mean()
        assert abs(share - probability) < 4 * np.sqrt(probability * (1 - probability) / count)
    # Coverage per row is the budget give or take half a span, zero on average: 4 standard errors
    # of the mean over rows and draws.
    row_coverage = np.array(row_coverage)
    share = row_coverage.mean()
    assert abs(share - 0.15) < 4 * row_coverage.std() / np.sqrt(row_coverage.size), share
    # 80/10/10 per span, 4 standard errors (+0.002: a random span that happens to equal the
    # original, 1 in 53 per token and mostly one-token spans, is counted as kept).
    for name, probability in {"masked": 0.8, "random": 0.1, "kept": 0.1}.items():
        share = treatments[name] / count
        tolerance = 4 * np.sqrt(probability * (1 - probability) / count) + 0.002
        assert abs(share - probability) < tolerance, (name, share)


def test_short_rows_still_get_one_span():
    # 4 eligible tokens: budget 0.6 tokens; the first span is always added.
    token_ids = np.array([[CLS, 5, 6, 7, 8, SEP]] * 50)
    outputs = numpy_outputs(masker(whole_words=False)(token_ids, np.ones_like(token_ids)))
    assert (outputs["mask_weights"].sum(axis=1) >= 1).all()


# ---------------------------------------------------------------------------------- dynamic masking


def test_new_spans_on_every_call_and_every_epoch():
    token_ids, padding_mask, word_ids = word_rows(4, 48)
    layer = masker(selection_rate=0.3)
    first = layer(token_ids, padding_mask, word_ids=word_ids)["mask_positions"].numpy()
    second = layer(token_ids, padding_mask, word_ids=word_ids)["mask_positions"].numpy()
    assert not np.array_equal(first, second)

    dataset = tf.data.Dataset.from_tensor_slices(
        {"token_ids": token_ids, "padding_mask": padding_mask, "word_ids": word_ids}
    ).batch(2)
    dataset = dataset.map(
        lambda x: layer(x["token_ids"], x["padding_mask"], word_ids=x["word_ids"])
    )
    epochs = [
        np.concatenate([batch["mask_positions"].numpy() for batch in dataset]) for _ in range(2)
    ]
    assert not np.array_equal(epochs[0], epochs[1])


def test_tf_function_tf_data_unbatched_and_token_spans():
    token_ids, padding_mask, word_ids = word_rows(4, 16)
    # Same seed: the traced layer draws what the eager one drew.
    traced = masker(seed=5)
    outputs = [
        masker(seed=5)(token_ids, padding_mask, word_ids=word_ids),
        tf.function(lambda a, b, c: traced(a, b, word_ids=c))(token_ids, padding_mask, word_ids),
    ]
    layer = masker(seed=5)
    dataset = tf.data.Dataset.from_tensor_slices((token_ids, padding_mask, word_ids))
    # Unbatched rows: one row at a time draws in another order, so only check shapes here.
    dataset = dataset.map(lambda a, b, c: layer(a, b, word_ids=c))
    assert dataset.element_spec["mask_left_boundary"].shape.as_list() == [24]
    row = next(iter(dataset))
    assert row["mask_positions"].shape == (24,) and row["token_ids"].shape == (16,)
    for key in outputs[0]:
        assert np.array_equal(outputs[0][key].numpy(), outputs[1][key].numpy()), key
    # Without word ids, spans count tokens.
    token_spans = masker(whole_words=False)(token_ids, padding_mask)
    assert token_spans["mask_weights"].shape == (4, 24)


def test_symbolic_call_gives_output_specs():
    inputs = [keras.Input(shape=(12,), dtype="int32") for _ in range(3)]
    outputs = masker()(inputs[0], inputs[1], word_ids=inputs[2])
    assert outputs["token_ids"].shape == (None, 12)
    assert outputs["mask_relative_positions"].shape == (None, 24)
    assert outputs["mask_weights"].dtype == "float32"


def test_config_round_trip():
    layer = masker(
        geometric_probability=0.3,
        max_span_length=5,
        unigram_probabilities=[1.0] * VOCABULARY_SIZE,
        whole_words=False,
        seed=4,
    )
    assert layer.weights == [] and not layer.trainable
    config = layer.get_config()
    rebuilt = SpanMasker.from_config(config)
    assert rebuilt.get_config() == config
    restored = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(layer))
    assert type(restored) is SpanMasker and restored.get_config() == config
    token_ids, padding_mask, _ = word_rows(4, 24)
    first = layer(token_ids, padding_mask)
    second = rebuilt(token_ids, padding_mask)
    assert np.array_equal(first["mask_positions"].numpy(), second["mask_positions"].numpy())


# ---------------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"mask_token_id": VOCABULARY_SIZE}, r"mask_token_id must be an int in \[0, 57\]"),
        ({"special_token_ids": [0, -1]}, "every special token id"),
        ({"selection_rate": -0.5}, r"selection_rate must be a number in \[0, 1\]"),
        ({"mask_token_rate": 0.9, "random_token_rate": 0.2}, "at most 1"),
        ({"max_selections": 0}, "max_selections must be an int >= 1"),
        ({"geometric_probability": 0.0}, r"geometric_probability must be a number in \(0, 1\]"),
        ({"max_span_length": 0}, "max_span_length must be an int >= 1"),
        ({"unigram_probabilities": [1.0] * 4}, "length vocabulary_size=58"),
        ({"whole_words": 1}, "whole_words must be a bool"),
        ({"seed": "1"}, "seed must be an int or None"),
    ],
)
def test_argument_errors(arguments, message):
    with pytest.raises(ValueError, match=message):
        masker(**arguments)


def test_call_errors():
    token_ids, padding_mask, word_ids = word_rows(2, 10)
    with pytest.raises(ValueError, match="whole_words=True needs word_ids"):
        masker()(token_ids, padding_mask)
    with pytest.raises(ValueError, match="padding_mask is required"):
        masker()(token_ids, word_ids=word_ids)
    with pytest.raises(ValueError, match="word_ids must have the shape of token_ids"):
        masker()(token_ids, padding_mask, word_ids=word_ids[:, :4])
