import keras
import numpy as np
import pytest
from keras import ops

import kbert.tasks.ner as evaluation
from kbert.data.span_features import span_features
from kbert.data.token_classification_features import token_classification_features
from kbert.metrics.entity_metrics import bio_to_entities, entity_scores, repair_bio, token_accuracy
from kbert.models import Encoder
from kbert.models.span_classifier import SpanClassifier
from kbert.models.token_classifier import TokenClassifier
from tests.toy_ner import TAG_NAMES, TYPES, toy_tokenizer

SENTENCES = [
    ["Peter", "Blackburn", "rejects", "EU", "lamb"],
    ["German", "call"],
    [
        "EU",
        "rejects",
        "British",
        "lamb",
        ".",
        "Peter",
        "Blackburn",
        "call",
        "to",
        "boycott",
        "German",
        "lamb",
    ],
]  # the last one is longer than a 16-token window
TAGS = [
    ["B-PER", "I-PER", "O", "B-ORG", "O"],
    ["B-MISC", "O"],
    ["B-ORG", "O", "B-MISC", "O", "O", "B-PER", "I-PER", "O", "O", "O", "B-MISC", "O"],
]
NUM_GOLD = 7


@pytest.fixture(scope="module")
def tokenizer():
    return toy_tokenizer()


@pytest.fixture(scope="module")
def tagger():
    keras.utils.set_random_seed(0)
    model = TokenClassifier(Encoder.from_preset("tiny"), len(TAG_NAMES))
    # Spread the predictions over the tags, I- tags included, so repairs happen.
    model.get_layer("logits").bias.assign(np.random.default_rng(0).normal(size=7) * 0.3)
    return model


@pytest.fixture(scope="module")
def span_model():
    keras.utils.set_random_seed(0)
    model = SpanClassifier(
        Encoder.from_preset("tiny"), len(TYPES), projection_dim=4, hidden_units=8
    )
    model.get_layer("logits").bias.assign([-1.0, 0.5, 0.3, 0.2])  # some spans are entities
    return model


def _token_features(tokenizer):
    return token_classification_features(
        SENTENCES, tokenizer, tags=TAGS, tag_names=TAG_NAMES, sequence_length=16
    )


def _span_features(tokenizer, max_span_length=3):
    entities = [set(bio_to_entities(tags)) for tags in TAGS]
    return span_features(
        token_classification_features(SENTENCES, tokenizer, sequence_length=16),
        max_span_length=max_span_length,
        entities=entities,
        type_names=TYPES,
    )


def test_evaluate_tagger_scores_the_repaired_word_tags(tokenizer, tagger):
    features = _token_features(tokenizer)
    assert np.bincount(features["sentence_index"])[2] > 1
    result = evaluation.evaluate_tagger(tagger, features, TAGS, TAG_NAMES, batch_size=2)
    assert sorted(result) == ["entity", "predicted_tags", "repaired_tags", "token_accuracy"]
    assert result["entity"]["num_gold"] == NUM_GOLD
    assert [len(tags) for tags in result["predicted_tags"]] == [len(words) for words in SENTENCES]
    raw = [[TAG_NAMES[i] for i in ids] for ids in tagger.predict_word_tags(features)]
    assert result["predicted_tags"] == [repair_bio(tags) for tags in raw]
    assert result["repaired_tags"] > 0  # the biased head predicts invalid I- tags
    assert result["repaired_tags"] == sum(
        a != b for tags in raw for a, b in zip(tags, repair_bio(tags), strict=True)
    )
    assert result["entity"] == entity_scores(TAGS, result["predicted_tags"])
    assert result["token_accuracy"] == token_accuracy(TAGS, result["predicted_tags"])


@pytest.mark.parametrize(
    "repair, expected, repaired",
    [
        ("begin", [["B-PER", "I-PER", "O", "B-ORG", "O"], ["B-MISC", "O"]], 2),
        ("drop", [["O", "O", "O", "O", "O"], ["B-MISC", "O"]], 3),
    ],
)
def test_invalid_i_tags_are_repaired_and_counted(
    tokenizer, tagger, monkeypatch, repair, expected, repaired
):
    calls = []

    def fixed(self, features, batch_size=64, combine="first", num_sentences=None, tag_names=None):
        calls.append((combine, num_sentences))
        return [[2, 2, 0, 4, 0], [5, 0]]  # I-PER I-PER O I-ORG O ; B-MISC O

    monkeypatch.setattr(TokenClassifier, "predict_word_tags", fixed)
    features = token_classification_features(SENTENCES[:2], tokenizer, sequence_length=16)
    result = evaluation.evaluate_tagger(
        tagger, features, TAGS[:2], TAG_NAMES, combine="mean", repair=repair
    )
    assert calls == [("mean", 2)]
    assert result["predicted_tags"] == expected
    assert result["repaired_tags"] == repaired
    assert result["entity"]["num_gold"] == 3
    assert result["entity"]["num_correct"] == (3 if repair == "begin" else 1)


