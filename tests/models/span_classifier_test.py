import keras
import numpy as np
import pytest
from keras import ops

from kbert.data.span_features import span_features
from kbert.data.token_classification_features import IGNORE_INDEX, token_classification_features
from kbert.metrics.entity_metrics import bio_to_entities
from kbert.models import Encoder
from kbert.models.span_classifier import SpanClassifier
from kbert.train.feature_fine_tuning import fine_tune_on_features
from kbert.train.training_settings import TrainingSettings
from tests.model_test_case import run_model_test
from tests.toy_ner import TYPES, toy_tokenizer

CHUNKS = [
    (["Peter", "Blackburn"], ["B-PER", "I-PER"]),
    (["EU"], ["B-ORG"]),
    (["German"], ["B-MISC"]),
    (["British", "lamb"], ["B-MISC", "O"]),
    (["rejects"], ["O"]),
    (["call", "to", "boycott"], ["O", "O", "O"]),
]
INPUT_KEYS = ("token_ids", "segment_ids", "padding_mask", "span_starts", "span_ends")


@pytest.fixture(scope="module")
def tokenizer():
    return toy_tokenizer()


def _features(tokenizer, count=8, chunks=4, seed=0):
    rng = np.random.default_rng(seed)
    sentences, entities = [], []
    for _ in range(count):
        picked = [CHUNKS[i] for i in rng.integers(0, len(CHUNKS), size=chunks)]
        sentences.append([w for words, _ in picked for w in words])
        entities.append(set(bio_to_entities([t for _, tags in picked for t in tags])))
    features = token_classification_features(sentences, tokenizer, sequence_length=16)
    spans = span_features(features, max_span_length=3, entities=entities, type_names=TYPES)
    # Span arrays of another width than the tokens' (see feature_batches_test for that case).
    assert spans["span_starts"].shape[1] != 16
    return spans


def _inputs(features):
    return {key: features[key] for key in INPUT_KEYS}


def _model(pooling="mean", **kwargs):
    return SpanClassifier(
        Encoder.from_preset("tiny", **kwargs), 3, projection_dim=4, hidden_units=8, pooling=pooling
    )


@pytest.mark.parametrize("pooling", ["mean", "attention"])
def test_logits_are_float32_per_span_under_mixed_precision(tokenizer, pooling):
    features = _features(tokenizer, count=3)
    model = _model(pooling, dtype="mixed_bfloat16")
    logits = model(_inputs(features))
    assert tuple(logits.shape) == (3, features["span_starts"].shape[1], 4)
    assert logits.dtype == "float32"
    assert np.isfinite(ops.convert_to_numpy(logits)).all()


def test_the_loss_ignores_padding_spans(tokenizer):
    features = _features(tokenizer, count=4)
    labels = features["span_labels"]
    assert (labels == IGNORE_INDEX).any()
    logits = np.random.default_rng(0).normal(size=(*labels.shape, 4)).astype("float32")
    loss = _model().default_loss()
    changed = np.where((labels == IGNORE_INDEX)[..., None], logits * 10, logits)
    assert float(loss(labels, changed)) == pytest.approx(float(loss(labels, logits)), rel=1e-5)


def test_fine_tuning_on_features_reduces_the_loss(tokenizer):
    keras.utils.set_random_seed(0)
    features = _features(tokenizer, count=16)
    model = _model("attention", num_layers=1)  # tracing the training step dominates the time

    def loss():
        return float(
            model.default_loss()(features["span_labels"], model(_inputs(features), training=False))
        )

    before = loss()
    history, _ = fine_tune_on_features(
        model,
        features,
        "span_labels",
        settings=TrainingSettings(epochs=4, batch_size=8, learning_rate=3e-2, verbose=0),
        extra_length_keys=("span_mask",),
    )
    assert len(history.history["loss"]) == 4
    after = loss()
    assert after < 0.7 * before, (before, after)


def test_save_and_load_give_the_same_outputs(tokenizer, tmp_path):
    keras.utils.set_random_seed(1)
    features = _features(tokenizer, count=3)
    model = _model("attention")
    model.get_layer("logits").bias.assign(np.random.default_rng(0).normal(size=4))
    path = tmp_path / "spans.keras"
    model.save(path)
    restored = keras.saving.load_model(path)
    assert isinstance(restored, SpanClassifier)
    assert (
        restored.num_types,
        restored.projection_dim,
        restored.hidden_units,
        restored.pooling,
    ) == (3, 4, 8, "attention")
    np.testing.assert_allclose(
        ops.convert_to_numpy(restored(_inputs(features))),
        ops.convert_to_numpy(model(_inputs(features))),
        atol=1e-5,
    )


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"num_types": 0}, "num_types must be an int >= 1; received 0"),
        ({"num_types": True}, "num_types must be an int >= 1; received True"),
        ({"num_types": 2, "pooling": "max"}, "pooling must be one of"),
        ({"num_types": 2, "hidden_units": 0}, "hidden_units must be a positive int; received 0"),
        ({"num_types": 2, "dropout": 1.0}, r"dropout must be in \[0, 1\); received 1.0"),
        (
            {"num_types": 2, "null_probability": 1.0},
            r"null_probability must be in \(0, 1\) or None; received 1.0",
        ),
    ],
)
def test_bad_arguments_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        SpanClassifier(Encoder.from_preset("tiny"), **kwargs)


def test_model_contract(tokenizer):
    features = _features(tokenizer, count=4)
    keras.utils.set_random_seed(0)
    model = _model("attention")
    run_model_test(
        model,
        _inputs(features),
        features["span_labels"],
        # The attention score's bias adds one constant to every position's score before a
        # softmax, which a constant does not change: its gradient is zero up to rounding.
        zero_gradient_weights=("pooler/kernel", "pooler/bias", "attention_score/bias"),
    )


@pytest.mark.parametrize("null_probability", [0.98, None])
def test_the_softmax_starts_at_the_null_prior(tokenizer, null_probability):
    # The kernel starts near zero (stddev 0.02), so the bias sets the first probabilities.
    keras.utils.set_random_seed(0)
    model = SpanClassifier(
        Encoder.from_preset("tiny"),
        3,
        projection_dim=4,
        hidden_units=8,
        null_probability=null_probability,
    )
    probabilities = ops.convert_to_numpy(
        ops.softmax(model(_inputs(_features(tokenizer, count=2)), training=False))
    )
    expected = [0.98] + [0.02 / 3] * 3 if null_probability else [0.25] * 4
    np.testing.assert_allclose(probabilities.mean(axis=(0, 1)), expected, atol=0.01)
    assert model.get_config()["null_probability"] == null_probability
