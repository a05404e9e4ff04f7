import keras
import numpy as np
import pytest

from kbert.models import NextSentencePrediction
from tests.model_test_case import run_model_test
from tests.models.pretraining_batches import (
    as_numpy,
    encoder_batch,
    fit_losses,
    log_softmax,
    save_and_load,
    tiny_encoder,
)


def _batch():
    return {**encoder_batch(), "next_sentence_labels": np.array([0, 1], "int32")}


def _model(**kwargs):
    keras.utils.set_random_seed(0)
    return NextSentencePrediction(tiny_encoder(), **kwargs)


def test_logits_and_loss_match_numpy():
    model = _model()
    x = _batch()
    logits = as_numpy(model(x)["logits"])
    assert logits.shape == (2, 2)
    pooled = as_numpy(model.encoder(encoder_batch())["pooled_output"])
    np.testing.assert_allclose(
        logits,
        pooled @ as_numpy(model.classifier.kernel) + as_numpy(model.classifier.bias),
        atol=1e-5,
    )
    expected = -log_softmax(logits)[[0, 1], x["next_sentence_labels"]].mean()
    np.testing.assert_allclose(float(model.compute_loss(x=x, y_pred=model(x))), expected, rtol=1e-5)


def test_fit_lowers_the_loss_and_the_prefix_names_the_metrics():
    model = _model(metric_prefix="sop")
    history = fit_losses(model, _batch(), learning_rate=1e-3, run_eagerly=True)
    assert history["loss"][-1] < history["loss"][0]
    assert set(history) == {"loss", "sop_loss", "sop_accuracy"}


def test_config_and_keras_file_round_trip(tmp_path):
    model = _model(metric_prefix="sop")
    x = _batch()
    rebuilt = NextSentencePrediction.from_config(model.get_config())
    assert rebuilt.metric_prefix == "sop"
    restored = save_and_load(model, tmp_path)
    np.testing.assert_allclose(
        as_numpy(restored(x)["logits"]), as_numpy(model(x)["logits"]), atol=1e-5
    )


def test_model_contract():
    # The head reads the pooled output, so the pooler trains too: no weight is exempt.
    run_model_test(_model(metric_prefix="sop"), _batch())


def test_missing_or_misshapen_labels_are_errors():
    model = _model()
    with pytest.raises(ValueError, match=r"needs x\['next_sentence_labels'\], which is missing"):
        model(encoder_batch())
    with pytest.raises(ValueError, match=r"must have shape \(batch,\) = \(2,\); received \(2, 1\)"):
        model({**encoder_batch(), "next_sentence_labels": np.zeros((2, 1), "int32")})