def test_predict_span_probabilities_matches_the_untrimmed_model(tokenizer, span_model):
    features = _span_features(tokenizer)
    probabilities = evaluation.predict_span_probabilities(span_model, features, batch_size=2)
    assert probabilities.shape == (*features["span_starts"].shape, 1 + len(TYPES))
    full = ops.convert_to_numpy(
        ops.softmax(
            span_model({key: features[key] for key in span_model.input}, training=False), axis=-1
        )
    )
    real = features["span_mask"] == 1
    np.testing.assert_allclose(probabilities[real], full[real], atol=1e-5)
    np.testing.assert_allclose(probabilities[real].sum(-1), 1.0, atol=1e-5)


def test_evaluate_span_classifier_reads_gold_tags_or_entities(tokenizer, span_model):
    features = _span_features(tokenizer)
    from_tags = evaluation.evaluate_span_classifier(span_model, features, TAGS, TYPES)
    assert sorted(from_tags) == ["entity", "predicted_entities"]
    assert from_tags["entity"]["num_gold"] == NUM_GOLD
    assert len(from_tags["predicted_entities"]) == len(SENTENCES)
    assert from_tags["entity"]["num_predicted"] == sum(map(len, from_tags["predicted_entities"]))
    assert from_tags["entity"]["num_predicted"] > 0
    gold_entities = [set(bio_to_entities(tags)) for tags in TAGS]
    from_entities = evaluation.evaluate_span_classifier(span_model, features, gold_entities, TYPES)
    assert from_entities == from_tags
    for entities in from_tags["predicted_entities"]:  # flat: no two entities overlap
        words = [w for start, end, _ in entities for w in range(start, end)]
        assert len(words) == len(set(words))


def test_evaluate_span_classifier_scores_decoded_entities(tokenizer, span_model, monkeypatch):
    features = _span_features(tokenizer, max_span_length=2)
    starts, ends = features["span_word_starts"], features["span_word_ends"]
    probabilities = np.zeros((*starts.shape, 4))
    probabilities[..., 0] = 1.0
    wanted = {(0, 0, 2): (1, 0.9), (0, 1, 2): (2, 0.8), (0, 3, 4): (2, 0.9), (1, 0, 1): (3, 0.6)}
    for row, column in zip(*np.nonzero(features["span_mask"]), strict=True):
        key = (features["sentence_index"][row], starts[row, column], ends[row, column])
        if key in wanted:
            best, p = wanted[key]
            probabilities[row, column] = (1 - p) / 3
            probabilities[row, column, best] = p
    monkeypatch.setattr(evaluation, "predict_span_probabilities", lambda *args: probabilities)
    flat = evaluation.evaluate_span_classifier(span_model, features, TAGS, TYPES)
    assert flat["predicted_entities"] == [{(0, 2, "PER"), (3, 4, "ORG")}, {(0, 1, "MISC")}, set()]
    assert (
        flat["entity"]["num_gold"],
        flat["entity"]["num_predicted"],
        flat["entity"]["num_correct"],
    ) == (NUM_GOLD, 3, 3)
    nested = evaluation.evaluate_span_classifier(span_model, features, TAGS, TYPES, nested=True)
    assert nested["predicted_entities"][0] == {(0, 2, "PER"), (1, 2, "ORG"), (3, 4, "ORG")}
    assert nested["entity"]["num_predicted"] == 4


def test_predict_span_probabilities_when_spans_and_tokens_are_equally_wide(tokenizer, span_model):
    # 4 one-subword words: 9 spans of up to 3 words in 6 tokens; 3 two-subword words: 6 spans
    # in 8 tokens. With rows of 9 tokens, both arrays are 9 wide.
    features = span_features(
        token_classification_features(
            [["EU", "rejects", "lamb", "EU"], ["Blackburn"] * 3], tokenizer, sequence_length=9
        ),
        max_span_length=3,
    )
    assert features["span_starts"].shape == features["token_ids"].shape == (2, 9)
    probabilities = evaluation.predict_span_probabilities(span_model, features, batch_size=1)
    full = ops.convert_to_numpy(
        ops.softmax(
            span_model({key: features[key] for key in span_model.input}, training=False), axis=-1
        )
    )
    real = features["span_mask"] == 1
    np.testing.assert_allclose(probabilities[real], full[real], atol=1e-5)
