"""`DialogModel` (TransferTransfo's two heads) and `add_segment_embeddings` on tiny encoders."""

import keras
import numpy as np
import pytest
from keras import ops

from kbert.models import DialogModel, Encoder, add_segment_embeddings
from tests.model_test_case import run_model_test

VOCABULARY, SEQ, CANDIDATES = 50, 8, 2


def _encoder(**changes):
    keras.utils.set_random_seed(0)
    return Encoder.from_preset(
        "tiny", causal=True, num_segments=0, vocabulary_size=VOCABULARY, **changes
    )


def _batch(size, seed=0):
    """Gold candidates end in token 7, distractors in token 9: learnable from the last token."""
    rng = np.random.default_rng(seed)
    token_ids = rng.integers(10, VOCABULARY, (size, CANDIDATES, SEQ)).astype("int32")
    choice = rng.integers(0, CANDIDATES, size).astype("int32")
    labels = np.full((size, CANDIDATES, SEQ), -100, "int32")
    for row, gold in enumerate(choice):
        token_ids[row, :, -1] = 9
        token_ids[row, gold, -1] = 7
        labels[row, gold, SEQ - 3 :] = token_ids[row, gold, SEQ - 3 :]  # the "reply"
    x = {
        "token_ids": token_ids,
        "segment_ids": (np.arange(SEQ) >= SEQ - 3)
        .astype("int32")[None, None]
        .repeat(size, 0)
        .repeat(CANDIDATES, 1),
        "padding_mask": np.ones((size, CANDIDATES, SEQ), "int32"),
        "classify_at": np.full((size, CANDIDATES), SEQ - 1, "int32"),
    }
    return x, {"labels": labels, "choice": choice}


def test_added_segment_embeddings_start_at_zero_and_change_nothing():
    encoder = _encoder()
    grown = add_segment_embeddings(encoder)
    x = {
        "token_ids": np.array([[3, 14, 15, 9, 2]], "int32"),
        "segment_ids": np.array([[0, 1, 1, 0, 1]], "int32"),
        "padding_mask": np.ones((1, 5), "int32"),
    }
    before = encoder({**x, "segment_ids": np.zeros((1, 5), "int32")})["sequence_output"]
    after = grown(x)["sequence_output"]
    np.testing.assert_allclose(np.asarray(after), np.asarray(before), atol=1e-6)
    assert grown.config.num_segments == 2 and encoder.config.num_segments == 0
    with pytest.raises(ValueError, match="already has 2 segment embeddings"):
        add_segment_embeddings(grown)
    with pytest.raises(ValueError, match="num_segments must be an integer >= 1; received 0"):
        add_segment_embeddings(encoder, 0)


def test_the_losses_score_only_labelled_tokens_and_the_gold_choice():
    model = DialogModel(add_segment_embeddings(_encoder()))
    x, y = _batch(3)
    outputs = model(x)
    lm_loss, choice_loss, correct = model.losses_of(y, outputs)
    logits = np.asarray(outputs["lm_logits"], np.float64)[:, :, :-1]
    targets = y["labels"][:, :, 1:]
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    where = targets != -100
    expected = -np.mean(log_probs[where, targets[where]])
    assert float(lm_loss) == pytest.approx(expected, rel=1e-4)
    scores = np.asarray(outputs["choice_logits"], np.float64)
    choice_log_probs = scores - np.log(np.exp(scores).sum(-1, keepdims=True))
    assert float(choice_loss) == pytest.approx(
        -np.mean(choice_log_probs[np.arange(3), y["choice"]]), rel=1e-4
    )
    np.testing.assert_array_equal(np.asarray(correct), scores.argmax(-1) == y["choice"])


def test_training_learns_to_pick_the_gold_reply_and_round_trips(tmp_path):
    model = DialogModel(add_segment_embeddings(_encoder()), language_model_weight=2.0)
    x, y = _batch(64)
    model.compile(optimizer=keras.optimizers.Adam(3e-3))
    history = model.fit(x, y, batch_size=16, epochs=12, verbose=0).history
    assert history["choice_accuracy"][-1] > 0.9 > history["choice_accuracy"][0] - 0.2
    assert history["lm_loss"][-1] < history["lm_loss"][0]
    path = tmp_path / "dialog.keras"
    model.save(path)
    again = keras.saving.load_model(path)
    for key in ("lm_logits", "choice_logits"):
        np.testing.assert_allclose(np.asarray(again(x)[key]), np.asarray(model(x)[key]), atol=1e-5)
    assert again.language_model_weight == 2.0


def test_bad_inputs_and_labels_are_named():
    model = DialogModel(_encoder())
    x, y = _batch(2)
    with pytest.raises(ValueError, match=r"lack \['classify_at'\]"):
        model({key: value for key, value in x.items() if key != "classify_at"})
    with pytest.raises(ValueError, match="needs y as a dict with 'labels'"):
        model.compute_loss(x, y["choice"], model(x))
    with pytest.raises(ValueError, match="choice_weight must be a number >= 0"):
        DialogModel(_encoder(), choice_weight=-1)
    assert ops.shape(model(x)["choice_logits"]) == (2, CANDIDATES)


def test_model_contract():
    x, y = _batch(4)
    run_model_test(
        DialogModel(add_segment_embeddings(_encoder())),
        x,
        y,
        # The pooler is unused; the choice head's bias adds one constant to every candidate's
        # score, which the softmax over candidates ignores.
        zero_gradient_weights=("pooler/kernel", "pooler/bias", "choice_head/bias"),
    )
