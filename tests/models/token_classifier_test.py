import keras
import numpy as np
import pytest
from keras import ops

from kbert.data.token_classification_features import IGNORE_INDEX, token_classification_features
from kbert.metrics.entity_metrics import repair_bio
from kbert.models import Encoder
from kbert.models.token_classifier import TokenClassifier
from kbert.train.feature_fine_tuning import fine_tune_on_features
from kbert.train.training_settings import TrainingSettings
from tests.model_test_case import run_model_test
from tests.toy_ner import TAG_NAMES, VOCABULARY, toy_tokenizer

# Chunks of words with their tags; a sentence is a random run of chunks.
CHUNKS = [
    (["Peter", "Blackburn"], ["B-PER", "I-PER"]),
    (["EU"], ["B-ORG"]),
    (["German"], ["B-MISC"]),
    (["British"], ["B-MISC"]),
    (["rejects"], ["O"]),
    (["call", "to", "boycott"], ["O", "O", "O"]),
    (["lamb", "."], ["O", "O"]),
]
INPUT_KEYS = ("token_ids", "segment_ids", "padding_mask")


@pytest.fixture(scope="module")
def tokenizer():
    return toy_tokenizer()


def _sentences(count, chunks=4, seed=0):
    rng = np.random.default_rng(seed)
    sentences, tags = [], []
    for _ in range(count):
        picked = [CHUNKS[i] for i in rng.integers(0, len(CHUNKS), size=chunks)]
        sentences.append([w for words, _ in picked for w in words])
        tags.append([t for _, chunk_tags in picked for t in chunk_tags])
    return sentences, tags


def _features(tokenizer, count=16, chunks=4, seed=0, **kwargs):
    sentences, tags = _sentences(count, chunks, seed)
    features = token_classification_features(
        sentences, tokenizer, tags=tags, tag_names=TAG_NAMES, sequence_length=16, **kwargs
    )
    return sentences, tags, features


def _inputs(features):
    return {key: features[key] for key in INPUT_KEYS}


def _loss(model, features):
    loss = model.default_loss()
    return float(loss(features["labels"], model(_inputs(features), training=False)))


def test_output_shape_and_float32_logits_under_mixed_precision(tokenizer):
    _, _, features = _features(tokenizer, count=3)
    for crf in (False, True):
        tagger = TokenClassifier(Encoder.from_preset("tiny", dtype="mixed_bfloat16"), 7, crf=crf)
        logits = tagger(_inputs(features))
        assert tuple(logits.shape) == (3, 16, 7)
        assert logits.dtype == "float32"


def test_head_layers_are_dropout_dense_and_the_crf():
    tagger = TokenClassifier(Encoder.from_preset("tiny"), 3, crf=True)
    assert [type(layer).__name__ for layer in tagger.head_layers()] == ["Dropout", "Dense", "CRF"]
    assert tagger.crf_layer is tagger.get_layer("crf")


@pytest.mark.parametrize("crf", [False, True])
def test_the_loss_ignores_positions_labelled_minus_100(tokenizer, crf):
    _, _, features = _features(tokenizer, count=4)
    tagger = TokenClassifier(Encoder.from_preset("tiny"), 7, crf=crf)
    labels = features["labels"]
    logits = np.random.default_rng(0).normal(size=(*labels.shape, 7)).astype("float32")
    loss = tagger.default_loss()
    base = float(loss(labels, logits))
    changed = np.where((labels == IGNORE_INDEX)[..., None], logits * 10 + 3, logits)
    assert float(loss(labels, changed)) == pytest.approx(base, rel=1e-5)
    # ...and does see the labelled ones.
    labelled = np.where((labels != IGNORE_INDEX)[..., None], logits * 10 + 3, logits)
    assert float(loss(labels, labelled)) != pytest.approx(base, rel=1e-3)
    if not crf:  # the mean cross-entropy over labelled positions only
        log_p = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
        keep = labels != IGNORE_INDEX
        picked = np.take_along_axis(log_p, np.where(keep, labels, 0)[..., None], -1)[..., 0]
        assert base == pytest.approx(-picked[keep].mean(), rel=1e-5)


