import keras
import numpy as np
import pytest
import tensorflow as tf
from keras import ops

from kbert.data import multitask_dataset, with_masked_language_model_inputs
from kbert.layers import ClassificationHead, TaggingHead
from kbert.models import CausalLanguageModel, MaskedLanguageModel, MultitaskModel
from kbert.text import MaskedLMMasker
from tests.model_test_case import run_model_test
from tests.models.pretraining_batches import (
    as_numpy,
    encoder_batch,
    log_softmax,
    masked_batch,
    save_and_load,
    tiny_encoder,
)

CLASS_LABELS = np.array([1, 0], "int32")
# Row 0 is padded after position 4; [CLS], [SEP] and padding are not scored.
TAG_LABELS = np.array(
    [[-100, 1, 2, 0, -100, -100, -100, -100], [-100, 3, 3, 1, 0, 2, 1, -100]], "int32"
)

ABSENT_TAGS = np.full_like(TAG_LABELS, -100)


def _model(language_model=None, loss_weights=None, causal=True, **kwargs):
    keras.utils.set_random_seed(0)
    encoder = tiny_encoder(causal=causal)
    heads = {
        "sentiment": ClassificationHead(2, pooling="last", dropout=0.0),
        "pos": TaggingHead(4, dropout=0.0),
    }
    objective = None
    if language_model == "causal":
        objective = CausalLanguageModel(encoder)
    elif language_model == "masked":
        objective = MaskedLanguageModel(encoder)
    return MultitaskModel(
        encoder, heads, loss_weights=loss_weights, language_model=objective, **kwargs
    )


def _cross_entropy(labels, logits):
    """Mean NLL over labels != -100, in NumPy."""
    logits = as_numpy(logits).reshape(-1, logits.shape[-1])
    labels = labels.reshape(-1)
    scored = labels != -100
    return -log_softmax(logits)[scored, labels[scored]].mean()


def test_total_loss_is_the_weighted_sum_of_task_losses_and_the_causal_lm_loss():
    model = _model("causal", loss_weights={"sentiment": 1.0, "pos": 0.3}, language_model_weight=0.5)
    x = encoder_batch()
    outputs = model(x)
    assert sorted(outputs) == ["language_model", "pos", "sentiment"]
    assert tuple(outputs["sentiment"].shape) == (2, 2)
    assert tuple(outputs["pos"].shape) == (2, 8, 4)
    # The LM scores the same forward pass: a plain CausalLanguageModel on x agrees.
    clm = model.language_model
    np.testing.assert_allclose(
        as_numpy(outputs["language_model"]["logits"]), as_numpy(clm(x)["logits"]), atol=1e-6
    )
    clm_loss = float(clm.compute_loss(x=x, y_pred=clm(x)))
    y = {"sentiment": CLASS_LABELS, "pos": TAG_LABELS}
    expected = (
        1.0 * _cross_entropy(CLASS_LABELS, outputs["sentiment"])
        + 0.3 * _cross_entropy(TAG_LABELS, outputs["pos"])
        + 0.5 * clm_loss
    )
    np.testing.assert_allclose(
        float(model.compute_loss(x=x, y=y, y_pred=outputs)), expected, rtol=1e-5
    )
    # A Keras loss on the same logits agrees on the tagging term (ignore_class=-100).
    keras_tagging = keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=-100)
    np.testing.assert_allclose(
        float(keras_tagging(TAG_LABELS, outputs["pos"])),
        _cross_entropy(TAG_LABELS, outputs["pos"]),
        rtol=1e-5,
    )
    # Only the LM: its weighted loss alone.
    np.testing.assert_allclose(
        float(model.compute_loss(x=x, y=None, y_pred=outputs)), 0.5 * clm_loss, rtol=1e-5
    )


def test_an_absent_task_adds_zero_and_its_head_gets_zero_gradient():
    model = _model()
    x = encoder_batch()
    pos_head = model.heads["pos"]
    for y in ({"sentiment": CLASS_LABELS, "pos": ABSENT_TAGS}, {"sentiment": CLASS_LABELS}):
        for metric in model.metrics:
            metric.reset_state()
        with tf.GradientTape() as tape:
            outputs = model(x, training=True)
            loss = model.compute_loss(x=x, y=y, y_pred=outputs)
        np.testing.assert_allclose(
            float(loss), _cross_entropy(CLASS_LABELS, outputs["sentiment"]), rtol=1e-6
        )
        gradients = tape.gradient(loss, pos_head.trainable_variables)
        for gradient in gradients:
            assert gradient is None or not np.any(as_numpy(gradient)), "absent head moved"
        assert float(model.task_loss_metrics["pos"].count) == 0.0
        assert float(model.task_accuracy_metrics["pos"].count) == 0.0
        assert float(model.task_loss_metrics["sentiment"].count) == 1.0
    # Ignored examples of a classification task are not scored either.
    outputs = model(x)
    partial = {"sentiment": np.array([1, -100], "int32")}
    np.testing.assert_allclose(
        float(model.compute_loss(x=x, y=partial, y_pred=outputs)),
        _cross_entropy(partial["sentiment"], outputs["sentiment"]),
        rtol=1e-6,
    )


