import numpy as np
import pytest

from kbert.analysis.contextual_embeddings import contextual_embeddings
from kbert.analysis.sense_training import (
    corpus_sense_embeddings,
    gloss_sense_embeddings,
    gloss_text,
)
from kbert.data.raganato import WsdCorpus, WsdInstance, WsdSentence
from kbert.data.wordnet import WordNet
from kbert.models import Encoder
from kbert.text import WordPieceTokenizer
from tests.data.wordnet_test import write_tiny_wordnet
from tests.toy_vocabularies import BANK_VOCABULARY

VOCABULARY = BANK_VOCABULARY + [
    "-",
    "sloping",
    "land",
    ",",
    "riverside",
    "deal",
    "do",
    "business",
]
FINANCE, RIVER = "bank%1:14:00::", "bank%1:17:01::"


@pytest.fixture(scope="module")
def tokenizer():
    return WordPieceTokenizer(VOCABULARY)


@pytest.fixture(scope="module")
def encoder():
    return Encoder.from_preset("tiny", num_layers=4, vocabulary_size=len(VOCABULARY))


@pytest.fixture
def tiny(tmp_path):
    return WordNet(write_tiny_wordnet(tmp_path / "wordnet"))


def sentence(id_, words):
    return WsdSentence(id_, tuple(words), tuple(w.lower() for w in words), ("X",) * len(words))


# Three sentences of different lengths; one without instances; "bank" tagged three times, one
# occurrence with two gold keys.
CORPUS = WsdCorpus(
    "toy",
    (
        sentence("s0", ["money", "flows", "on", "the", "bank"]),
        sentence("s1", ["the", "river", "banks"]),
        sentence("s2", ["a", "river"]),
        sentence("s3", ["the", "bank", "a", "bank"]),
    ),
    (
        WsdInstance("s0.t0", 0, 4, "bank", "NOUN", (FINANCE,)),
        WsdInstance("s1.t0", 1, 2, "bank", "NOUN", (RIVER,)),
        WsdInstance("s3.t0", 3, 1, "bank", "NOUN", (FINANCE, RIVER)),
        WsdInstance("s3.t1", 3, 3, "bank", "NOUN", (RIVER,)),
    ),
    "toy.xml",
)


def word_vector(encoder, tokenizer, words, index, **options):
    return contextual_embeddings(encoder, tokenizer, [list(words)], **options).word(0, index)


def test_corpus_senses_average_each_sense_over_sentence_by_sentence_vectors(encoder, tokenizer):
    vectors = {
        instance.id: word_vector(
            encoder, tokenizer, CORPUS.sentences[instance.sentence_index].words, instance.word_index
        )
        for instance in CORPUS.instances
    }
    expected = {
        FINANCE: np.mean([vectors["s0.t0"], vectors["s3.t0"]], axis=0),
        RIVER: np.mean([vectors["s1.t0"], vectors["s3.t0"], vectors["s3.t1"]], axis=0),
    }
    for chunk in (1, 2, 4096):  # chunking and length sorting change nothing
        senses = corpus_sense_embeddings(
            encoder, tokenizer, CORPUS, chunk_sentences=chunk, batch_size=2
        )
        assert senses.keys == (FINANCE, RIVER) and senses.counts.tolist() == [2, 3]
        for key, vector in expected.items():
            np.testing.assert_allclose(senses.vector(key), vector, atol=1e-5)


def test_the_zscorer_holds_the_moments_of_every_instance_vector(encoder, tokenizer, tmp_path):
    rows = np.stack(
        [
            word_vector(
                encoder,
                tokenizer,
                CORPUS.sentences[instance.sentence_index].words,
                instance.word_index,
            )
            for instance in CORPUS.instances
        ]
    )
    for _ in range(2):  # computed, then read from the cache
        senses, zscorer = corpus_sense_embeddings(
            encoder, tokenizer, CORPUS, chunk_sentences=2, cache_dir=tmp_path, return_zscorer=True
        )
        assert senses.keys == (FINANCE, RIVER)
        np.testing.assert_allclose(zscorer.mean, rows.mean(axis=0), atol=1e-5)
        np.testing.assert_allclose(zscorer.std, rows.std(axis=0), atol=1e-5)
    # Z-scoring is affine: the z-scored average is the average of the z-scored occurrences.
    standardized = zscorer.transform(rows)
    np.testing.assert_allclose(
        zscorer.transform(senses.vector(FINANCE)), standardized[[0, 2]].mean(axis=0), atol=1e-4
    )
    plain = corpus_sense_embeddings(encoder, tokenizer, CORPUS, cache_dir=tmp_path)
    np.testing.assert_array_equal(plain.matrix, senses.matrix)


def test_corpus_senses_follow_the_layer_and_pooling_options(encoder, tokenizer):
    senses = corpus_sense_embeddings(
        encoder, tokenizer, CORPUS, layers="last", subword_pooling="first"
    )
    river = [
        word_vector(
            encoder, tokenizer, CORPUS.sentences[i].words, w, layers="last", subword_pooling="first"
        )
        for i, w in ((1, 2), (3, 1), (3, 3))
    ]
    np.testing.assert_allclose(senses.vector(RIVER), np.mean(river, axis=0), atol=1e-5)


