import keras
import numpy as np
import pytest

from kbert.models import ElectraPretrainingModel, Encoder, NextSentencePrediction
from tests.model_test_case import run_model_test
from tests.models.pretraining_batches import (
    MASK_POSITIONS,
    MASK_WEIGHTS,
    as_numpy,
    fit_losses,
    masked_batch,
    save_and_load,
    tiny_encoder,
)


def _electra(**kwargs):
    keras.utils.set_random_seed(0)
    generator = tiny_encoder(hidden_dim=8, intermediate_dim=16)
    return ElectraPretrainingModel(generator, tiny_encoder(), seed=0, **kwargs)


def _pin_generator(model, token):
    """Makes the generator's softmax put all its mass on `token`."""
    bias = np.zeros(50, "float32")
    bias[token] = 1e4
    model.generator.decoder.bias.assign(bias)


def _masked_position_map():
    """(batch, seq) 1 at each real masked position of the shared batch."""
    expected = np.zeros((2, 8), "int32")
    for row, column in zip(*np.nonzero(MASK_WEIGHTS), strict=True):
        expected[row, MASK_POSITIONS[row, column]] = 1
    return expected


def test_a_sampled_token_that_differs_from_the_original_is_labelled_replaced():
    model = _electra()
    _pin_generator(model, 30)  # no original id in the batch is 30
    x = masked_batch()
    outputs = model(x)
    masked = _masked_position_map()
    np.testing.assert_array_equal(as_numpy(outputs["replaced_labels"]), masked)
    np.testing.assert_array_equal(
        as_numpy(outputs["corrupted_token_ids"]), np.where(masked == 1, 30, x["token_ids"])
    )
    assert tuple(outputs["discriminator_logits"].shape) == (2, 8)


def test_a_sampled_token_equal_to_the_original_is_labelled_original():
    model = _electra()
    _pin_generator(model, 30)
    # Every masked token was 30 before masking: the generator guesses right everywhere.
    x = {**masked_batch(), "mask_ids": np.where(MASK_WEIGHTS > 0, 30, 0).astype("int32")}
    outputs = model(x)
    np.testing.assert_array_equal(as_numpy(outputs["replaced_labels"]), np.zeros((2, 8)))
    # The discriminator still sees the generator's tokens, not the [MASK]s.
    np.testing.assert_array_equal(as_numpy(outputs["corrupted_token_ids"])[1, 2:4], [30, 30])


def test_corrupt_puts_samples_at_masked_positions_and_ignores_padding_selections():
    model = _electra()
    x = masked_batch()
    sampled = np.array([[17, 5, 5], [40, 22, 41]], "int32")  # 17 and 22 equal the originals
    corrupted, labels = model.corrupt(x, sampled)
    expected_ids = x["token_ids"].copy()
    expected_ids[0, 2], expected_ids[1, 2], expected_ids[1, 3], expected_ids[1, 5] = 17, 40, 22, 41
    np.testing.assert_array_equal(as_numpy(corrupted), expected_ids)
    expected_labels = np.zeros((2, 8))
    expected_labels[1, 2] = expected_labels[1, 5] = 1
    np.testing.assert_array_equal(as_numpy(labels), expected_labels)


def test_replacements_are_sampled_from_the_softmax():
    model = _electra()
    # Token 3 with probability 0.7, token 9 with 0.3, over 4000 draws: the standard error of
    # the frequency is 0.007, so 0.03 is a four-sigma tolerance.
    logits = np.full((4, 1000, 50), -1e9, "float32")
    logits[..., 3], logits[..., 9] = np.log(0.7), np.log(0.3)
    samples = as_numpy(model.sample_replacements(logits))
    assert samples.shape == (4, 1000)
    assert set(np.unique(samples)) == {3, 9}
    assert abs((samples == 3).mean() - 0.7) < 0.03


def test_loss_is_generator_mlm_plus_weighted_replaced_token_detection():
    model = _electra(discriminator_weight=20.0)
    x = masked_batch()
    outputs = model(x)
    generator_loss = float(model.generator.compute_loss(x=x, y_pred=outputs["generator"]))
    logits = as_numpy(outputs["discriminator_logits"])
    labels = as_numpy(outputs["replaced_labels"])
    per_token = np.logaddexp(0, logits) - labels * logits  # sigmoid cross-entropy
    real = x["padding_mask"]
    rtd = (per_token * real).sum() / real.sum()
    np.testing.assert_allclose(
        float(model.compute_loss(x=x, y_pred=outputs)), generator_loss + 20.0 * rtd, rtol=1e-5
    )


