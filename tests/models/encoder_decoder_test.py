"""`EncoderDecoder` (T5-style) on tiny shapes: causality, masking, a copy task, saving, decoding."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from kbert.models.encoder_decoder import EncoderDecoder, T5Attention
from tests.layer_test_case import run_layer_test
from tests.model_test_case import run_model_test


def _inputs(source, target):
    return {
        "encoder_token_ids": source,
        "encoder_padding_mask": (source != 0).astype("int32"),
        "decoder_token_ids": target,
        "decoder_padding_mask": np.ones_like(target),
    }


def _model(**changes):
    keras.utils.set_random_seed(0)
    return EncoderDecoder.from_preset("tiny", dropout=0.0, **changes)


def test_the_decoder_is_causal_and_padding_is_ignored():
    model = _model()
    rng = np.random.default_rng(0)
    source = rng.integers(1, 100, (2, 6)).astype("int32")
    target = rng.integers(1, 100, (2, 5)).astype("int32")
    logits = np.asarray(model(_inputs(source, target)))
    changed = target.copy()
    changed[:, 3:] = 7  # later decoder tokens cannot change earlier positions
    np.testing.assert_allclose(
        np.asarray(model(_inputs(source, changed)))[:, :3], logits[:, :3], atol=1e-5
    )
    padded = np.concatenate([source, np.zeros((2, 3), "int32")], axis=1)  # padded source
    np.testing.assert_allclose(np.asarray(model(_inputs(padded, target))), logits, atol=1e-5)


def test_it_learns_to_copy_and_generates_the_copy(tmp_path):
    model = _model()
    rng = np.random.default_rng(1)
    source = rng.integers(3, 20, (256, 5)).astype("int32")
    decoder_in = np.concatenate([np.zeros((256, 1), "int32"), source[:, :-1]], axis=1)
    model.compile(optimizer=keras.optimizers.Adam(3e-3))
    history = model.fit(_inputs(source, decoder_in), source, batch_size=32, epochs=60, verbose=0)
    assert history.history["token_accuracy"][-1] > 0.95
    # Free-running decoding compounds its errors: most, not all, copies come out exact.
    generated = model.generate(source[:16], max_new_tokens=5)
    assert np.mean(generated[:, 1:] == source[:16]) > 0.9
    model.save(tmp_path / "t5.keras")
    again = keras.saving.load_model(tmp_path / "t5.keras")
    np.testing.assert_allclose(
        np.asarray(again(_inputs(source[:4], decoder_in[:4]))),
        np.asarray(model(_inputs(source[:4], decoder_in[:4]))),
        atol=1e-5,
    )


def test_greedy_generation_equals_the_argmax_of_a_full_pass():
    model = _model()
    source = np.array([[5, 9, 11, 2]], "int32")
    generated = model.generate(source, max_new_tokens=4)
    logits = np.asarray(model(_inputs(source, generated[:, :-1])))
    np.testing.assert_array_equal(logits.argmax(-1), generated[:, 1:])


def test_tied_and_untied_outputs_and_bad_arguments():
    tied, untied = _model(), _model(tie_embeddings=False)
    x = _inputs(np.ones((1, 3), "int32"), np.ones((1, 2), "int32"))
    tied(x), untied(x)
    assert untied.count_params() - tied.count_params() == 32 * 100  # the output matrix
    with pytest.raises(ValueError, match="preset must be one of"):
        EncoderDecoder.from_preset("t5_huge")
    with pytest.raises(ValueError, match="num_heads must be an integer >= 1"):
        EncoderDecoder.from_preset("tiny", num_heads=0)
    with pytest.raises(ValueError, match=r"inputs lack \['decoder_padding_mask'\]"):
        tied({key: value for key, value in x.items() if key != "decoder_padding_mask"})


def _log_probability(model, source, sequence):
    """Total log probability of `sequence[1:]` given `source`, by one full pass."""
    logits = np.asarray(model(_inputs(source, sequence[None, :-1])), np.float64)[0]
    log_probs = (
        logits
        - np.log(np.exp(logits - logits.max(-1, keepdims=True)).sum(-1, keepdims=True))
        - logits.max(-1, keepdims=True)
    )
    return sum(log_probs[t, token] for t, token in enumerate(sequence[1:]))


def test_cached_decoding_equals_full_recomputation():
    model = _model()
    rng = np.random.default_rng(2)
    source = rng.integers(1, 100, (3, 7)).astype("int32")
    source[0, 5:] = 0  # a padded source
    np.testing.assert_array_equal(
        model.generate(source, max_new_tokens=6), model.generate_by_recomputation(source, 6)
    )
    # And the logits themselves, step by step, against one full teacher-forced pass.
    target = rng.integers(1, 100, (3, 5)).astype("int32")
    full = np.asarray(model(_inputs(source, target)))
    state = model.start_state(source)
    for position in range(5):
        logits, state = model.decode_step(target[:, position], state)
        np.testing.assert_allclose(np.asarray(logits), full[:, position], atol=1e-4)


def test_beam_search_with_enough_beams_finds_the_most_probable_sequence():
    model = _model(vocabulary_size=5)
    source = np.array([[1, 2, 3, 4]], "int32")
    found = model.generate(source, 3, strategy="beam", num_beams=25, length_penalty=0.0)[0]
    import itertools

    candidates = [np.array([0, *tail], "int32") for tail in itertools.product(range(5), repeat=3)]
    scores = [_log_probability(model, source, c) for c in candidates]
    np.testing.assert_array_equal(found, candidates[int(np.argmax(scores))])
    # One beam is greedy search.
    np.testing.assert_array_equal(
        model.generate(source, 3, strategy="beam", num_beams=1), model.generate(source, 3)
    )


def test_sampling_is_seeded_and_top_1_is_greedy():
    model = _model()
    source = np.array([[5, 9, 11, 2], [7, 7, 3, 1]], "int32")
    first = model.generate(source, 5, strategy="top_p", top_p=0.9, seed=3)
    np.testing.assert_array_equal(
        first, model.generate(source, 5, strategy="top_p", top_p=0.9, seed=3)
    )
    np.testing.assert_array_equal(
        model.generate(source, 5, strategy="top_k", top_k=1), model.generate(source, 5)
    )
    with pytest.raises(ValueError, match="strategy must be greedy, beam, top_k or top_p"):
        model.generate(source, 2, strategy="sample")
    with pytest.raises(ValueError, match="max_new_tokens must be an integer >= 1"):
        model.generate(source, 0)


def test_decoding_traced_with_unknown_shapes_equals_eager_decoding():
    """Greedy and beam search are tensor code: traced with unknown batch and source length (as
    an exported signature runs them) they give the eager ids; empty batches pass through."""
    model = _model()
    source = np.array([[5, 9, 11, 2, 0], [7, 7, 3, 0, 0], [4, 0, 0, 0, 0]], "int32")
    spec = [tf.TensorSpec([None, None], tf.int32)]
    beam = tf.function(
        lambda ids: model.beam_search(ids, 4, 3, 0.7, end_id=2), input_signature=spec
    )
    greedy = tf.function(lambda ids: model.greedy_search(ids, 4, end_id=2), input_signature=spec)
    np.testing.assert_array_equal(
        beam(source), model.generate(source, 4, "beam", end_id=2, num_beams=3, length_penalty=0.7)
    )
    np.testing.assert_array_equal(greedy(source), model.generate(source, 4, end_id=2))
    np.testing.assert_array_equal(
        model.generate(source, 4, end_id=2), model.generate_by_recomputation(source, 4, end_id=2)
    )
    assert tuple(beam(np.zeros((0, 3), "int32")).shape) == (0, 5)
    assert tuple(greedy(np.zeros((0, 3), "int32")).shape) == (0, 5)


def test_beam_search_keeps_finished_hypotheses_ended():
    model = _model(vocabulary_size=6)
    source = np.array([[1, 2, 3], [4, 5, 1]], "int32")
    for end_id in range(6):
        out = model.generate(source, 6, "beam", end_id=end_id, num_beams=3)
        for row in out[:, 1:]:
            ended = np.flatnonzero(row == end_id)
            if len(ended):
                assert np.all(row[ended[0] :] == end_id)
    with pytest.raises(ValueError, match="end_id must be None or a token id in \\[0, 6\\)"):
        model.generate(source, 2, "beam", end_id=6)
    with pytest.raises(ValueError, match="num_beams must be an integer >= 1"):
        model.beam_search(source, 2, num_beams=0)
    with pytest.raises(ValueError, match="length_penalty must be a number >= 0"):
        model.beam_search(source, 2, length_penalty=-1)


@pytest.mark.parametrize("tie_embeddings", [True, False])
def test_model_contract(tie_embeddings):
    model = _model(tie_embeddings=tie_embeddings)
    rng = np.random.default_rng(3)
    source = rng.integers(3, 100, (2, 6)).astype("int32")
    source[0, 4:] = 0  # a padded source
    target = rng.integers(3, 100, (2, 5)).astype("int32")
    decoder_in = np.concatenate([np.zeros((2, 1), "int32"), target[:, :-1]], axis=1)
    x = _inputs(source, decoder_in)
    model(x)  # builds the weights
    run_model_test(model, x, target)


def test_t5_attention_layer_end_to_end():
    """The shared layer check: config round trip, calls, a fit step moving every weight, .keras."""
    rng = np.random.default_rng(0)
    run_layer_test(
        T5Attention,
        {"num_heads": 2, "hidden_dim": 8, "dropout": 0.0},
        rng.normal(size=(2, 3, 8)).astype("float32"),
        call_kwargs={"context": rng.normal(size=(2, 5, 8)).astype("float32")},
        expected_output_shape=(2, 3, 8),
        expected_num_trainable_weights=4,
    )
