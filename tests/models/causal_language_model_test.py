import keras
import numpy as np
import pytest

from kbert.models import CausalLanguageModel
from tests.model_test_case import run_model_test
from tests.models.pretraining_batches import (
    as_numpy,
    encoder_batch,
    fit_losses,
    head_weights,
    log_softmax,
    save_and_load,
    tiny_encoder,
)


def _model(embedding_dim=None):
    keras.utils.set_random_seed(0)
    model = CausalLanguageModel(
        tiny_encoder(causal=True, norm_first=True, embedding_dim=embedding_dim)
    )
    # A non-zero bias, so the tests see it added.
    model.decoder.bias.assign(np.random.default_rng(0).normal(size=50).astype("float32"))
    return model


def _numpy_logits(model, x):
    hidden = as_numpy(model.encoder(x)["sequence_output"])
    if model.output_projection is not None:
        hidden = hidden @ as_numpy(model.output_projection.kernel) + as_numpy(
            model.output_projection.bias
        )
    table = as_numpy(model.encoder.embeddings.token_embedding.embeddings)
    return hidden @ table.T + as_numpy(model.decoder.bias)


@pytest.mark.parametrize("embedding_dim", [None, 8])
def test_logits_are_the_output_times_the_tied_token_table(embedding_dim):
    model = _model(embedding_dim)
    x = encoder_batch()
    logits = as_numpy(model(x)["logits"])
    assert logits.shape == (2, 8, 50)
    np.testing.assert_allclose(logits, _numpy_logits(model, x), atol=1e-4)
    # The only head weights: the output bias (and the hidden → embedding_dim map if factorized).
    shapes = sorted(tuple(w.shape) for w in head_weights(model, model.encoder))
    assert shapes == ([(50,)] if embedding_dim is None else [(8,), (16, 8), (50,)])
    # Changing the embedding table changes the logits: the output matrix is that table.
    table = model.encoder.embeddings.token_embedding.embeddings
    noise = np.random.default_rng(1).normal(size=tuple(table.shape)).astype("float32")
    table.assign(table + noise)
    changed = as_numpy(model(x)["logits"])
    assert not np.allclose(changed, logits, atol=1e-3)
    np.testing.assert_allclose(changed, _numpy_logits(model, x), atol=1e-4)


def test_loss_matches_numpy_next_token_nll_over_real_tokens():
    model = _model()
    x = encoder_batch()
    logits = as_numpy(model(x)["logits"])
    log_probs = log_softmax(logits[:, :-1])
    targets = x["token_ids"][:, 1:]
    nll = -np.take_along_axis(log_probs, targets[..., None], axis=-1)[..., 0]
    weights = x["padding_mask"][:, 1:] * x["padding_mask"][:, :-1]
    expected = (nll * weights).sum() / weights.sum()
    loss = model.compute_loss(x=x, y_pred=model(x))
    np.testing.assert_allclose(float(loss), expected, rtol=1e-5)
    # Padding ignored: other ids under padding_mask = 0 leave the loss unchanged.
    repadded = {**x, "token_ids": np.where(x["padding_mask"] == 1, x["token_ids"], 33)}
    np.testing.assert_allclose(
        float(model.compute_loss(x=repadded, y_pred=model(repadded))), expected, rtol=1e-5
    )
    # Per-sequence sums for word-level perplexity.
    scores = model.negative_log_likelihood(x)
    np.testing.assert_allclose(as_numpy(scores["total_nll"]), (nll * weights).sum(1), rtol=1e-5)
    np.testing.assert_array_equal(as_numpy(scores["token_count"]), [4, 7])


def test_fit_lowers_the_loss_and_evaluate_reports_perplexity():
    model = _model()
    x = encoder_batch()
    history = fit_losses(model, x)
    assert history["loss"][-1] < history["loss"][0]
    assert set(history) == {"loss", "clm_loss", "clm_perplexity", "clm_accuracy"}
    logs = model.evaluate(x, verbose=0, return_dict=True)
    scores = model.negative_log_likelihood(x)
    corpus = np.exp(as_numpy(scores["total_nll"]).sum() / as_numpy(scores["token_count"]).sum())
    np.testing.assert_allclose(logs["clm_perplexity"], corpus, rtol=1e-4)
    np.testing.assert_allclose(logs["clm_perplexity"], np.exp(logs["clm_loss"]), rtol=1e-4)


def test_config_and_keras_file_round_trip(tmp_path):
    model = _model(embedding_dim=8)
    x = encoder_batch()
    rebuilt = CausalLanguageModel.from_config(model.get_config())
    assert rebuilt.get_config() == model.get_config()
    restored = save_and_load(model, tmp_path)
    assert isinstance(restored, CausalLanguageModel)
    np.testing.assert_allclose(
        as_numpy(restored(x)["logits"]), as_numpy(model(x)["logits"]), atol=1e-5
    )


def test_bad_encoder_and_inputs_are_errors():
    with pytest.raises(ValueError, match=r"causal encoder \(config.causal=True\)"):
        CausalLanguageModel(tiny_encoder())
    model = _model()
    x = encoder_batch()
    del x["padding_mask"]
    with pytest.raises(ValueError, match=r"needs x\['padding_mask'\], which is missing"):
        model(x)
    with pytest.raises(ValueError, match="reads its targets from the input dict"):
        model.compute_loss(x=encoder_batch(), y=np.zeros(2), y_pred=model(encoder_batch()))


def test_model_contract():
    keras.utils.set_random_seed(0)
    encoder = tiny_encoder(causal=True, norm_first=True)
    run_model_test(
        CausalLanguageModel(encoder),
        encoder_batch(),
        zero_gradient_weights=("pooler/kernel", "pooler/bias"),
    )