@pytest.mark.parametrize("crf", [False, True])
def test_fine_tuning_on_features_reduces_the_loss(tokenizer, crf):
    keras.utils.set_random_seed(0)
    _, _, features = _features(tokenizer, count=16)
    # One block: the trace of the training step is most of the time, the steps are cheap.
    tagger = TokenClassifier(Encoder.from_preset("tiny", num_layers=1), 7, crf=crf)
    before = _loss(tagger, features)
    history, seconds = fine_tune_on_features(
        tagger,
        features,
        "labels",
        settings=TrainingSettings(epochs=3, batch_size=8, learning_rate=1e-2, verbose=0),
    )
    after = _loss(tagger, features)
    assert len(history.history["loss"]) == 3 and seconds > 0
    assert after < 0.85 * before, (before, after)


def _reference_word_tags(tagger, features, num_sentences):
    """Softmax argmax at the owning row's first subword of each word, from untrimmed rows."""
    logits = ops.convert_to_numpy(tagger(_inputs(features), training=False))
    tags = [{} for _ in range(num_sentences)]
    for row, position in zip(*np.nonzero(features["first_subword"]), strict=True):
        sentence = features["sentence_index"][row]
        tags[sentence][int(features["word_index"][row, position])] = int(
            logits[row, position].argmax()
        )
    return [[sentence[w] for w in range(len(sentence))] for sentence in tags]


def test_predict_word_tags_gives_one_tag_per_word_also_past_the_window(tokenizer):
    keras.utils.set_random_seed(1)
    sentences, _, features = _features(tokenizer, count=5, chunks=3)
    long_words, _ = _sentences(1, chunks=12, seed=3)
    sentences += long_words
    features = token_classification_features(sentences, tokenizer, sequence_length=16)
    assert (features["sentence_index"] == 5).sum() > 1  # the long sentence spans several rows
    tagger = TokenClassifier(Encoder.from_preset("tiny"), 7)
    tagger.get_layer("logits").bias.assign(np.random.default_rng(0).normal(size=7) * 0.5)
    predicted = tagger.predict_word_tags(features, batch_size=4)
    assert [len(tags) for tags in predicted] == [len(words) for words in sentences]
    assert predicted == _reference_word_tags(tagger, features, len(sentences))
    mean = tagger.predict_word_tags(features, batch_size=4, combine="mean")
    assert [len(tags) for tags in mean] == [len(words) for words in sentences]
    assert len(tagger.predict_word_tags(features, num_sentences=8)) == 8


def test_crf_decoding_follows_the_transitions_across_windows(tokenizer):
    sentences, _ = _sentences(3, chunks=10, seed=4)
    features = token_classification_features(sentences, tokenizer, sequence_length=16)
    assert np.bincount(features["sentence_index"]).min() > 1
    tagger = TokenClassifier(Encoder.from_preset("tiny"), 7, crf=True)
    bias = np.zeros(7, "float32")
    bias[2] = 5.0  # every token's emissions favour I-PER
    tagger.get_layer("logits").bias.assign(bias)
    # Forbid what IOB2 forbids: an I-X first, or after anything but B-X / I-X.
    transitions = np.zeros((7, 7), "float32")
    start = np.zeros(7, "float32")
    for j, name in enumerate(TAG_NAMES):
        if name.startswith("I-"):
            start[j] = -1e4
            for i, previous in enumerate(TAG_NAMES):
                if previous[2:] != name[2:]:
                    transitions[i, j] = -1e4
    tagger.crf_layer.transitions.assign(transitions)
    tagger.crf_layer.start_transitions.assign(start)
    predicted = tagger.predict_word_tags(features)
    assert [len(tags) for tags in predicted] == [len(words) for words in sentences]
    names = [[TAG_NAMES[i] for i in tags] for tags in predicted]
    for tags in names:
        assert repair_bio(tags) == tags, tags  # valid IOB2 over the whole sentence
    assert sum(tag == "I-PER" for tags in names for tag in tags) > len(sentences)


