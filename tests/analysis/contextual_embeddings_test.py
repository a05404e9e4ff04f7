import numpy as np
import pytest

from kbert.analysis.contextual_embeddings import (
    contextual_embeddings,
    embed_word_in_context,
    find_word,
    layer_selection,
)
from kbert.layers import ScalarMix
from kbert.models import Encoder
from kbert.text import BertPreprocessor, WordPieceTokenizer
from tests.toy_vocabularies import BANK_VOCABULARY

VOCABULARY = BANK_VOCABULARY


@pytest.fixture(scope="module")
def tokenizer():
    return WordPieceTokenizer(VOCABULARY)


@pytest.fixture(scope="module")
def encoder():
    return Encoder.from_preset("tiny", num_layers=4, vocabulary_size=len(VOCABULARY))


def reference_states(encoder, tokenizer, text):
    """Hidden states of one sentence through the ordinary preprocessor: (S, seq, dim)."""
    inputs = BertPreprocessor(tokenizer, sequence_length=16)([text])
    states = encoder(inputs, training=False)["hidden_states"]
    length = int(np.asarray(inputs["padding_mask"]).sum())
    return np.stack([np.asarray(state)[0, :length] for state in states])


def test_word_vectors_pool_the_subwords_of_each_word(encoder, tokenizer):
    states = reference_states(encoder, tokenizer, "the river banks")  # [CLS] the river bank ##s
    last4 = states[-4:].mean(0)
    for pooling, expected in (
        ("mean", last4[3:5].mean(0)),
        ("first", last4[3]),
        ("last", last4[4]),
    ):
        embeddings = contextual_embeddings(
            encoder, tokenizer, ["the river banks"], subword_pooling=pooling
        )
        assert embeddings.vectors.shape == (3, 16)
        np.testing.assert_allclose(embeddings.word(0, 1), last4[2], atol=1e-5)
        np.testing.assert_allclose(embeddings.word(0, 2), expected, atol=1e-5)


def test_layer_choices(encoder, tokenizer):
    states = reference_states(encoder, tokenizer, "money flows")  # [CLS] money flows [SEP]
    words = [["money", "flows"]]

    def vectors(layers):
        return contextual_embeddings(encoder, tokenizer, words, layers=layers).vectors

    np.testing.assert_allclose(vectors("last"), states[-1, 1:3], atol=1e-5)
    np.testing.assert_allclose(vectors(0), states[0, 1:3], atol=1e-5)
    np.testing.assert_allclose(vectors(-2), states[-2, 1:3], atol=1e-5)
    np.testing.assert_allclose(vectors([1, 3]), states[[1, 3]].mean(0)[1:3], atol=1e-5)
    np.testing.assert_allclose(vectors("last4_sum"), 4 * vectors("last4_mean"), atol=1e-4)
    every = vectors("all")
    assert every.shape == (2, 5, 16)
    np.testing.assert_allclose(every, states[:, 1:3].transpose(1, 0, 2), atol=1e-5)
    # A fresh scalar mix weighs every layer equally (gamma 1): the mean of all layers.
    np.testing.assert_allclose(vectors(ScalarMix(5)), states.mean(0)[1:3], atol=1e-5)


def test_subword_level_keeps_every_token(encoder, tokenizer):
    embeddings = contextual_embeddings(
        encoder, tokenizer, ["the river banks", "money"], level="subword", layers="last"
    )
    assert embeddings.token_ids.tolist() == [5, 6, 7, 8, 9]
    assert embeddings.word_index.tolist() == [0, 1, 2, 2, 0]
    assert embeddings.sentence_index.tolist() == [0, 0, 0, 0, 1]
    assert embeddings.word(0, 2).shape == (2, 16)


def test_long_sentences_run_in_windows_and_every_word_gets_one_vector(encoder, tokenizer):
    long_sentence = ("the river banks " * 7).split()  # 21 words, 28 subwords
    embeddings = contextual_embeddings(
        encoder, tokenizer, [long_sentence, ["a"]], layers="last", sequence_length=10, stride=3
    )
    assert embeddings.sentence_offsets.tolist() == [0, 21, 22]
    assert embeddings.word_index[:21].tolist() == list(range(21))


