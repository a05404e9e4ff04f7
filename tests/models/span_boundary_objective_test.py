import keras
import numpy as np
import pytest

from kbert.models import MaskedLanguageModel, PretrainingModel, SpanBoundaryObjective
from tests.model_test_case import run_model_test
from tests.models.pretraining_batches import (
    as_numpy,
    encoder_batch,
    fit_losses,
    head_weights,
    save_and_load,
    span_batch,
    tiny_encoder,
)


def _model(**kwargs):
    keras.utils.set_random_seed(0)
    return SpanBoundaryObjective(tiny_encoder(), **kwargs)


def test_logits_come_from_the_boundaries_and_the_relative_position():
    model = _model()
    x = span_batch()
    logits = as_numpy(model(x)["logits"])
    assert logits.shape == (2, 3, 50)
    # Recompute y_i = LN(GELU(W2 LN(GELU(W1 [z_{s-1}; z_{e+1}; p_{i-s+1}])))) @ table^T + b.
    sequence = as_numpy(model.encoder(encoder_batch())["sequence_output"])
    batch = np.arange(2)[:, None]
    offsets = np.clip(x["mask_relative_positions"] - 1, 0, None)
    h0 = np.concatenate(
        [
            sequence[batch, x["mask_left_boundary"]],
            sequence[batch, x["mask_right_boundary"]],
            as_numpy(model.position_embedding.embeddings)[offsets],
        ],
        axis=-1,
    )
    h2 = model.norm_2(model.dense_2(model.norm_1(model.dense_1(h0.astype("float32")))))
    table = as_numpy(model.encoder.embeddings.token_embedding.embeddings)
    np.testing.assert_allclose(
        logits, as_numpy(h2) @ table.T + as_numpy(model.decoder.bias), atol=1e-4
    )
    # Row 1 selections 0 and 1 share the span [2, 3] but differ in relative position.
    assert not np.allclose(logits[1, 0], logits[1, 1], atol=1e-4)
    # Tied output: no (width, vocab) matrix among the head's weights.
    assert not [
        w.path for w in head_weights(model, model.encoder) if len(w.shape) == 2 and 50 in w.shape
    ]
    assert tuple(model.position_embedding.embeddings.shape) == (10, 16)


def test_spanbert_is_mlm_plus_sbo_on_one_encoder_pass():
    keras.utils.set_random_seed(0)
    encoder = tiny_encoder()
    mlm, sbo = MaskedLanguageModel(encoder), SpanBoundaryObjective(encoder)
    spanbert = PretrainingModel(encoder, [mlm, sbo])
    x = span_batch()
    total = float(spanbert.compute_loss(x=x, y_pred=spanbert(x)))
    separate = float(mlm.compute_loss(x=x, y_pred=mlm(x))) + float(
        sbo.compute_loss(x=x, y_pred=sbo(x))
    )
    np.testing.assert_allclose(total, separate, rtol=1e-5)
    history = fit_losses(spanbert, x, run_eagerly=True)
    assert history["loss"][-1] < history["loss"][0]
    assert history["sbo_loss"][-1] < history["sbo_loss"][0]
    assert {"mlm_loss", "mlm_accuracy", "sbo_loss", "sbo_accuracy"} <= set(history)


def test_config_and_keras_file_round_trip(tmp_path):
    model = _model(max_span_length=4)
    x = span_batch()
    config = model.get_config()
    assert config["max_span_length"] == 4
    assert SpanBoundaryObjective.from_config(config).get_config() == config
    restored = save_and_load(model, tmp_path)
    np.testing.assert_allclose(
        as_numpy(restored(x)["logits"]), as_numpy(model(x)["logits"]), atol=1e-5
    )


def test_model_contract():
    run_model_test(
        _model(max_span_length=4),
        span_batch(),
        # The head reads the boundary tokens' hidden states, never the pooled output.
        zero_gradient_weights=("pooler/kernel", "pooler/bias"),
    )


def test_bad_arguments_and_inputs_are_errors():
    with pytest.raises(ValueError, match="max_span_length must be a positive int; received 0"):
        _model(max_span_length=0)
    model = _model()
    x = span_batch()
    del x["mask_right_boundary"]
    with pytest.raises(ValueError, match=r"needs x\['mask_right_boundary'\], which is missing"):
        model(x)
    x = {**span_batch(), "mask_relative_positions": np.ones((2, 4), "int32")}
    with pytest.raises(ValueError, match=r"x\['mask_relative_positions'\] has shape \(2, 4\)"):
        model(x)
