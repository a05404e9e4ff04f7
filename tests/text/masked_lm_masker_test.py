"""Fast tests of MaskedLMMasker: pinned rates, statistics over many draws, tf.data and errors.

Statistical checks use a fixed seed (so they never flake) and a tolerance of 4 standard errors of
the estimate: wide enough that a correct implementation passes for almost any seed (a two-sided
4-sigma miss has probability 6e-5), narrow enough to catch a wrong rate.
"""

import keras
import numpy as np
import pytest
import tensorflow as tf

from kbert.text import InputPacker, MaskedLMMasker
from kbert.text.masked_lm_masker import unigram_probabilities_from_counts
from tests.text.text_test_case import TINY_VOCABULARY

PAD, UNK, CLS, SEP, MASK = 0, 1, 2, 3, 4
SPECIAL = [PAD, UNK, CLS, SEP]
VOCABULARY_SIZE = len(TINY_VOCABULARY)  # 58
ORDINARY = list(range(5, VOCABULARY_SIZE))  # every id that may be selected or drawn


def masker(**kwargs):
    arguments = {
        "vocabulary_size": VOCABULARY_SIZE,
        "mask_token_id": MASK,
        "special_token_ids": SPECIAL,
        "max_selections": 8,
        "seed": 0,
    }
    arguments.update(kwargs)
    return MaskedLMMasker(**arguments)


def small_batch():
    """Two packed rows by hand: [CLS] ... [SEP] [PAD]..., with an [UNK] inside the first."""
    token_ids = np.array(
        [
            [CLS, 5, 6, UNK, 7, SEP, 8, SEP, PAD, PAD],
            [CLS, 9, 10, 11, SEP, PAD, PAD, PAD, PAD, PAD],
        ],
        np.int32,
    )
    return token_ids, (token_ids != PAD).astype(np.int32)


