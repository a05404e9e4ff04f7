import numpy as np
import pytest

from kbert.data.token_classification_features import (
    continuation_tags,
    token_classification_features,
)
from kbert.text.word_scores import word_scores
from tests.toy_ner import TAG_NAMES, toy_tokenizer
from tests.toy_ner import WORDS as TOY_WORDS

# Words of 1, 2 and 4 subwords ("eu-ger." is pre-tokenized into eu - ger .).
WORDS = TOY_WORDS + ["eu-ger."]


@pytest.fixture(scope="module")
def tokenizer():
    return toy_tokenizer(["-"])  # "-" for "eu-ger."


def _pieces(tokenizer, word):
    return tokenizer([word]).to_list()[0] or [tokenizer.unknown_token_id]


def _long_sentences(count=3, words=25, seed=0):
    rng = np.random.default_rng(seed)
    sentences = [list(rng.choice(WORDS, size=words - 7 * index)) for index in range(count)]
    tags = [list(rng.choice(TAG_NAMES, size=len(sentence))) for sentence in sentences]
    return sentences, tags


def test_first_subwords_carry_the_labels(tokenizer):
    features = token_classification_features(
        [["EU", "rejects", "German"], ["Peter", "Blackburn"]],
        tokenizer,
        tags=[["B-ORG", "O", "B-MISC"], ["B-PER", "I-PER"]],
        tag_names=TAG_NAMES,
        sequence_length=8,
    )
    assert features["token_ids"].tolist() == [[2, 5, 6, 7, 8, 3, 0, 0], [2, 16, 17, 18, 3, 0, 0, 0]]
    assert features["word_index"].tolist() == [
        [-1, 0, 1, 2, 2, -1, -1, -1],
        [-1, 0, 1, 1, -1, -1, -1, -1],
    ]
    assert features["first_subword"].tolist() == [
        [0, 1, 1, 1, 0, 0, 0, 0],
        [0, 1, 1, 0, 0, 0, 0, 0],
    ]
    assert features["owned"].tolist() == [[0, 1, 1, 1, 1, 0, 0, 0], [0, 1, 1, 1, 0, 0, 0, 0]]
    assert features["labels"].tolist() == [
        [-100, 3, 0, 5, -100, -100, -100, -100],
        [-100, 1, 2, -100, -100, -100, -100, -100],
    ]
    assert features["padding_mask"].tolist() == [[1] * 6 + [0] * 2, [1] * 5 + [0] * 3]
    assert features["segment_ids"].tolist() == [[0] * 8] * 2
    assert features["sentence_index"].tolist() == [0, 1]
    for key in (
        "token_ids",
        "word_index",
        "first_subword",
        "owned",
        "labels",
        "padding_mask",
        "segment_ids",
    ):
        assert features[key].dtype == np.int32, key


def test_label_all_subwords_continues_a_b_tag_with_its_i_tag(tokenizer):
    features = token_classification_features(
        [["German", "boycott", "Blackburn", "Blackburn"]],
        tokenizer,
        tags=[["B-MISC", "O", "B-PER", "I-PER"]],
        tag_names=TAG_NAMES,
        sequence_length=10,
        label_all_subwords=True,
    )
    # [CLS] ger ##man boy ##cott black ##burn black ##burn [SEP]
    assert features["labels"].tolist() == [[-100, 5, 6, 0, 0, 1, 2, 2, 2, -100]]


def test_without_tags_there_are_no_labels(tokenizer):
    features = token_classification_features([["EU", "rejects"]], tokenizer, sequence_length=6)
    assert "labels" not in features
    assert features["token_ids"].tolist() == [[2, 5, 6, 3, 0, 0]]


def test_continuation_tags_map_b_to_i_and_keep_the_rest():
    assert continuation_tags(TAG_NAMES) == [0, 2, 2, 4, 4, 6, 6]
    # A B- tag without its I- tag (and tags of another scheme) keep their own id.
    assert continuation_tags(["O", "B-LOC", "B-PER", "I-PER", "NN"]) == [0, 1, 3, 3, 4]