def test_fit_then_the_discriminator_encoder_serves_another_head():
    model = _electra()
    discriminator = model.discriminator_encoder
    before = np.array(discriminator.embeddings.token_embedding.embeddings)
    history = fit_losses(model, masked_batch())
    assert history["loss"][-1] < history["loss"][0]
    assert {"loss", "generator_loss", "generator_accuracy", "rtd_loss", "rtd_accuracy"} <= set(
        history
    )
    assert isinstance(discriminator, Encoder)
    assert not np.allclose(np.array(discriminator.embeddings.token_embedding.embeddings), before)
    head = NextSentencePrediction(discriminator)
    x = {**masked_batch(), "next_sentence_labels": np.array([1, 0], "int32")}
    assert tuple(head(x)["logits"].shape) == (2, 2)


def test_config_and_keras_file_round_trip(tmp_path):
    model = _electra(discriminator_weight=10.0)
    _pin_generator(model, 30)  # sampling becomes deterministic, so outputs can be compared
    x = masked_batch()
    config = model.get_config()
    rebuilt = ElectraPretrainingModel.from_config(config)
    assert rebuilt.get_config() == config
    restored = save_and_load(model, tmp_path)
    assert restored.discriminator_weight == 10.0
    for key in ("discriminator_logits", "corrupted_token_ids"):
        np.testing.assert_allclose(as_numpy(restored(x)[key]), as_numpy(model(x)[key]), atol=1e-5)


def test_model_contract():
    model = _electra(discriminator_weight=10.0)
    # The replacements are sampled: pinned, every copy of the model corrupts the same tokens,
    # so the outputs can be compared.
    _pin_generator(model, 30)
    run_model_test(
        model,
        masked_batch(),
        # Neither objective reads an encoder's pooled output.
        zero_gradient_weights=("pooler/kernel", "pooler/bias"),
    )


def test_bad_encoders_and_inputs_are_errors():
    with pytest.raises(
        ValueError, match="must share a vocabulary; received vocabulary_size 50 and 60"
    ):
        ElectraPretrainingModel(tiny_encoder(), tiny_encoder(vocabulary_size=60))
    model = _electra()
    x = masked_batch()
    del x["mask_positions"]
    with pytest.raises(ValueError, match=r"needs x\['mask_positions'\], which is missing"):
        model(x)


def test_tied_embeddings_share_the_discriminators_tables_and_survive_saving(tmp_path):
    model = _electra(tie_embeddings=True)
    generator, discriminator = model.generator_encoder, model.discriminator_encoder
    for table in ("token_embedding", "position_embedding", "segment_embedding"):
        assert getattr(generator.embeddings, table) is getattr(discriminator.embeddings, table)
    # The narrower generator reads the tables at the discriminator's width and projects down.
    assert generator.config.embedding_dim == discriminator.config.hidden_dim
    assert generator.config.hidden_dim == 8 and generator.embeddings.projection is not None
    assert len(model.weights) == len({id(v) for v in model.weights})
    # One update moves the one table both read; no copy is left behind untrained.
    untied_count = len(_electra().trainable_weights)
    assert len(model.trainable_weights) == untied_count - 3 + 2  # 3 tables shared, +projection
    history = fit_losses(model, masked_batch())
    assert history["loss"][-1] < history["loss"][0]
    _pin_generator(model, 30)
    restored = save_and_load(model, tmp_path)
    assert restored.tie_embeddings is True
    restored_generator = restored.generator_encoder.embeddings
    assert (
        restored_generator.token_embedding
        is restored.discriminator_encoder.embeddings.token_embedding
    )
    x = masked_batch()
    for key in ("discriminator_logits", "corrupted_token_ids"):
        np.testing.assert_allclose(as_numpy(restored(x)[key]), as_numpy(model(x)[key]), atol=1e-5)


def test_tied_embeddings_need_matching_segments_and_a_bool():
    with pytest.raises(ValueError, match="tie_embeddings must be a bool; received 1"):
        _electra(tie_embeddings=1)
    generator = tiny_encoder(hidden_dim=8, intermediate_dim=16, num_segments=3)
    with pytest.raises(ValueError, match="same num_segments in generator and discriminator"):
        ElectraPretrainingModel(generator, tiny_encoder(), tie_embeddings=True)
