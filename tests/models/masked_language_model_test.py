import keras
import numpy as np
import pytest

from kbert.models import MaskedLanguageModel
from tests.model_test_case import run_model_test
from tests.models.pretraining_batches import (
    as_numpy,
    encoder_batch,
    fit_losses,
    head_weights,
    log_softmax,
    masked_batch,
    save_and_load,
    tiny_encoder,
)


def _model(**encoder_changes):
    keras.utils.set_random_seed(0)
    model = MaskedLanguageModel(tiny_encoder(**encoder_changes))
    model.decoder.bias.assign(np.random.default_rng(0).normal(size=50).astype("float32"))
    return model


def _numpy_loss(logits, x):
    log_probs = log_softmax(logits)
    nll = -np.take_along_axis(log_probs, x["mask_ids"][..., None], axis=-1)[..., 0]
    return (nll * x["mask_weights"]).sum() / x["mask_weights"].sum()


@pytest.mark.parametrize("embedding_dim", [None, 8])
def test_logits_are_the_head_at_the_masked_positions_with_the_tied_table(embedding_dim):
    model = _model(embedding_dim=embedding_dim)
    x = masked_batch()
    logits = as_numpy(model(x)["logits"])
    assert logits.shape == (2, 3, 50)
    # Gathering first gives what the head would give at every position, read at the masks.
    sequence = model.encoder(encoder_batch())["sequence_output"]
    hidden = as_numpy(model.transform_norm(model.transform(sequence)))  # (batch, seq, width)
    table = as_numpy(model.encoder.embeddings.token_embedding.embeddings)
    everywhere = hidden @ table.T + as_numpy(model.decoder.bias)
    expected = np.take_along_axis(everywhere, x["mask_positions"][..., None], axis=1)
    np.testing.assert_allclose(logits, expected, atol=1e-4)
    # Head weights: transform kernel and bias, LayerNorm gamma and beta, output bias. No
    # (width, vocab) matrix: the output matrix is the embedding table.
    width = embedding_dim or 16
    shapes = sorted(tuple(w.shape) for w in head_weights(model, model.encoder))
    assert shapes == sorted([(16, width), (width,), (width,), (width,), (50,)])
    table_variable = model.encoder.embeddings.token_embedding.embeddings
    noise = np.random.default_rng(1).normal(size=tuple(table_variable.shape)).astype("float32")
    table_variable.assign(table_variable + noise)
    assert not np.allclose(as_numpy(model(x)["logits"]), logits, atol=1e-3)


def test_loss_is_the_weighted_mean_cross_entropy_at_masked_positions():
    model = _model()
    x = masked_batch()
    expected = _numpy_loss(as_numpy(model(x)["logits"]), x)
    np.testing.assert_allclose(float(model.compute_loss(x=x, y_pred=model(x))), expected, rtol=1e-5)
    # A weight-0 selection is ignored whatever id it holds.
    changed = {**x, "mask_ids": np.where(x["mask_weights"] > 0, x["mask_ids"], 44)}
    np.testing.assert_allclose(
        float(model.compute_loss(x=changed, y_pred=model(changed))), expected, rtol=1e-5
    )
    # Weights scale each selection's share.
    weighted = {**x, "mask_weights": np.array([[2.0, 0.0, 0.0], [1.0, 0.5, 0.0]], "float32")}
    np.testing.assert_allclose(
        float(model.compute_loss(x=weighted, y_pred=model(weighted))),
        _numpy_loss(as_numpy(model(weighted)["logits"]), weighted),
        rtol=1e-5,
    )


def test_fit_lowers_the_loss_and_reports_accuracy_and_perplexity():
    model = _model()
    history = fit_losses(model, masked_batch())
    assert history["loss"][-1] < history["loss"][0]
    assert set(history) == {"loss", "mlm_loss", "mlm_accuracy", "mlm_perplexity"}
    np.testing.assert_allclose(history["mlm_perplexity"], np.exp(history["mlm_loss"]), rtol=1e-4)
    x = masked_batch()
    logs = model.evaluate(x, verbose=0, return_dict=True)
    # The weighted share of selections whose top logit is the masked token.
    correct = as_numpy(model(x)["logits"]).argmax(-1) == x["mask_ids"]
    accuracy = (correct * x["mask_weights"]).sum() / x["mask_weights"].sum()
    assert logs["mlm_accuracy"] == pytest.approx(accuracy, abs=1e-6)


def test_gradient_accumulation_updates_every_second_step():
    model = _model()
    model.compile(
        optimizer=keras.optimizers.Adam(1e-2, gradient_accumulation_steps=2), run_eagerly=True
    )
    x = masked_batch()
    before = np.array(model.transform.kernel)
    model.train_on_batch(x)
    np.testing.assert_array_equal(np.array(model.transform.kernel), before)
    model.train_on_batch(x)
    assert not np.allclose(np.array(model.transform.kernel), before)


@pytest.mark.parametrize("dtype", ["mixed_float16", "mixed_bfloat16"])
def test_fit_in_mixed_precision(dtype):
    model = _model(dtype=dtype)
    assert model.dtype_policy.name == dtype
    # Graph mode for float16 (loss scaling inside tf.function); bfloat16 eagerly, for speed.
    model.compile(optimizer=keras.optimizers.Adam(1e-2), run_eagerly=dtype == "mixed_bfloat16")
    # float16 needs loss scaling; Keras adds it because the model carries the encoder's policy.
    assert isinstance(model.optimizer, keras.optimizers.LossScaleOptimizer) == (
        dtype == "mixed_float16"
    )
    x = masked_batch()
    history = model.fit(x, epochs=2, verbose=0)
    assert np.isfinite(history.history["loss"]).all()
    assert keras.backend.standardize_dtype(model(x)["logits"].dtype) == dtype.split("_")[1]


def test_config_and_keras_file_round_trip(tmp_path):
    model = _model(embedding_dim=8, share_layers=True)
    x = masked_batch()
    rebuilt = MaskedLanguageModel.from_config(model.get_config())
    assert rebuilt.get_config() == model.get_config()
    restored = save_and_load(model, tmp_path)
    np.testing.assert_allclose(
        as_numpy(restored(x)["logits"]), as_numpy(model(x)["logits"]), atol=1e-5
    )


def test_missing_keys_and_mismatched_mask_shapes_are_errors():
    model = _model()
    x = masked_batch()
    del x["mask_weights"]
    with pytest.raises(ValueError, match=r"needs x\['mask_weights'\], which is missing"):
        model(x)
    x = {**masked_batch(), "mask_ids": masked_batch()["mask_ids"][:, :2]}
    with pytest.raises(
        ValueError,
        match=r"x\['mask_ids'\] has shape \(2, 2\), expected the "
        r"shape of x\['mask_positions'\], \(2, 3\)",
    ):
        model(x)
    x = {**masked_batch(), "mask_weights": np.ones(2, "float32")}
    with pytest.raises(ValueError, match=r"x\['mask_weights'\] must have rank 2"):
        model(x)


def test_model_contract():
    keras.utils.set_random_seed(0)
    run_model_test(
        MaskedLanguageModel(tiny_encoder()),
        masked_batch(),
        zero_gradient_weights=("pooler/kernel", "pooler/bias"),
    )