def test_batch_size_and_padding_change_nothing(encoder, tokenizer):
    sentences = ["the river banks", "money", "a river flows on the bank", "the bank"]
    one = contextual_embeddings(encoder, tokenizer, sentences, layers="last", batch_size=1)
    many = contextual_embeddings(encoder, tokenizer, sentences, layers="last", batch_size=4)
    np.testing.assert_allclose(one.vectors, many.vectors, atol=1e-5)


def test_disk_cache(encoder, tokenizer, tmp_path):
    first = contextual_embeddings(
        encoder, tokenizer, ["the river banks"], layers="last", cache_dir=tmp_path
    )
    again = contextual_embeddings(
        encoder, tokenizer, ["the river banks"], layers="last", cache_dir=tmp_path
    )
    assert not first.from_cache and again.from_cache
    np.testing.assert_array_equal(first.vectors, again.vectors)
    other = contextual_embeddings(
        encoder, tokenizer, ["the river banks"], layers=0, cache_dir=tmp_path
    )
    assert not other.from_cache
    assert len(list(tmp_path.glob("*.npz"))) == 2
    assert not list(tmp_path.glob("*partial*"))


def test_embed_word_in_context_and_find_word(encoder, tokenizer):
    vector = embed_word_in_context(encoder, tokenizer, "the river banks", "banks", layers="last")
    states = reference_states(encoder, tokenizer, "the river banks")
    np.testing.assert_allclose(vector, states[-1, 3:5].mean(0), atol=1e-5)
    assert find_word(["The", "bank", "the", "BANK"], "bank", occurrence=1) == 3
    with pytest.raises(ValueError, match="'bank' does not occur in the sentence 'the river'"):
        find_word("the river", "bank")
    with pytest.raises(ValueError, match="occurs 1 time"):
        embed_word_in_context(encoder, tokenizer, "the bank", "bank", occurrence=1)


def test_bad_input(encoder, tokenizer):
    with pytest.raises(ValueError, match=r"layer index 5 is out of range \[-5, 4\]"):
        contextual_embeddings(encoder, tokenizer, ["the bank"], layers=5)
    with pytest.raises(ValueError, match="layers must be one of"):
        layer_selection("top", 5)
    with pytest.raises(ValueError, match="needs at least 4 hidden states"):
        layer_selection("last4_mean", 3)
    with pytest.raises(ValueError, match="mixes 3 layers but the encoder has 5"):
        contextual_embeddings(encoder, tokenizer, ["the bank"], layers=ScalarMix(3))
    with pytest.raises(ValueError, match="level must be one of"):
        contextual_embeddings(encoder, tokenizer, ["the bank"], level="token")
    with pytest.raises(ValueError, match="subword_pooling must be one of"):
        contextual_embeddings(encoder, tokenizer, ["the bank"], subword_pooling="max")
    with pytest.raises(ValueError, match="sentence 1 is empty"):
        contextual_embeddings(encoder, tokenizer, ["the bank", "  "])
    with pytest.raises(ValueError, match="received one string"):
        contextual_embeddings(encoder, tokenizer, "the bank")
    embeddings = contextual_embeddings(encoder, tokenizer, ["the bank"], layers="last")
    with pytest.raises(ValueError, match="word_index 2 is out of range: sentence 0 has 2 words"):
        embeddings.word(0, 2)
    with pytest.raises(ValueError, match=r"sentence index 1 is out of range \[0, 1\)"):
        embeddings.sentence(1)


@pytest.mark.slow
def test_pretrained_vectors_separate_the_senses_of_bank():
    from kbert.checkpoints import load_hf_bert

    encoder, tokenizer = load_hf_bert("minilm_l6")
    river = ["We sat on the bank of the river .", "Fishermen lined the grassy bank of the lake ."]
    money = ["She deposited her salary at the bank .", "The bank approved the loan ."]
    sentences = river + money
    embeddings = contextual_embeddings(encoder, tokenizer, sentences, progress=True)
    vectors = np.stack([embeddings.word(i, find_word(s, "bank")) for i, s in enumerate(sentences)])
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    cosine = unit @ unit.T
    same = (cosine[0, 1] + cosine[2, 3]) / 2
    different = cosine[:2, 2:].mean()
    assert same > different + 0.05
