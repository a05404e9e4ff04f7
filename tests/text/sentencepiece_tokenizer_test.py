"""The unigram model inside graphs: `SentencePieceTokenizer` (tf-text's SentencePiece ops)
against the Python `UnigramTokenizer`, and `to_sentencepiece` against the `sentencepiece`
package."""

import keras
import numpy as np
import pytest
import sentencepiece
import tensorflow as tf

from kbert.text import BertPreprocessor, SentencePieceTokenizer, UnigramTokenizer

CORPUS = [
    "the cat sat on the mat",
    "hello world, hello cat",
    "a naive cafe sat there",
    "Lower the flag, said the newest sailor.",
] * 5
TEXTS = [
    "the cat sat",
    "hello, naive world!",
    "",
    "  two  spaces ",
    "Ünïcode 中文 and unseen letters: qxz",
    "the newest flag",
]


@pytest.fixture(scope="module")
def unigram():
    return UnigramTokenizer.train(CORPUS, 60, float32_scores=True).with_roles()


def test_graph_ids_equal_the_python_tokenizer_eagerly_in_functions_and_in_tf_data(unigram):
    layer = SentencePieceTokenizer(unigram)
    expected = [unigram.tokenize(text) for text in TEXTS]
    assert layer(TEXTS).to_list() == expected
    assert layer(tf.constant(TEXTS[0])).numpy().tolist() == expected[0]  # a scalar: 1-D ids
    traced = tf.function(lambda texts: layer(texts).to_tensor(-1))
    assert (
        traced(tf.constant(TEXTS)).numpy().tolist() == layer(TEXTS).to_tensor(-1).numpy().tolist()
    )
    dataset = tf.data.Dataset.from_tensor_slices(TEXTS).batch(2).map(layer)
    assert [row for batch in dataset for row in batch.to_list()] == expected
    # Detokenizing: SentencePiece's decoding, role and control pieces dropped.
    assert layer.detokenize(expected[0] + [unigram.sep_token_id]).numpy().decode() == "the cat sat"
    known = ["the cat sat", "hello world, hello cat"]
    assert [t.decode() for t in layer.detokenize(layer(known)).numpy()] == known
    assert "⁇" in layer.detokenize(layer("world!")).numpy().decode()  # "!" is unknown here


def test_the_processor_survives_a_reseed(unigram):
    """tf-text's own tokenizer loses its kernel-private resource when the eager kernel cache is
    cleared (as `keras.utils.set_random_seed` does); this layer's resource is shared by name."""
    layer = SentencePieceTokenizer(unigram)
    before = layer(TEXTS).to_list()
    keras.utils.set_random_seed(11)
    assert layer(TEXTS).to_list() == before
    assert SentencePieceTokenizer(unigram)(TEXTS).to_list() == before  # same model, one resource


def test_roles_vocabulary_and_config_round_trip(unigram):
    layer = SentencePieceTokenizer(unigram)
    assert (layer.pad_token_id, layer.cls_token_id, layer.sep_token_id, layer.mask_token_id) == (
        unigram.pad_token_id,
        unigram.cls_token_id,
        unigram.sep_token_id,
        unigram.mask_token_id,
    )
    assert layer.get_vocabulary()[layer.cls_token_id] == "[CLS]"
    assert layer.vocabulary_size() == unigram.vocabulary_size()
    with pytest.raises(ValueError, match=r"token '\[NOPE\]' is not in the vocabulary"):
        layer.token_to_id("[NOPE]")
    rebuilt = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(layer))
    assert rebuilt(TEXTS).to_list() == layer(TEXTS).to_list()
    packed = BertPreprocessor(layer, sequence_length=8)(["the cat sat"])["token_ids"].numpy()
    assert packed[0, 0] == layer.cls_token_id and layer.sep_token_id in packed[0]
    with pytest.raises(ValueError, match="return_alignment needs a WordPieceTokenizer"):
        BertPreprocessor(layer, return_alignment=True)
    with pytest.raises(ValueError, match="unigram must be a kbert.text.UnigramTokenizer"):
        SentencePieceTokenizer("spm.model")


def test_to_sentencepiece_loads_in_sentencepiece_and_back(unigram):
    proto = unigram.to_sentencepiece()
    processor = sentencepiece.SentencePieceProcessor(model_proto=proto)
    assert processor.get_piece_size() == unigram.vocabulary_size()
    assert [processor.encode(text) for text in TEXTS] == [unigram.tokenize(t) for t in TEXTS]
    assert processor.unk_id() == unigram.unknown_id
    assert processor.is_control(unigram.cls_token_id)
    back = UnigramTokenizer.from_sentencepiece(proto)
    assert [p for p, _ in back.pieces] == [p for p, _ in unigram.pieces]
    np.testing.assert_allclose(
        [s for _, s in back.pieces], [s for _, s in unigram.pieces], rtol=1e-6
    )


def test_sentencepiece_conventions_differ_from_hugging_faces_only_where_documented():
    """Hugging Face's Metaspace adds no dummy "▁" before a text that opens with a space;
    SentencePiece always does (`float32_scores=True` follows it)."""
    hugging_face = UnigramTokenizer.train(CORPUS, 60)
    sentencepiece_like = UnigramTokenizer.from_config(
        {**hugging_face.get_config(), "float32_scores": True}
    )
    assert hugging_face.tokenize("the cat") == sentencepiece_like.tokenize("the cat")
    opens_with_space = [hugging_face.id_to_token(i) for i in hugging_face.tokenize(" the")]
    assert opens_with_space[0].startswith("▁t")
    assert [sentencepiece_like.id_to_token(i) for i in sentencepiece_like.tokenize(" the")][
        0
    ] == "▁"