def test_masked_lm_runs_on_masked_inputs_while_heads_read_unmasked_text():
    model = _model("masked", causal=False, language_model_weight=0.25)
    unmasked = encoder_batch()
    masked = masked_batch()  # token 4 is [MASK]
    x = {**unmasked, "language_model_inputs": masked}
    outputs = model(x)
    plain = model.encoder(unmasked)
    for task in ("sentiment", "pos"):
        np.testing.assert_allclose(
            as_numpy(outputs[task]),
            as_numpy(model.heads[task](plain, padding_mask=unmasked["padding_mask"])),
            atol=1e-6,
        )
    mlm = model.language_model
    np.testing.assert_allclose(
        as_numpy(outputs["language_model"]["logits"]), as_numpy(mlm(masked)["logits"]), atol=1e-6
    )
    expected = _cross_entropy(CLASS_LABELS, outputs["sentiment"]) + 0.25 * float(
        mlm.compute_loss(x=masked, y_pred=mlm(masked))
    )
    np.testing.assert_allclose(
        float(model.compute_loss(x=x, y={"sentiment": CLASS_LABELS}, y_pred=outputs)),
        expected,
        rtol=1e-5,
    )
    with pytest.raises(ValueError, match=r"needs x\['language_model_inputs'\].*mask_ids"):
        model(unmasked)


def test_fit_on_mixed_tasks_reduces_the_loss_and_reports_every_task():
    model = _model("causal")
    rng = np.random.default_rng(0)
    token_ids = rng.integers(5, 50, size=(8, 8)).astype("int32")
    x = {"token_ids": token_ids, "padding_mask": np.ones_like(token_ids)}
    sentiment = tf.data.Dataset.from_tensor_slices((x, token_ids[:, 3] % 2)).batch(4)
    pos = tf.data.Dataset.from_tensor_slices((x, token_ids % 4)).batch(4)
    mixed = multitask_dataset({"sentiment": sentiment, "pos": pos}, seed=0)
    model.compile(optimizer=keras.optimizers.Adam(1e-2))
    history = model.fit(mixed, epochs=4, verbose=0).history
    assert set(history) == {
        "loss",
        "sentiment_loss",
        "sentiment_accuracy",
        "pos_loss",
        "pos_accuracy",
        "language_model_loss",
        "clm_accuracy",
        "clm_perplexity",
    }
    assert history["loss"][-1] < history["loss"][0]
    assert history["pos_loss"][-1] < history["pos_loss"][0]
    # Loss weights are variables: a new value takes effect in the compiled step.
    model.set_loss_weight("sentiment", 0.0)
    model.set_loss_weight("pos", 0.0)
    model.set_loss_weight("language_model", 0.0)
    assert model.evaluate(mixed, verbose=0, return_dict=True)["loss"] == 0.0


def test_masked_lm_fits_from_a_masker_pipeline():
    model = _model("masked", causal=False)
    masker = MaskedLMMasker(
        50, mask_token_id=4, special_token_ids=[0, 2, 3], max_selections=3, seed=0
    )
    labels = {"sentiment": CLASS_LABELS, "pos": TAG_LABELS}
    batches = with_masked_language_model_inputs(
        tf.data.Dataset.from_tensors((encoder_batch(), labels)).repeat(2), masker
    )
    model.compile(optimizer=keras.optimizers.Adam(1e-2), run_eagerly=True)
    history = model.fit(batches, epochs=2, verbose=0).history
    assert {"language_model_loss", "mlm_accuracy", "mlm_perplexity"} <= set(history)