@pytest.mark.parametrize("crf", [False, True])
def test_save_and_load_give_the_same_outputs(tokenizer, crf, tmp_path):
    keras.utils.set_random_seed(2)
    sentences, _, features = _features(tokenizer, count=4, chunks=6)
    tagger = TokenClassifier(Encoder.from_preset("tiny"), 7, dropout=0.2, crf=crf)
    tagger.get_layer("logits").bias.assign(np.random.default_rng(1).normal(size=7))
    if crf:
        tagger.crf_layer.transitions.assign(np.random.default_rng(2).normal(size=(7, 7)) * 3)
    tagger.compile(optimizer="adam", loss=tagger.default_loss())
    path = tmp_path / "tagger.keras"
    tagger.save(path)
    # A compiled CRFLoss holds the model's CRF layer and cannot be rebuilt from a config.
    restored = keras.saving.load_model(path, compile=not crf)
    assert isinstance(restored, TokenClassifier)
    assert (restored.num_tags, restored.dropout, restored.crf) == (7, 0.2, crf)
    np.testing.assert_allclose(
        ops.convert_to_numpy(restored(_inputs(features))),
        ops.convert_to_numpy(tagger(_inputs(features))),
        atol=1e-5,
    )
    if crf:
        np.testing.assert_array_equal(
            restored.crf_layer.transitions.numpy(), tagger.crf_layer.transitions.numpy()
        )
    assert restored.predict_word_tags(features) == tagger.predict_word_tags(features)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"num_tags": 1}, "num_tags must be an int >= 2; received 1"),
        ({"num_tags": True}, "num_tags must be an int >= 2; received True"),
        ({"num_tags": 3.0}, "num_tags must be an int >= 2; received 3.0"),
        ({"num_tags": 3, "dropout": 1.0}, r"dropout must be in \[0, 1\); received 1.0"),
        ({"num_tags": 3, "dropout": -0.1}, r"dropout must be in \[0, 1\); received -0.1"),
    ],
)
def test_bad_arguments_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        TokenClassifier(Encoder.from_preset("tiny"), **kwargs)


def test_constrained_crf_decoding_gives_valid_bio_even_against_the_learned_scores(tokenizer):
    keras.utils.set_random_seed(3)
    sentences = [["eu", "rejects", "german", "call"] * 6 for _ in range(3)]
    features = token_classification_features(sentences, tokenizer, sequence_length=16)
    tagger = TokenClassifier(
        Encoder.from_preset("tiny", vocabulary_size=len(VOCABULARY), num_layers=1),
        len(TAG_NAMES),
        crf=True,
    )
    tagger.predict_word_tags(features)  # builds the CRF
    # Learned scores that prefer exactly what IOB2 forbids: O -> I-PER, and I-PER first.
    transitions = np.zeros((len(TAG_NAMES), len(TAG_NAMES)), "float32")
    i_per = TAG_NAMES.index("I-PER")
    transitions[TAG_NAMES.index("O"), i_per] = 50.0
    tagger.crf_layer.transitions.assign(transitions)
    tagger.crf_layer.start_transitions.assign(np.eye(len(TAG_NAMES), dtype="float32")[i_per] * 50.0)
    free = [[TAG_NAMES[i] for i in tags] for tags in tagger.predict_word_tags(features)]
    assert any(repair_bio(tags) != tags for tags in free)
    constrained = [
        [TAG_NAMES[i] for i in tags]
        for tags in tagger.predict_word_tags(features, tag_names=TAG_NAMES)
    ]
    assert all(repair_bio(tags) == tags for tags in constrained)


@pytest.mark.parametrize("crf", [False, True])
def test_model_contract_and_export(tokenizer, crf):
    _, _, features = _features(tokenizer, count=4)
    keras.utils.set_random_seed(0)
    tagger = TokenClassifier(Encoder.from_preset("tiny"), len(TAG_NAMES), crf=crf)
    run_model_test(
        tagger,
        _inputs(features),
        features["labels"],
        zero_gradient_weights=("pooler/kernel", "pooler/bias"),
        export={
            "tokenizer": tokenizer,
            "label_names": TAG_NAMES,
            "sequence_length": 16,
            "signatures": {"serving_default", "tag", "embed", "token_ids"},
            "call": {"text": ["Peter Blackburn rejects EU lamb .", "German call"]},
        },
    )
