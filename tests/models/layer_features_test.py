import keras
import numpy as np
import pytest

from kbert.models import Encoder, extract_layer_features
from kbert.text import BertPreprocessor, WordPieceTokenizer
from tests.toy_vocabularies import QUESTION_VOCABULARY

VOCABULARY = QUESTION_VOCABULARY + ["a", "money", "?"]
# Mixed lengths, out of length order, so sorting and restoring the order is exercised.
TEXTS = [
    "what is the river bank ?",
    "who ?",
    "what is it",
    "a bank",
    "who wrote it ?",
    "the money",
    "what",
    "what is the money in the bank ?",
]
PAIRS = ["the bank", "river", "who wrote a", "?", "it is money", "a", "what is", "bank"]
SEQUENCE_LENGTH = 12


@pytest.fixture(scope="module")
def encoder():
    keras.utils.set_random_seed(0)
    return Encoder.from_preset("tiny")  # dropout 0.1: extraction must switch it off


@pytest.fixture(scope="module")
def preprocessor():
    return BertPreprocessor(WordPieceTokenizer(VOCABULARY), sequence_length=SEQUENCE_LENGTH)


def _direct(encoder, inputs, pooling):
    """Every layer pooled by hand from one full-length padded batch, in inference mode."""
    states = np.stack(
        [np.asarray(h) for h in encoder(inputs, training=False)["hidden_states"]], axis=1
    )  # (batch, layers, seq, hidden)
    if pooling == "cls":
        return states[:, :, 0]
    mask = np.asarray(inputs["padding_mask"], "float32")[:, None, :, None]
    return (states * mask).sum(axis=2) / mask.sum(axis=2)


@pytest.mark.parametrize("pooling", ["cls", "mean"])
def test_equals_the_encoder_on_full_padded_batches(encoder, preprocessor, pooling):
    features = extract_layer_features(encoder, preprocessor, TEXTS, pooling=pooling, batch_size=3)
    assert features.shape == (len(TEXTS), 3, 16) and features.dtype == np.float32
    np.testing.assert_allclose(features, _direct(encoder, preprocessor(TEXTS), pooling), atol=1e-5)


def test_order_is_preserved_whatever_the_batching(encoder, preprocessor):
    # Each text alone, unpadded: the reference row for that text.
    alone = []
    for text in TEXTS:
        inputs = preprocessor([text])
        length = int(np.asarray(inputs["padding_mask"]).sum())
        alone.append(_direct(encoder, {k: v[:, :length] for k, v in inputs.items()}, "cls"))
    alone = np.concatenate(alone)
    for batch_size in (1, 5):
        features = extract_layer_features(encoder, preprocessor, TEXTS, batch_size=batch_size)
        np.testing.assert_allclose(features, alone, atol=1e-5)
    assert not np.allclose(alone[0], alone[1])  # different texts, different rows


def test_pairs_are_packed_as_one_input(encoder, preprocessor):
    features = extract_layer_features(
        encoder, preprocessor, TEXTS, text_pairs=PAIRS, pooling="mean", batch_size=4
    )
    np.testing.assert_allclose(
        features, _direct(encoder, preprocessor((TEXTS, PAIRS)), "mean"), atol=1e-5
    )
    alone = extract_layer_features(encoder, preprocessor, TEXTS, pooling="mean")
    assert not np.allclose(features, alone)


def test_concat_pooling_is_three_times_wider(encoder, preprocessor):
    features = extract_layer_features(encoder, preprocessor, TEXTS[:2], pooling="concat")
    assert features.shape == (2, 3, 48)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"texts": []}, "texts must hold at least one text; received 0"),
        ({"texts": "what is it"}, "texts must be a list of strings; received one str"),
        (
            {"text_pairs": PAIRS[:3]},
            r"text_pairs must have one text per entry of texts \(8\); "
            "received 3",
        ),
        ({"pooling": "avg"}, "pooling must be one of .* received 'avg'"),
        ({"batch_size": 0}, "batch_size must be a positive int; received 0"),
    ],
)
def test_argument_errors(encoder, preprocessor, kwargs, message):
    kwargs = {"texts": TEXTS, **kwargs}
    with pytest.raises(ValueError, match=message):
        extract_layer_features(encoder, preprocessor, **kwargs)