def test_corpus_senses_are_cached_on_the_weights_and_the_data(encoder, tokenizer, tmp_path):
    first = corpus_sense_embeddings(encoder, tokenizer, CORPUS, cache_dir=tmp_path)
    files = sorted(tmp_path.glob("senses_toy_*.npz"))
    assert len(files) == 1
    again = corpus_sense_embeddings(encoder, tokenizer, CORPUS, cache_dir=tmp_path)
    np.testing.assert_array_equal(again.matrix, first.matrix)
    assert sorted(tmp_path.glob("senses_toy_*.npz")) == files
    fewer = WsdCorpus("toy", CORPUS.sentences, CORPUS.instances[:2], "toy.xml")
    corpus_sense_embeddings(encoder, tokenizer, fewer, cache_dir=tmp_path)
    assert len(list(tmp_path.glob("senses_toy_*.npz"))) == 2  # other data: another file
    changed = Encoder.from_config(encoder.get_config())
    changed.set_weights([w + 0.01 for w in encoder.get_weights()])
    moved = corpus_sense_embeddings(
        encoder=changed, tokenizer=tokenizer, corpus=CORPUS, cache_dir=tmp_path
    )
    assert len(list(tmp_path.glob("senses_toy_*.npz"))) == 3  # other weights: another file
    assert not np.allclose(moved.matrix, first.matrix)


def test_corpus_senses_drop_keys_outside_the_inventory(encoder, tokenizer, tiny):
    odd = WsdCorpus(
        "toy",
        CORPUS.sentences,
        CORPUS.instances + (WsdInstance("s2.t0", 2, 1, "river", "NOUN", ("river%1:17:00::",)),),
        "toy.xml",
    )
    assert "river%1:17:00::" not in tiny
    senses = corpus_sense_embeddings(encoder, tokenizer, odd, inventory=tiny)
    assert senses.keys == (FINANCE, RIVER)
    with_unknown = corpus_sense_embeddings(encoder, tokenizer, odd)
    assert "river%1:17:00::" in with_unknown


def test_corpus_senses_bad_input(encoder, tokenizer):
    empty = WsdCorpus("empty", CORPUS.sentences, (), "toy.xml")
    with pytest.raises(ValueError, match="corpus 'empty' has no instances"):
        corpus_sense_embeddings(encoder, tokenizer, empty)
    for name, value in (("batch_size", 0), ("chunk_sentences", 2.5)):
        with pytest.raises(ValueError, match=f"{name} must be a positive int; received"):
            corpus_sense_embeddings(encoder, tokenizer, CORPUS, **{name: value})


def test_gloss_text_puts_the_sense_lemma_first_then_its_synonyms(tiny):
    assert gloss_text(tiny, RIVER) == "bank, riverside - sloping land beside a body of water"
    assert gloss_text(tiny, "riverside%1:17:00::") == (
        "riverside, bank - sloping land beside a body of water"
    )
    assert gloss_text(tiny, "do_business%2:40:00::") == "do business, deal - engage in commerce"
    assert gloss_text(tiny, "moon%1:17:03::").startswith("moon - the natural satellite")


def test_gloss_senses_are_the_mean_subword_vector_of_the_gloss_text(
    encoder, tokenizer, tiny, tmp_path
):
    keys = [RIVER, "do_business%2:40:00::", FINANCE, RIVER]
    glosses = gloss_sense_embeddings(
        encoder, tokenizer, tiny, keys, batch_size=1, cache_dir=tmp_path
    )
    assert glosses.keys == tuple(sorted({RIVER, FINANCE, "do_business%2:40:00::"}))
    assert glosses.counts.tolist() == [1, 1, 1]
    for key in glosses.keys:
        subwords = contextual_embeddings(
            encoder, tokenizer, [gloss_text(tiny, key)], level="subword"
        ).vectors
        np.testing.assert_allclose(glosses.vector(key), subwords.mean(axis=0), atol=1e-5)
    cached = gloss_sense_embeddings(encoder, tokenizer, tiny, keys, cache_dir=tmp_path)
    np.testing.assert_array_equal(cached.matrix, glosses.matrix)
    assert len(list(tmp_path.glob("glosses_*.npz"))) == 1


def test_gloss_senses_bad_input(encoder, tokenizer, tiny):
    with pytest.raises(ValueError, match="keys is empty"):
        gloss_sense_embeddings(encoder, tokenizer, tiny, [])
    with pytest.raises(
        ValueError,
        match=r"1 key\(s\) to embed are not in the WordNet, e.g. "
        r"\['bank%1:99:00::'\]",
    ):
        gloss_sense_embeddings(encoder, tokenizer, tiny, [RIVER, "bank%1:99:00::"])