def test_config_and_keras_file_round_trip(tmp_path):
    model = _model("causal", loss_weights={"pos": 0.3}, language_model_weight=0.5)
    model.set_loss_weight("language_model", 0.125)
    x = encoder_batch()
    config = model.get_config()
    assert config["loss_weights"] == {"sentiment": 1.0, "pos": 0.3}
    assert "encoder" not in config["language_model"]["config"]
    rebuilt = MultitaskModel.from_config(config)
    assert rebuilt.language_model.encoder is rebuilt.encoder
    assert rebuilt.loss_weight("language_model") == 0.125
    assert rebuilt.tasks == ["sentiment", "pos"]
    restored = save_and_load(model, tmp_path)
    assert restored.language_model.encoder is restored.encoder
    assert restored.loss_weight("pos") == pytest.approx(0.3)
    for task in ("sentiment", "pos"):
        np.testing.assert_allclose(as_numpy(restored(x)[task]), as_numpy(model(x)[task]), atol=1e-5)
    # The shared encoder's weights are counted once.
    ids = [id(w) for w in model.trainable_weights]
    assert len(ids) == len(set(ids))


def test_bad_arguments_and_inputs_are_errors():
    encoder = tiny_encoder(causal=True)
    head = ClassificationHead(2)
    with pytest.raises(ValueError, match=r"heads must be a non-empty dict"):
        MultitaskModel(encoder, {})
    with pytest.raises(ValueError, match=r"loss_weights names unknown task\(s\) \['ner'\]"):
        MultitaskModel(encoder, {"sst2": head}, loss_weights={"ner": 1.0})
    with pytest.raises(
        ValueError,
        match=r"loss weight of 'sst2' must be a finite number >= 0; "
        r"received -1.0",
    ):
        MultitaskModel(encoder, {"sst2": head}, loss_weights={"sst2": -1.0})
    with pytest.raises(ValueError, match=r"loss weight of 'language_model'"):
        MultitaskModel(
            encoder,
            {"sst2": head},
            language_model=CausalLanguageModel(encoder),
            language_model_weight=-0.5,
        )
    with pytest.raises(ValueError, match=r"holds a different encoder"):
        MultitaskModel(
            encoder, {"sst2": head}, language_model=CausalLanguageModel(tiny_encoder(causal=True))
        )
    with pytest.raises(ValueError, match=r"'language_model' is reserved"):
        MultitaskModel(encoder, {"language_model": head})
    with pytest.raises(ValueError, match=r"must be a PretrainingObjective"):
        MultitaskModel(encoder, {"sst2": head}, language_model=head)
    model = _model()
    x = encoder_batch()
    outputs = model(x)
    with pytest.raises(ValueError, match=r"y names unknown task\(s\) \['ner'\]"):
        model.compute_loss(x=x, y={"ner": CLASS_LABELS}, y_pred=outputs)
    with pytest.raises(ValueError, match=r"labels of task 'pos' must have rank 2"):
        model.compute_loss(x=x, y={"pos": CLASS_LABELS}, y_pred=outputs)
    with pytest.raises(ValueError, match=r"expects y as a dict"):
        model.compute_loss(x=x, y=CLASS_LABELS, y_pred=outputs)
    with pytest.raises(
        ValueError,
        match=r"no loss weight named 'language_model'; expected one "
        r"of \['sentiment', 'pos'\]",
    ):
        model.set_loss_weight("language_model", 1.0)
    with pytest.raises(ValueError, match=r"must be a finite number >= 0; received nan"):
        model.set_loss_weight("pos", float("nan"))
    with pytest.raises(ValueError, match=r"needs x\['padding_mask'\]"):
        model({"token_ids": x["token_ids"]})
    assert ops.convert_to_numpy(model.loss_weight("pos")) == 1.0


def test_model_contract():
    model = _model("causal", loss_weights={"sentiment": 1.0, "pos": 0.3}, language_model_weight=0.5)
    labels = {"sentiment": CLASS_LABELS, "pos": TAG_LABELS}
    run_model_test(
        model, encoder_batch(), labels, zero_gradient_weights=("pooler/kernel", "pooler/bias")
    )


def test_task_model_is_one_head_on_the_shared_encoder():
    model = _model()
    x = encoder_batch()
    sentiment = model.task_model("sentiment")
    # The same variables, not copies: the view's logits are the model's, now and after a change.
    np.testing.assert_allclose(as_numpy(sentiment(x)), as_numpy(model(x)["sentiment"]), atol=1e-6)
    assert {id(v) for v in sentiment.weights} <= {id(v) for v in model.weights}
    assert tuple(model.task_model("pos")(x).shape)[-1] == 4
    with pytest.raises(ValueError, match="no head named 'ner'"):
        model.task_model("ner")
