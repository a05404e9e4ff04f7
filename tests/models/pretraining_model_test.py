import keras
import numpy as np
import pytest

from kbert.models import (
    MaskedLanguageModel,
    NextSentencePrediction,
    PretrainingModel,
    SpanBoundaryObjective,
)
from tests.model_test_case import run_model_test
from tests.models.pretraining_batches import (
    as_numpy,
    fit_losses,
    masked_batch,
    save_and_load,
    span_batch,
    tiny_encoder,
)


def _batch():
    return {**masked_batch(), "next_sentence_labels": np.array([1, 0], "int32")}


def _bert(loss_weights=None):
    keras.utils.set_random_seed(0)
    encoder = tiny_encoder()
    mlm, nsp = MaskedLanguageModel(encoder), NextSentencePrediction(encoder)
    return PretrainingModel(encoder, [mlm, nsp], loss_weights=loss_weights), mlm, nsp


def test_one_encoder_pass_feeds_every_head_and_losses_sum_with_weights():
    model, mlm, nsp = _bert(loss_weights=[1.0, 0.5])
    x = _batch()
    outputs = model(x)
    assert sorted(outputs) == ["mlm", "nsp"]
    np.testing.assert_allclose(
        as_numpy(outputs["mlm"]["logits"]), as_numpy(mlm(x)["logits"]), atol=1e-6
    )
    np.testing.assert_allclose(
        as_numpy(outputs["nsp"]["logits"]), as_numpy(nsp(x)["logits"]), atol=1e-6
    )
    expected = float(mlm.compute_loss(x=x, y_pred=mlm(x))) + 0.5 * float(
        nsp.compute_loss(x=x, y_pred=nsp(x))
    )
    np.testing.assert_allclose(float(model.compute_loss(x=x, y_pred=outputs)), expected, rtol=1e-5)
    # The encoder's weights are counted once.
    ids = [id(w) for w in model.trainable_weights]
    assert len(ids) == len(set(ids))


def test_fit_and_evaluate_report_each_objective():
    model, _, _ = _bert()
    history = fit_losses(model, _batch())
    assert set(history) == {
        "loss",
        "mlm_loss",
        "mlm_accuracy",
        "mlm_perplexity",
        "nsp_loss",
        "nsp_accuracy",
    }
    assert history["loss"][-1] < history["loss"][0]
    np.testing.assert_allclose(
        np.add(history["mlm_loss"], history["nsp_loss"]), history["loss"], rtol=1e-5
    )
    logs = model.evaluate(_batch(), verbose=0, return_dict=True)
    assert set(logs) == set(history)


def test_config_and_keras_file_round_trip_keep_the_encoder_shared(tmp_path):
    model, _, _ = _bert(loss_weights=[1.0, 0.25])
    x = _batch()
    rebuilt = PretrainingModel.from_config(model.get_config())
    assert rebuilt.loss_weights == [1.0, 0.25]
    assert all(objective.encoder is rebuilt.encoder for objective in rebuilt.objectives)
    restored = save_and_load(model, tmp_path)
    assert all(objective.encoder is restored.encoder for objective in restored.objectives)
    for key in ("mlm", "nsp"):
        np.testing.assert_allclose(
            as_numpy(restored(x)[key]["logits"]), as_numpy(model(x)[key]["logits"]), atol=1e-5
        )


@pytest.mark.parametrize("recipe", ["bert", "spanbert"])
def test_model_contract(recipe):
    keras.utils.set_random_seed(0)
    encoder = tiny_encoder()
    if recipe == "bert":  # NSP reads the pooled output, so every weight trains
        second, x, unused = NextSentencePrediction(encoder), _batch(), ()
    else:  # neither MLM nor SBO reads the pooled output
        second, x = SpanBoundaryObjective(encoder, max_span_length=4), span_batch()
        unused = ("pooler/kernel", "pooler/bias")
    objectives = [MaskedLanguageModel(encoder), second]
    model = PretrainingModel(encoder, objectives, loss_weights=[1.0, 0.5])
    run_model_test(model, x, zero_gradient_weights=unused)


def test_bad_objectives_and_inputs_are_errors():
    encoder = tiny_encoder()
    mlm = MaskedLanguageModel(encoder)
    with pytest.raises(ValueError, match="holds a different encoder"):
        PretrainingModel(encoder, [mlm, NextSentencePrediction(tiny_encoder())])
    with pytest.raises(ValueError, match="distinct metric_prefix"):
        PretrainingModel(encoder, [mlm, MaskedLanguageModel(encoder)])
    with pytest.raises(ValueError, match=r"loss_weights must have one entry per objective \(1\)"):
        PretrainingModel(encoder, [mlm], loss_weights=[1.0, 2.0])
    with pytest.raises(ValueError, match="at least one objective"):
        PretrainingModel(encoder, [])
    model = PretrainingModel(encoder, [mlm, NextSentencePrediction(encoder)])
    with pytest.raises(ValueError, match=r"needs x\['next_sentence_labels'\]"):
        model(masked_batch())