@pytest.mark.parametrize("deleted", ["\u200b", "\x00", "\ufeff"])
def test_a_word_deleted_by_normalization_gets_one_unknown_token(tokenizer, deleted):
    assert tokenizer([deleted]).to_list() == [[]]  # normalization really deletes it
    features = token_classification_features(
        [["EU", deleted, "German"], [deleted, "EU"]],
        tokenizer,
        tags=[["O", "B-PER", "B-MISC"], ["B-ORG", "O"]],
        tag_names=TAG_NAMES,
        sequence_length=8,
    )
    assert features["token_ids"][0, :6].tolist() == [2, 5, 1, 7, 8, 3]
    assert features["word_index"][0, :6].tolist() == [-1, 0, 1, 2, 2, -1]
    assert features["labels"][0, :6].tolist() == [-100, 0, 1, 5, -100, -100]
    assert features["token_ids"][1, :4].tolist() == [2, 1, 5, 3]
    assert features["word_index"][1, :4].tolist() == [-1, 0, 1, -1]
    assert features["labels"][1, :4].tolist() == [-100, 3, 0, -100]


def test_a_word_split_by_pre_tokenization_stays_one_word(tokenizer):
    features = token_classification_features(
        [["eu-ger.", "lamb"]],
        tokenizer,
        tags=[["B-ORG", "O"]],
        tag_names=TAG_NAMES,
        sequence_length=8,
    )
    assert features["token_ids"][0].tolist() == [2, 5, 19, 7, 15, 14, 3, 0]
    assert features["word_index"][0].tolist() == [-1, 0, 0, 0, 0, 1, -1, -1]
    assert features["first_subword"][0].tolist() == [0, 1, 0, 0, 0, 1, 0, 0]


@pytest.mark.parametrize("stride", [None, 0, 3])
def test_a_long_sentence_is_windowed_and_every_word_owned_once(tokenizer, stride):
    sentences, tags = _long_sentences()
    features = token_classification_features(
        sentences, tokenizer, tags=tags, tag_names=TAG_NAMES, sequence_length=8, stride=stride
    )
    rows_per_sentence = np.bincount(features["sentence_index"])
    assert (rows_per_sentence > 1).all()
    tag_ids = [[TAG_NAMES.index(tag) for tag in sentence] for sentence in tags]
    for index, words in enumerate(sentences):
        rows = np.nonzero(features["sentence_index"] == index)[0]
        first = features["first_subword"][rows] == 1
        assert first.sum() == len(words)
        owned_words = features["word_index"][rows][first]
        assert sorted(owned_words.tolist()) == list(range(len(words)))
        # Owned words form a contiguous block per row, and the blocks follow each other.
        assert owned_words.tolist() == list(range(len(words)))
        for row in rows:
            length = features["padding_mask"][row].sum()
            assert length <= 8
            in_row = features["word_index"][row, 1 : length - 1]
            start, end = in_row[0], in_row[-1] + 1
            assert sorted(set(in_row.tolist())) == list(range(start, end))
            expected = [2] + [t for w in words[start:end] for t in _pieces(tokenizer, w)] + [3]
            assert features["token_ids"][row, :length].tolist() == expected
            owned = features["owned"][row] == 1
            assert set(features["word_index"][row][owned].tolist()) == set(
                features["word_index"][row][features["first_subword"][row] == 1].tolist()
            )
            positions = np.nonzero(features["first_subword"][row])[0]
            assert features["labels"][row, positions].tolist() == [
                tag_ids[index][w] for w in features["word_index"][row, positions]
            ]
        if stride is not None and stride > 0:
            # Consecutive windows overlap: some word appears in two rows.
            counts = np.bincount(features["word_index"][rows][features["word_index"][rows] >= 0])
            assert counts.max() > 1


def test_a_word_longer_than_the_window_is_cut_but_kept(tokenizer):
    features = token_classification_features(
        [["EU", "eu-ger.", "lamb"]],
        tokenizer,
        tags=[["O", "B-ORG", "O"]],
        tag_names=TAG_NAMES,
        sequence_length=4,
    )  # room for 2 subwords
    assert features["first_subword"].sum() == 3
    rows = features["word_index"][features["first_subword"] == 1].tolist()
    assert rows == [0, 1, 2]
    assert [2, 5, 19, 3] in features["token_ids"].tolist()  # eu - (ger . cut)


