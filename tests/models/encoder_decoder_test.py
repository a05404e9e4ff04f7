"""`EncoderDecoder` (T5-style) on tiny shapes: causality, masking, a copy task, saving, decoding."""

import keras
import numpy as np
import pytest

from kbert.models.encoder_decoder import EncoderDecoder


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