def random_batch(rows, length, seed=0):
    """Rows of random ordinary ids between [CLS] and [SEP], each with some padding."""
    rng = np.random.default_rng(seed)
    token_ids = rng.integers(5, VOCABULARY_SIZE, size=(rows, length)).astype(np.int32)
    lengths = rng.integers(length // 2, length + 1, size=rows)
    for row, used in enumerate(lengths):
        token_ids[row, 0] = CLS
        token_ids[row, used - 1] = SEP
        token_ids[row, used:] = PAD
    return token_ids, (token_ids != PAD).astype(np.int32)


def numpy_outputs(outputs):
    return {key: value.numpy() for key, value in outputs.items()}


def selected_mask(outputs, shape):
    """Bool (batch, length): the positions the outputs list as selected."""
    selected = np.zeros(shape, bool)
    for row in range(shape[0]):
        used = outputs["mask_weights"][row] > 0
        selected[row, outputs["mask_positions"][row][used]] = True
    return selected


def packed_words(tokenizer):
    """Real packed pairs with multi-subword words and their word ids (tiny vocabulary)."""
    first = tokenizer.tokenize_with_alignment(
        ["unaffable hello angstrom the cat", "naive cat sat", "unaffable"]
    )
    second = tokenizer.tokenize_with_alignment(["ee hello aa world", "unaffable", "ee aa"])
    packer = InputPacker(sequence_length=24, start_token_id=CLS, end_token_id=SEP)
    return packer(
        (first["token_ids"], second["token_ids"]),
        alignments=({"word_ids": first["word_ids"]}, {"word_ids": second["word_ids"]}),
    )


# ---------------------------------------------------------------------------------- pinned rates


def test_everything_selected_and_masked_except_specials_and_padding():
    token_ids, padding_mask = small_batch()
    layer = masker(selection_rate=1.0, mask_token_rate=1.0, random_token_rate=0.0)
    outputs = numpy_outputs(layer(token_ids, padding_mask=padding_mask))
    assert outputs["token_ids"].tolist() == [
        [CLS, MASK, MASK, UNK, MASK, SEP, MASK, SEP, PAD, PAD],
        [CLS, MASK, MASK, MASK, SEP, PAD, PAD, PAD, PAD, PAD],
    ]
    assert outputs["mask_positions"].tolist() == [
        [1, 2, 4, 6, 0, 0, 0, 0],
        [1, 2, 3, 0, 0, 0, 0, 0],
    ]
    assert outputs["mask_ids"].tolist() == [[5, 6, 7, 8, 0, 0, 0, 0], [9, 10, 11, 0, 0, 0, 0, 0]]
    assert outputs["mask_weights"].tolist() == [[1.0] * 4 + [0.0] * 4, [1.0] * 3 + [0.0] * 5]
    assert outputs["mask_positions"].dtype == np.int32
    assert outputs["mask_ids"].dtype == np.int32
    assert outputs["mask_weights"].dtype == np.float32
    assert outputs["token_ids"].dtype == np.int32


def test_random_replacements_are_never_mask_nor_special():
    token_ids, padding_mask = random_batch(32, 16)
    layer = masker(
        selection_rate=1.0, mask_token_rate=0.0, random_token_rate=1.0, max_selections=16
    )
    for _ in range(3):
        outputs = numpy_outputs(layer(token_ids, padding_mask=padding_mask))
        selected = selected_mask(outputs, token_ids.shape)
        eligible = np.isin(token_ids, ORDINARY)
        assert (selected == eligible).all()
        assert (outputs["token_ids"][selected] >= 5).all()  # neither [MASK] nor a special id
        assert (outputs["token_ids"][~selected] == token_ids[~selected]).all()
        # Most replacements differ from the original (1 in 53 coincide).
        assert (outputs["token_ids"][selected] != token_ids[selected]).mean() > 0.9


def test_keep_rate_one_leaves_input_unchanged_and_records_positions():
    token_ids, padding_mask = small_batch()
    layer = masker(selection_rate=1.0, mask_token_rate=0.0, random_token_rate=0.0)
    outputs = numpy_outputs(layer(token_ids, padding_mask=padding_mask))
    assert (outputs["token_ids"] == token_ids).all()
    assert outputs["mask_positions"][0].tolist()[:4] == [1, 2, 4, 6]
    assert outputs["mask_ids"][1].tolist()[:3] == [9, 10, 11]


def test_selection_rate_zero_selects_nothing():
    token_ids, padding_mask = random_batch(8, 12)
    outputs = numpy_outputs(masker(selection_rate=0.0)(token_ids, padding_mask=padding_mask))
    assert (outputs["token_ids"] == token_ids).all()
    assert (outputs["mask_weights"] == 0).all()
    assert (outputs["mask_positions"] == 0).all() and (outputs["mask_ids"] == 0).all()


def test_padding_is_never_selected_whatever_its_id():
    # Padding that reuses an ordinary id (a packer with pad_token_id=7) is still padding.
    token_ids = np.array([[CLS, 5, SEP, 7, 7]], np.int32)
    padding_mask = np.array([[1, 1, 1, 0, 0]], np.int32)
    layer = masker(selection_rate=1.0, mask_token_rate=1.0, random_token_rate=0.0)
    outputs = numpy_outputs(layer(token_ids, padding_mask=padding_mask))
    assert outputs["token_ids"].tolist() == [[CLS, MASK, SEP, 7, 7]]


def test_max_selections_keeps_a_random_subset():
    token_ids = np.array([[CLS] + list(range(5, 15)) + [SEP]], np.int32)  # 10 eligible
    padding_mask = np.ones_like(token_ids)
    layer = masker(selection_rate=1.0, mask_token_rate=1.0, random_token_rate=0.0, max_selections=3)
    draws = 1500
    counts = np.zeros(token_ids.shape[1])
    for _ in range(draws // 100):
        batch = np.repeat(token_ids, 100, axis=0)
        outputs = numpy_outputs(layer(batch, padding_mask=np.repeat(padding_mask, 100, axis=0)))
        assert (outputs["mask_weights"] == 1).all()  # always exactly 3
        positions = outputs["mask_positions"]
        assert (np.diff(positions, axis=1) > 0).all()  # sorted, distinct
        counts += np.bincount(positions.ravel(), minlength=token_ids.shape[1])
    # Each eligible position is kept with probability 3/10; 4 standard errors of a proportion.
    share = counts[1:11] / draws
    tolerance = 4 * np.sqrt(0.3 * 0.7 / draws)
    assert np.abs(share - 0.3).max() < tolerance
    assert counts[0] == counts[11] == 0


# ---------------------------------------------------------------------------------- statistics


def test_selection_rate_and_the_80_10_10_split():
    token_ids, padding_mask = random_batch(128, 128, seed=1)
    layer = masker(max_selections=128, seed=1)
    eligible = np.isin(token_ids, ORDINARY)
    selected_total = eligible_total = masked = randomized = kept = 0
    for _ in range(5):
        outputs = numpy_outputs(layer(token_ids, padding_mask=padding_mask))
        selected = selected_mask(outputs, token_ids.shape)
        assert not (selected & ~eligible).any()
        new = outputs["token_ids"][selected]
        old = token_ids[selected]
        selected_total += selected.sum()
        eligible_total += eligible.sum()
        masked += (new == MASK).sum()
        randomized += ((new != MASK) & (new != old)).sum()
        kept += (new == old).sum()
    # A replacement drawn uniformly from the 53 ordinary ids equals the original with
    # probability 1/53, so "unchanged" is 0.1 + 0.1/53 and "changed at random" 0.1 * 52/53.
    expected = {"masked": 0.8, "randomized": 0.1 * 52 / 53, "kept": 0.1 + 0.1 / 53}
    measured = {"masked": masked, "randomized": randomized, "kept": kept}
    rate = selected_total / eligible_total
    assert abs(rate - 0.15) < 4 * np.sqrt(0.15 * 0.85 / eligible_total), rate
    for name, probability in expected.items():
        share = measured[name] / selected_total
        tolerance = 4 * np.sqrt(probability * (1 - probability) / selected_total)
        assert abs(share - probability) < tolerance, (name, share)


def test_random_replacements_follow_the_unigram_distribution():
    probabilities = np.zeros(VOCABULARY_SIZE)
    probabilities[[5, 6, 7, 8]] = [0.5, 0.25, 0.15, 0.1]
    probabilities[CLS] = 0.5  # a special id: its probability is ignored (set to 0)
    token_ids, padding_mask = random_batch(64, 32, seed=2)
    layer = masker(
        selection_rate=1.0,
        mask_token_rate=0.0,
        random_token_rate=1.0,
        max_selections=32,
        unigram_probabilities=probabilities.tolist(),
    )
    drawn = []
    for _ in range(3):
        outputs = numpy_outputs(layer(token_ids, padding_mask=padding_mask))
        drawn.append(outputs["token_ids"][selected_mask(outputs, token_ids.shape)])
    drawn = np.concatenate(drawn)
    frequencies = np.bincount(drawn, minlength=VOCABULARY_SIZE) / drawn.size
    expected = probabilities.copy()
    expected[CLS] = 0.0
    expected /= expected.sum()
    # Max absolute deviation over ids, each within 4 standard errors of its proportion; ids of
    # probability 0 (special or not) must never be drawn.
    tolerance = 4 * np.sqrt(expected * (1 - expected) / drawn.size)
    assert (np.abs(frequencies - expected) <= tolerance).all(), frequencies[:9]
    assert frequencies[expected == 0].sum() == 0


def test_whole_word_masking_never_splits_a_word(tokenizer):
    packed = packed_words(tokenizer)
    token_ids = np.tile(packed["token_ids"].numpy(), (40, 1))
    padding_mask = np.tile(packed["padding_mask"].numpy(), (40, 1))
    word_ids = np.tile(packed["word_ids"].numpy(), (40, 1))
    segment_ids = np.tile(packed["segment_ids"].numpy(), (40, 1))
    layer = masker(
        whole_word_masking=True, selection_rate=0.3, mask_token_rate=1.0, random_token_rate=0.0
    )
    eligible = np.isin(token_ids, ORDINARY)
    words_selected = words_total = 0
    for _ in range(5):
        outputs = layer(token_ids, padding_mask=padding_mask, word_ids=word_ids)
        selected = selected_mask(numpy_outputs(outputs), token_ids.shape)
        assert ((outputs["token_ids"].numpy() == MASK) == selected).all()
        for row in range(token_ids.shape[0]):
            # A word is (segment, word id); "unaffable" is un ##aff ##able.
            real = eligible[row]
            for segment, word in set(zip(segment_ids[row][real], word_ids[row][real], strict=True)):
                members = real & (segment_ids[row] == segment) & (word_ids[row] == word)
                assert selected[row][members].all() or not selected[row][members].any()
                words_selected += selected[row][members].all()
                words_total += 1
    # Words (not tokens) are selected at the rate; 4 standard errors of a proportion.
    share = words_selected / words_total
    assert abs(share - 0.3) < 4 * np.sqrt(0.3 * 0.7 / words_total), share


def test_whole_words_that_do_not_fit_are_dropped_whole():
    # One word of 3 subwords and 3 one-token words; max_selections=2 never fits the long word.
    token_ids = np.array([[CLS, 10, 11, 12, 5, 6, 7, SEP]] * 50, np.int32)
    word_ids = np.array([[-1, 0, 0, 0, 1, 2, 3, -1]] * 50, np.int32)
    layer = masker(
        whole_word_masking=True,
        selection_rate=1.0,
        mask_token_rate=1.0,
        random_token_rate=0.0,
        max_selections=2,
    )
    outputs = numpy_outputs(layer(token_ids, np.ones_like(token_ids), word_ids=word_ids))
    assert (outputs["mask_weights"] == 1).all()  # two one-token words, every time
    assert np.isin(outputs["mask_positions"], [4, 5, 6]).all()


# ---------------------------------------------------------------------------------- dynamic masking


def test_new_masks_on_every_call_and_every_epoch():
    token_ids, padding_mask = random_batch(4, 32)
    layer = masker(selection_rate=0.5, max_selections=32)
    first = layer(token_ids, padding_mask=padding_mask)["mask_positions"].numpy()
    second = layer(token_ids, padding_mask=padding_mask)["mask_positions"].numpy()
    assert not np.array_equal(first, second)

    dataset = tf.data.Dataset.from_tensor_slices((token_ids, padding_mask)).batch(2)
    dataset = dataset.map(lambda ids, mask: layer(ids, padding_mask=mask))
    epochs = [
        np.concatenate([batch["mask_positions"].numpy() for batch in dataset]) for _ in range(2)
    ]
    assert not np.array_equal(epochs[0], epochs[1])


def test_seed_makes_draws_reproducible():
    token_ids, padding_mask = random_batch(4, 32)
    outputs = [
        numpy_outputs(masker(seed=7, max_selections=32)(token_ids, padding_mask=padding_mask))
        for _ in range(2)
    ]
    for key in outputs[0]:
        assert np.array_equal(outputs[0][key], outputs[1][key])


def test_tf_function_tf_data_and_unbatched_inputs():
    token_ids, padding_mask = random_batch(6, 12)
    layer = masker(
        selection_rate=1.0, mask_token_rate=1.0, random_token_rate=0.0, max_selections=12
    )
    expected = numpy_outputs(layer(token_ids, padding_mask=padding_mask))

    traced = tf.function(lambda ids, mask: layer(ids, padding_mask=mask))
    assert np.array_equal(
        traced(token_ids, padding_mask)["token_ids"].numpy(), expected["token_ids"]
    )

    # Unbatched rows in a map, then batched: the same as masking the batch.
    dataset = tf.data.Dataset.from_tensor_slices((token_ids, padding_mask))
    dataset = dataset.map(lambda ids, mask: layer(ids, padding_mask=mask)).batch(6)
    # Static sizes, so batches stack and XLA sees fixed shapes.
    assert dataset.element_spec["mask_positions"].shape.as_list() == [None, 12]
    assert dataset.element_spec["token_ids"].shape.as_list() == [None, 12]
    mapped = numpy_outputs(next(iter(dataset)))
    for key in expected:
        assert np.array_equal(mapped[key], expected[key]), key


def test_symbolic_call_gives_output_specs():
    layer = masker()
    outputs = layer(
        keras.Input(shape=(10,), dtype="int32"),
        padding_mask=keras.Input(shape=(10,), dtype="int32"),
    )
    assert outputs["token_ids"].shape == (None, 10)
    assert outputs["mask_positions"].shape == (None, 8)
    assert outputs["mask_weights"].dtype == "float32"


def test_config_round_trip():
    probabilities = np.linspace(0.0, 1.0, VOCABULARY_SIZE).tolist()
    layer = masker(unigram_probabilities=probabilities, whole_word_masking=True, seed=3)
    assert layer.weights == [] and not layer.trainable
    config = layer.get_config()
    rebuilt = MaskedLMMasker.from_config(config)
    assert rebuilt.get_config() == config
    restored = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(layer))
    assert type(restored) is MaskedLMMasker and restored.get_config() == config
    # The same seed gives the same draws.
    token_ids, padding_mask = random_batch(4, 16)
    word_ids = np.where(np.isin(token_ids, ORDINARY), np.arange(16) // 2, -1)
    first = layer(token_ids, padding_mask=padding_mask, word_ids=word_ids)
    second = rebuilt(token_ids, padding_mask=padding_mask, word_ids=word_ids)
    assert np.array_equal(first["token_ids"].numpy(), second["token_ids"].numpy())


# ---------------------------------------------------------------------------------- unigram counts


def test_unigram_probabilities_from_datasets_and_counts():
    dense = tf.data.Dataset.from_tensor_slices(
        [[CLS, 5, 5, 6, SEP, PAD], [CLS, 7, 5, SEP, PAD, PAD]]
    )
    probabilities = unigram_probabilities_from_counts(dense.batch(2), 8, SPECIAL)
    assert probabilities.round(3).tolist() == [0, 0, 0, 0, 0, 0.6, 0.2, 0.2]
    ragged = tf.data.Dataset.from_tensors(tf.ragged.constant([[5, 5], [5, 6, 7]]))
    assert unigram_probabilities_from_counts(ragged, 8).round(3).tolist()[5:] == [0.6, 0.2, 0.2]
    dicts = dense.map(lambda ids: {"token_ids": ids, "padding_mask": tf.ones_like(ids)})
    assert np.allclose(unigram_probabilities_from_counts(dicts, 8, SPECIAL), probabilities)
    counts = [10, 0, 0, 0, 0, 3, 1, 0]
    assert unigram_probabilities_from_counts(counts, 8, [0]).tolist()[5:7] == [0.75, 0.25]
    # The estimate plugs straight into the layer.
    masker(vocabulary_size=8, max_selections=2, unigram_probabilities=probabilities)


def test_unigram_probability_errors():
    with pytest.raises(ValueError, match="outside"):
        unigram_probabilities_from_counts(tf.data.Dataset.from_tensors([5, 9]), 8)
    with pytest.raises(ValueError, match="length vocabulary_size=8"):
        unigram_probabilities_from_counts([1, 2, 3], 8)
    with pytest.raises(ValueError, match="non-negative"):
        unigram_probabilities_from_counts([1, -1, 0, 0, 0, 0, 0, 0], 8)
    with pytest.raises(ValueError, match="no non-special token"):
        unigram_probabilities_from_counts([1, 0, 0, 0, 0, 0, 0, 0], 8, [0])
    with pytest.raises(ValueError, match="integer token-id tensors"):
        unigram_probabilities_from_counts(tf.data.Dataset.from_tensors([0.5]), 8)
    with pytest.raises(ValueError, match="'token_ids'"):
        unigram_probabilities_from_counts(tf.data.Dataset.from_tensors({"ids": [5]}), 8)


# ---------------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"mask_token_id": VOCABULARY_SIZE}, r"mask_token_id must be an int in \[0, 57\]"),
        ({"mask_token_id": -1}, "mask_token_id"),
        ({"vocabulary_size": 0}, "vocabulary_size must be an int >= 1"),
        ({"special_token_ids": [0, 99]}, "every special token id"),
        ({"special_token_ids": "[CLS]"}, "special_token_ids must be a list of ints"),
        ({"selection_rate": 1.5}, r"selection_rate must be a number in \[0, 1\]"),
        ({"mask_token_rate": -0.1}, "mask_token_rate"),
        ({"random_token_rate": 2}, "random_token_rate"),
        ({"mask_token_rate": 0.8, "random_token_rate": 0.3}, "at most 1"),
        ({"max_selections": 0}, "max_selections must be an int >= 1"),
        ({"max_selections": 2.5}, "max_selections"),
        ({"unigram_probabilities": [1.0] * 3}, "length vocabulary_size=58"),
        ({"unigram_probabilities": [-1.0] * VOCABULARY_SIZE}, "non-negative"),
        ({"unigram_probabilities": [1.0] * 5 + [0.0] * 53}, "no id may be drawn"),
        ({"whole_word_masking": "yes"}, "whole_word_masking must be a bool"),
        ({"seed": 1.5}, "seed must be an int or None"),
    ],
)
def test_argument_errors(arguments, message):
    with pytest.raises(ValueError, match=message):
        masker(**arguments)


def test_call_errors():
    token_ids, padding_mask = small_batch()
    with pytest.raises(ValueError, match="whole_word_masking=True needs word_ids"):
        masker(whole_word_masking=True)(token_ids, padding_mask=padding_mask)
    with pytest.raises(ValueError, match="padding_mask is required"):
        masker()(token_ids)
    with pytest.raises(ValueError, match="padding_mask must have the shape of token_ids"):
        masker()(token_ids, padding_mask=padding_mask[:, :5])
    with pytest.raises(ValueError, match="word_ids must have the shape"):
        masker(whole_word_masking=True)(token_ids, padding_mask, word_ids=padding_mask[:1])
    with pytest.raises(ValueError, match="token_ids must hold integers"):
        masker()(token_ids.astype(np.float32), padding_mask=padding_mask)
    with pytest.raises(ValueError, match="dense"):
        masker()(tf.ragged.constant([[2, 5, 3]]), padding_mask=padding_mask)
    with pytest.raises(ValueError, match="2-D"):
        masker()(token_ids[None], padding_mask=padding_mask[None])