@pytest.mark.parametrize("combine", ["first", "mean"])
def test_one_hot_scores_read_back_the_word_tags(tokenizer, combine):
    sentences, tags = _long_sentences()
    features = token_classification_features(
        sentences, tokenizer, tags=tags, tag_names=TAG_NAMES, sequence_length=8, stride=3
    )
    tag_ids = [[TAG_NAMES.index(tag) for tag in sentence] for sentence in tags]
    eye = np.eye(len(TAG_NAMES))
    rng = np.random.default_rng(0)
    scores = rng.random((*features["token_ids"].shape, len(TAG_NAMES)))  # noise off words
    for row, position in zip(*np.nonzero(features["word_index"] >= 0), strict=True):
        tag = tag_ids[features["sentence_index"][row]][features["word_index"][row, position]]
        # A window that does not own the word says something else: it must not be read.
        scores[row, position] = eye[tag if features["owned"][row, position] else (tag + 1) % 7]
    width = features["padding_mask"].sum(axis=1).max()
    for token_scores in (scores, scores[:, :width]):  # full rows, or trimmed batches
        per_word = word_scores(features, token_scores, len(sentences), combine=combine)
        assert len(per_word) == len(sentences)
        for words, ids, got in zip(sentences, tag_ids, per_word, strict=True):
            assert got.shape == (len(words), len(TAG_NAMES))
            np.testing.assert_array_equal(got, eye[ids])


def test_mean_averages_the_subwords_and_first_takes_the_first(tokenizer):
    features = token_classification_features([["Blackburn", "EU"]], tokenizer, sequence_length=6)
    scores = np.zeros((1, 6, 3))
    scores[0, 1:4] = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]  # black ##burn eu
    first = word_scores(features, scores, 1, combine="first")[0]
    mean = word_scores(features, scores, 1, combine="mean")[0]
    np.testing.assert_array_equal(first, [[1, 0, 0], [0, 0, 1]])
    np.testing.assert_array_equal(mean, [[0.5, 0.5, 0], [0, 0, 1]])


@pytest.mark.parametrize(
    "sentences, tags, kwargs, message",
    [
        (
            [["EU", "lamb"]],
            [["B-ORG", "B-LOC"]],
            {},
            r"sentence 0: tag 'B-LOC' of word 'lamb' is not in the tag set",
        ),
        (
            [["EU", "lamb"], ["EU", "rejects", "German"]],
            [["O", "O"], ["O", "O"]],
            {},
            "sentence 1 has 3 words but 2 tags",
        ),
        ([["EU"], ["lamb"]], [["O"]], {}, "one list per sentence: 2 sentences, 1 tag lists"),
        ([["EU"], []], [["O"], []], {}, "sentence 1 has no words"),
        (
            [["EU", ""]],
            [["O", "O"]],
            {},
            r"sentence 0 has empty or non-str words at positions \[1\]",
        ),
        ([["EU"]], [["O"]], {"tag_names": None}, "tag_names .* is required with tags"),
        (
            [["EU"]],
            [["O"]],
            {"sequence_length": 2},
            "sequence_length must be an int >= 3; received 2",
        ),
        ([["EU"]], [["O"]], {"sequence_length": 8.0}, "sequence_length must be an int >= 3"),
        (
            [["EU"]],
            [["O"]],
            {"stride": 6},
            r"stride must be an int in \[0, sequence_length - 2 = 6\); received 6",
        ),
        ([["EU"]], [["O"]], {"stride": -1}, "stride must be an int in"),
        ([["EU"]], [["O"]], {"stride": 1.5}, "stride must be an int in"),
    ],
)
def test_bad_inputs_are_named(tokenizer, sentences, tags, kwargs, message):
    kwargs = {"tag_names": TAG_NAMES, "sequence_length": 8, **kwargs}
    with pytest.raises(ValueError, match=message):
        token_classification_features(sentences, tokenizer, tags=tags, **kwargs)


def test_word_scores_rejects_bad_scores(tokenizer):
    features = token_classification_features(
        [["EU", "rejects", "German"]], tokenizer, sequence_length=8
    )
    with pytest.raises(ValueError, match="token_scores has 3 columns, fewer than the rows' tokens"):
        word_scores(features, np.zeros((1, 3, 2)), 1)
    with pytest.raises(ValueError, match=r"must be \(rows=1, columns, tags\); received shape"):
        word_scores(features, np.zeros((2, 8, 2)), 1)
    with pytest.raises(ValueError, match="combine must be 'first' or 'mean'; received 'max'"):
        word_scores(features, np.zeros((1, 8, 2)), 1, combine="max")
