"""Every pretraining objective's model from one set of sizes."""

import pytest

from kbert.models import (
    CausalLanguageModel,
    ElectraPretrainingModel,
    EncoderDecoder,
    MaskedLanguageModel,
)
from kbert.models.pretraining_models import (
    PretrainingModelSettings,
    build_pretraining_model,
    check_preset,
    pretrained_encoder,
)

SETTINGS = PretrainingModelSettings(num_layers=2, hidden_dim=32, num_heads=4, block_length=16)


@pytest.mark.parametrize(
    ("objective", "model_class", "causal", "norm_first", "segments"),
    [
        ("causal", CausalLanguageModel, True, True, 0),
        ("masked", MaskedLanguageModel, False, False, 2),
        ("electra", ElectraPretrainingModel, False, False, 2),
    ],
)
def test_encoder_objectives_train_an_encoder_of_the_given_size(
    objective, model_class, causal, norm_first, segments
):
    model = build_pretraining_model(objective, SETTINGS, vocabulary_size=60)
    assert isinstance(model, model_class)
    config = pretrained_encoder(model).config
    assert (config.num_layers, config.hidden_dim, config.num_heads) == (2, 32, 4)
    assert (config.intermediate_dim, config.max_sequence_length) == (128, 16)
    assert (config.causal, config.norm_first, config.num_segments) == (causal, norm_first, segments)
    assert config.vocabulary_size == 60


def test_electra_generator_is_a_quarter_as_wide_and_layer_norm_can_be_chosen():
    model = build_pretraining_model("electra", SETTINGS, vocabulary_size=60)
    generator = model.generator_encoder.config
    assert (generator.hidden_dim, generator.num_heads, generator.intermediate_dim) == (8, 1, 32)
    assert pretrained_encoder(model) is model.discriminator_encoder
    pre = PretrainingModelSettings(**{**SETTINGS.__dict__, "layer_norm": "pre"})
    assert pretrained_encoder(build_pretraining_model("masked", pre, 60)).config.norm_first


def test_span_corruption_trains_an_encoder_decoder():
    model = build_pretraining_model("span_corruption", SETTINGS, vocabulary_size=60)
    assert isinstance(model, EncoderDecoder) and model.built
    assert (model.num_encoder_layers, model.num_decoder_layers, model.hidden_dim) == (2, 2, 32)
    assert model.vocabulary_size == 60 and pretrained_encoder(model) is None
    tiny = PretrainingModelSettings(preset="tiny")
    assert build_pretraining_model("span_corruption", tiny, 60).intermediate_dim == 64


def test_presets_of_the_other_family_and_unknown_objectives_are_refused():
    check_preset("masked", "bert_base")
    check_preset("span_corruption", "t5_small")
    with pytest.raises(ValueError, match="preset 't5_small' is not one for objective masked"):
        check_preset("masked", "t5_small")
    with pytest.raises(ValueError, match="objective must be one of"):
        build_pretraining_model("denoising", SETTINGS, 60)


def test_electra_generator_width_loss_weight_and_tying_are_settings():
    settings = PretrainingModelSettings(
        **{
            **SETTINGS.__dict__,
            "generator_width_factor": 2,
            "discriminator_weight": 20.0,
            "tie_embeddings": True,
        }
    )
    model = build_pretraining_model("electra", settings, vocabulary_size=60)
    assert model.generator_encoder.config.hidden_dim == 16
    assert model.discriminator_weight == 20.0 and model.tie_embeddings
    token_table = model.discriminator_encoder.embeddings.token_embedding
    assert model.generator_encoder.embeddings.token_embedding is token_table
    for field, value, expected in (
        ("generator_width_factor", 0, "an int >= 1; received 0"),
        ("generator_width_factor", 2.0, "an int >= 1; received 2.0"),
        ("discriminator_weight", 0, "a number > 0; received 0"),
        ("tie_embeddings", "yes", "a bool; received 'yes'"),
    ):
        with pytest.raises(ValueError, match=f"{field} must be {expected}"):
            PretrainingModelSettings(**{field: value})


def test_the_encoder_is_saved_with_the_dropout_fine_tuning_uses():
    import numpy as np

    from kbert.models.pretraining_models import encoder_for_fine_tuning

    settings = PretrainingModelSettings(**{**SETTINGS.__dict__, "dropout": 0.0})
    encoder = pretrained_encoder(build_pretraining_model("masked", settings, 60))
    tuned = encoder_for_fine_tuning(encoder, 0.2)
    assert (tuned.config.dropout, tuned.config.attention_dropout) == (0.2, 0.2)
    assert encoder.config.dropout == 0.0  # the pretrained one is not changed
    for mine, theirs in zip(tuned.get_weights(), encoder.get_weights(), strict=True):
        np.testing.assert_array_equal(mine, theirs)
    x = encoder.dummy_inputs(2, 6)
    np.testing.assert_allclose(
        np.asarray(tuned(x)["sequence_output"]), np.asarray(encoder(x)["sequence_output"])
    )  # same outputs at inference
    assert encoder_for_fine_tuning(tuned, 0.2) is tuned
    with pytest.raises(ValueError, match=r"dropout must be a number in \[0, 1\); received 1"):
        encoder_for_fine_tuning(encoder, 1)
