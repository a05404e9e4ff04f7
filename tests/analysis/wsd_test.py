import numpy as np
import pytest

from kbert.analysis.wsd import (
    COVERAGE_SOURCES,
    NearestSenseWSD,
    SenseEmbeddings,
    WsdPrediction,
    concatenate_sense_embeddings,
    fill_sense_embeddings,
    mfs_predictions,
    propagate_sense_embeddings,
    unit_rows,
)
from kbert.data.raganato import (
    WSD_EVALUATION_SETS,
    WsdCorpus,
    WsdInstance,
    WsdSentence,
    load_wsd_set,
    wsd_scores,
)
from kbert.data.wordnet import WordNet, load_wordnet
from tests.data.wordnet_test import write_tiny_wordnet

FINANCE, RIVER = "bank%1:14:00::", "bank%1:17:01::"  # the tiny WordNet's bank senses, in order


@pytest.fixture
def tiny(tmp_path):
    return WordNet(write_tiny_wordnet(tmp_path / "wordnet"))


def test_fit_averages_each_sense_and_counts_shared_rows_for_every_key():
    vectors = [[1.0, 0.0], [3.0, 2.0], [0.0, 4.0], [2.0, 2.0]]
    senses = SenseEmbeddings.fit(vectors, [(FINANCE,), (FINANCE,), RIVER, (FINANCE, RIVER)])
    assert senses.keys == (FINANCE, RIVER) and len(senses) == 2
    np.testing.assert_allclose(senses.matrix, [[2.0, 4 / 3], [1.0, 3.0]], rtol=1e-6)
    assert senses.counts.tolist() == [3, 2]
    assert senses.matrix.dtype == np.float32
    assert RIVER in senses and "bank%2:40:11::" not in senses
    np.testing.assert_allclose(senses.vector(RIVER), [1.0, 3.0])
    with pytest.raises(ValueError, match=r"sense key 'x%1:00:00::' has no embedding"):
        senses.vector("x%1:00:00::")


def test_fit_checks_shapes_and_keys():
    with pytest.raises(
        ValueError,
        match=r"vectors must be a 2-D array \(rows x dimensions\); "
        r"received shape \(3,\)",
    ):
        SenseEmbeddings.fit([1.0, 2.0, 3.0], [FINANCE] * 3)
    with pytest.raises(
        ValueError,
        match=r"sense_keys must have one entry per row of vectors: "
        r"expected 2; received 1",
    ):
        SenseEmbeddings.fit(np.zeros((2, 4)), [(FINANCE,)])
    with pytest.raises(ValueError, match=r"sense_keys\[1\] is empty"):
        SenseEmbeddings.fit(np.zeros((2, 4)), [(FINANCE,), ()])
    with pytest.raises(ValueError, match=r"vectors must be finite; row 1 has NaN"):
        SenseEmbeddings.fit([[0.0], [np.nan]], [FINANCE, RIVER])
    with pytest.raises(
        ValueError,
        match=r"on_unknown must be one of \('error', 'skip'\); "
        r"received 'ignore'",
    ):
        SenseEmbeddings.fit([[0.0]], [FINANCE], on_unknown="ignore")
    with pytest.raises(ValueError, match=r"keys, matrix rows and counts must match"):
        SenseEmbeddings([FINANCE], np.zeros((2, 3)), [1, 1])


def test_keys_outside_the_inventory_are_refused_or_skipped(tiny):
    unknown = [f"bank%1:99:0{i}::" for i in range(7)]
    vectors = np.arange(16, dtype=float).reshape(8, 2)
    rows = [(RIVER,)] + [(key,) for key in unknown]
    rows[1] = (RIVER, unknown[0])
    with pytest.raises(
        ValueError,
        match=r"7 sense key\(s\) are not in the inventory, e.g. "
        r"\['bank%1:99:00::', 'bank%1:99:01::', "
        r"'bank%1:99:02::', 'bank%1:99:03::', "
        r"'bank%1:99:04::'\]; expected WordNet sense keys",
    ):
        SenseEmbeddings.fit(vectors, rows, inventory=tiny)
    senses = SenseEmbeddings.fit(vectors, rows, inventory=tiny, on_unknown="skip")
    assert senses.keys == (RIVER,) and senses.counts.tolist() == [2]
    np.testing.assert_allclose(senses.matrix, [[1.0, 2.0]])  # rows 0 and 1
    assert len(SenseEmbeddings.fit(vectors, rows)) == 8  # no inventory: no check


def test_save_and_load_round_trip_atomically(tmp_path):
    senses = SenseEmbeddings.fit([[1.0, 0.5], [0.0, 2.0]], [(FINANCE,), (RIVER, FINANCE)])
    path = tmp_path / "senses"  # no suffix: written exactly there
    senses.save(path)
    senses.save(path)  # replaces
    assert sorted(p.name for p in tmp_path.iterdir()) == ["senses"]
    loaded = SenseEmbeddings.load(path)
    assert loaded.keys == senses.keys
    np.testing.assert_array_equal(loaded.matrix, senses.matrix)
    np.testing.assert_array_equal(loaded.counts, senses.counts)
    empty = SenseEmbeddings([], np.zeros((0, 3)), [])
    empty.save(tmp_path / "empty.npz")
    assert SenseEmbeddings.load(tmp_path / "empty.npz").matrix.shape == (0, 3)
    np.savez(tmp_path / "other.npz", matrix=np.zeros((1, 2)))
    with pytest.raises(
        ValueError,
        match=r"other.npz: expected the arrays 'keys', 'matrix' and "
        r"'counts' .*; missing \['keys', 'counts'\]",
    ):
        SenseEmbeddings.load(tmp_path / "other.npz")


def test_a_failed_save_leaves_no_temporary_file(tmp_path, monkeypatch):
    senses = SenseEmbeddings.fit([[1.0]], [FINANCE])

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez", broken)
    with pytest.raises(OSError, match="disk full"):
        senses.save(tmp_path / "senses.npz")
    assert list(tmp_path.iterdir()) == []


def test_nearest_sense_uses_cosine_among_the_lemmas_senses(tiny):
    # Sense vectors of very different lengths: a dot product would always pick RIVER.
    senses = SenseEmbeddings.fit(
        [[0.0, 1.0], [10.0, 1.0], [-5.0, -5.0]], [FINANCE, RIVER, "bank%2:40:11::"]
    )
    wsd = NearestSenseWSD(senses, tiny)
    predictions = wsd.predict(
        [[0.1, 1.0], [3.0, 0.2], [-1.0, -1.0]], ["bank", "Bank", "bank"], "NOUN"
    )
    # The third is nearest to the verb sense, which is not a noun candidate.
    assert predictions == [
        WsdPrediction(FINANCE, "nearest"),
        WsdPrediction(RIVER, "nearest"),
        WsdPrediction(FINANCE, "nearest"),
    ]
    # A tie goes to the lower sense number; a zero vector ties everything.
    assert wsd.predict([[0.0, 0.0]], ["bank"], ["n"]) == [WsdPrediction(FINANCE, "nearest")]
    assert wsd.predict([[-1.0, -1.0]], ["bank"], ["VERB"]) == [
        WsdPrediction("bank%2:40:11::", "nearest")
    ]


def test_no_embedded_candidate_falls_back_to_mfs_and_unknown_lemmas_are_unanswered(tiny):
    senses = SenseEmbeddings.fit([[1.0, 0.0]], [RIVER])
    wsd = NearestSenseWSD(senses, tiny)
    predictions = wsd.predict(
        np.ones((4, 2)), ["bank", "capable", "zebra", "able"], ["NOUN", "ADJ", "NOUN", "NOUN"]
    )
    assert predictions == [
        WsdPrediction(RIVER, "nearest"),
        WsdPrediction("capable%5:00:01:able:03", "mfs"),
        WsdPrediction(None, "unknown_lemma"),
        WsdPrediction(None, "unknown_lemma"),
    ]  # able is no noun


def test_predict_checks_shapes_and_pos(tiny):
    wsd = NearestSenseWSD(SenseEmbeddings.fit([[1.0, 0.0]], [RIVER]), tiny)
    with pytest.raises(
        ValueError,
        match=r"vectors must have the sense embeddings' dimension 2; "
        r"received shape \(1, 3\)",
    ):
        wsd.predict(np.ones((1, 3)), ["bank"], "NOUN")
    with pytest.raises(
        ValueError,
        match=r"lemmas and pos must have one entry per row of "
        r"vectors: expected 2; received 1 lemmas and 2 pos",
    ):
        wsd.predict(np.ones((2, 2)), ["bank"], "NOUN")
    with pytest.raises(ValueError, match=r"vectors must be a 2-D array"):
        wsd.predict(np.ones(2), ["bank"], "NOUN")
    with pytest.raises(ValueError, match=r"part of speech must be one of"):
        wsd.predict(np.ones((1, 2)), ["bank"], ["PROPN"])


def test_mfs_predictions_take_the_first_sense_and_skip_unknown_lemmas(tiny):
    sentence = WsdSentence(
        "d0.s0", ("bank", "zebra", "capable"), ("bank", "zebra", "capable"), ("NOUN", "NOUN", "ADJ")
    )
    instances = (
        WsdInstance("d0.s0.t0", 0, 0, "bank", "NOUN", (RIVER,)),
        WsdInstance("d0.s0.t1", 0, 1, "zebra", "NOUN", ("zebra%1:05:00::",)),
        WsdInstance("d0.s0.t2", 0, 2, "capable", "ADJ", ("capable%5:00:01:able:03",)),
    )
    corpus = WsdCorpus("toy", (sentence,), instances, "toy.data.xml")
    predictions = mfs_predictions(corpus, tiny)
    assert predictions == {"d0.s0.t0": FINANCE, "d0.s0.t2": "capable%5:00:01:able:03"}
    scores = wsd_scores(predictions, corpus.gold())
    assert (scores["precision"], scores["answered"], scores["total"]) == (50.0, 2, 3)
    assert scores["recall"] == pytest.approx(100 / 3)


@pytest.mark.slow
def test_mfs_reproduces_the_frameworks_wordnet_first_sense_baseline(data_root):
    # Raganato et al. (2017), Table: the "WN 1st sense" row, F1 in percent to one decimal.
    published = {
        "senseval2": 66.8,
        "senseval3": 66.2,
        "semeval2007": 55.2,
        "semeval2013": 63.0,
        "semeval2015": 67.8,
        "ALL": 65.2,
    }
    wordnet = load_wordnet()
    for name in WSD_EVALUATION_SETS + ("ALL",):
        corpus = load_wsd_set(name, data_dir=data_root)
        scores = wsd_scores(mfs_predictions(corpus, wordnet), corpus.gold())
        assert scores["answered"] == scores["total"]  # WordNet knows every instance's lemma
        assert round(scores["f1"], 1) == published[name], name


# A toy inventory for full-coverage propagation: synset -> (lexname, direct hypernyms, keys).
# entity > animal {animal, beast, creature} > dog {dog, domestic_dog}, cat {cat},
# pet {pet} > lapdog {lapdog}; hybrid and chimera have two direct hypernyms; rock sits under
# entity in noun.object; a verb and an adjective (no hypernyms) have their own lexnames.
TOY_SYNSETS = {
    "entity": ("noun.Tops", (), ("entity%1:03:00::",)),
    "animal": (
        "noun.animal",
        ("entity",),
        ("animal%1:05:00::", "beast%1:05:00::", "creature%1:05:00::"),
    ),
    "dog": ("noun.animal", ("animal",), ("dog%1:05:00::", "domestic_dog%1:05:00::")),
    "cat": ("noun.animal", ("animal",), ("cat%1:05:00::",)),
    "puppy": ("noun.animal", ("dog",), ("puppy%1:05:00::",)),
    "pet": ("noun.animal", ("animal",), ("pet%1:05:00::",)),
    "lapdog": ("noun.animal", ("pet",), ("lapdog%1:05:00::",)),
    "hybrid": ("noun.animal", ("animal", "cat"), ("hybrid%1:05:00::",)),
    "chimera": ("noun.animal", ("cat", "pet"), ("chimera%1:05:00::",)),
    "monster": ("noun.animal", ("entity",), ("monster%1:05:00::",)),
    "stone": ("noun.object", (), ("stone%1:17:00::", "pebble%1:17:00::")),
    "boulder": ("noun.object", (), ("boulder%1:17:00::",)),
    "rock": ("noun.object", ("entity",), ("rock%1:17:00::",)),
    "move": ("verb.motion", (), ("move%2:38:00::",)),
    "walk": ("verb.motion", ("move",), ("walk%2:38:00::",)),
    "run": ("verb.motion", ("move",), ("run%2:38:00::",)),
    "big": ("adj.all", (), ("big%3:00:00::",)),
}
# The corpus vectors (and counts): two members of animal, dog, cat, and three noun.object senses
# that are not among the keys to cover; ghost is no key of the toy WordNet.
TOY_CORPUS = {
    "animal%1:05:00::": ([2.0, 0.0], 3),
    "beast%1:05:00::": ([0.0, 2.0], 1),
    "dog%1:05:00::": ([6.0, 0.0], 5),
    "cat%1:05:00::": ([4.0, 4.0], 2),
    "stone%1:17:00::": ([0.0, 6.0], 1),
    "pebble%1:17:00::": ([2.0, 2.0], 4),
    "boulder%1:17:00::": ([4.0, 4.0], 1),
    "walk%2:38:00::": ([0.0, 3.0], 7),
    "ghost%1:18:00::": ([100.0, -100.0], 9),
}


class ToyWordNet:
    """The five methods `propagate_sense_embeddings` uses, over a synset table."""

    def __init__(self, synsets=None):
        self.synsets = TOY_SYNSETS if synsets is None else synsets
        self._synset_of = {key: name for name, (_, _, keys) in self.synsets.items() for key in keys}

    def __contains__(self, key):
        return key in self._synset_of

    def synset(self, key):
        if key not in self._synset_of:
            raise ValueError(f"{key!r} is not a toy sense key")
        return self._synset_of[key]

    def synset_keys(self, synset):
        return self.synsets[synset][2]

    def hypernyms(self, synset):
        return self.synsets[synset][1]

    def lexname(self, synset):
        return self.synsets[synset][0]


@pytest.fixture
def toy_corpus():
    keys = sorted(TOY_CORPUS)
    return SenseEmbeddings(
        keys, [TOY_CORPUS[key][0] for key in keys], [TOY_CORPUS[key][1] for key in keys]
    )


def propagated(toy_corpus, keys, wordnet=None):
    """Returns `{key: (vector, source)}` from propagating `toy_corpus` over `keys`."""
    full, sources = propagate_sense_embeddings(toy_corpus, wordnet or ToyWordNet(), keys)
    assert set(sources) == set(full.keys)
    return {key: (full.vector(key), sources[key]) for key in full.keys}


def test_propagation_keeps_corpus_vectors_and_fills_synonyms_with_the_synset_mean(toy_corpus):
    result = propagated(
        toy_corpus,
        ["dog%1:05:00::", "creature%1:05:00::", "domestic_dog%1:05:00::", "beast%1:05:00::"],
    )
    np.testing.assert_allclose(result["dog%1:05:00::"][0], [6.0, 0.0])
    np.testing.assert_allclose(result["beast%1:05:00::"][0], [0.0, 2.0])
    # creature's synset holds animal [2, 0] and beast [0, 2] (beast counts though not a key).
    np.testing.assert_allclose(result["creature%1:05:00::"][0], [1.0, 1.0])
    np.testing.assert_allclose(result["domestic_dog%1:05:00::"][0], [6.0, 0.0])
    assert {key: source for key, (_, source) in result.items()} == {
        "dog%1:05:00::": "corpus",
        "beast%1:05:00::": "corpus",
        "creature%1:05:00::": "synset",
        "domestic_dog%1:05:00::": "synset",
    }


def test_propagation_takes_the_mean_of_the_nearest_embedded_hypernym_level(toy_corpus):
    result = propagated(
        toy_corpus,
        [
            "puppy%1:05:00::",
            "pet%1:05:00::",
            "hybrid%1:05:00::",
            "chimera%1:05:00::",
            "lapdog%1:05:00::",
            "run%2:38:00::",
        ],
    )
    expected = {
        "puppy%1:05:00::": [6.0, 0.0],  # dog's synset
        "pet%1:05:00::": [1.0, 1.0],  # animal's synset mean, not its first member's vector
        # animal [1, 1] and cat [4, 4]: the mean of synset means, not of their three senses.
        "hybrid%1:05:00::": [2.5, 2.5],
        # cat [4, 4] only: pet has no embedding, and a level with one stops the walk.
        "chimera%1:05:00::": [4.0, 4.0],
        "lapdog%1:05:00::": [1.0, 1.0],  # pet is empty: one level up, animal
        "run%2:38:00::": [0.0, 3.0],  # move is empty and has no hypernym: verb.motion
    }
    for key, vector in expected.items():
        np.testing.assert_allclose(result[key][0], vector, err_msg=key)
    assert {key: source for key, (_, source) in result.items()} == {
        **{key: "hypernym" for key in expected},
        "run%2:38:00::": "lexname",
    }


def test_a_walk_up_averages_each_synset_of_a_level_once(toy_corpus):
    # mule's hypernyms are both empty; one level up, cat is reached twice and dog once.
    synsets = {
        **TOY_SYNSETS,
        "horse": ("noun.animal", ("cat",), ("horse%1:05:00::",)),
        "donkey": ("noun.animal", ("cat", "dog"), ("donkey%1:05:00::",)),
        "mule": ("noun.animal", ("horse", "donkey"), ("mule%1:05:00::",)),
    }
    result = propagated(toy_corpus, ["mule%1:05:00::"], ToyWordNet(synsets))
    assert result["mule%1:05:00::"][1] == "hypernym"
    # The mean of the level's synsets {cat [4, 4], dog [6, 0]}.
    np.testing.assert_allclose(result["mule%1:05:00::"][0], [5.0, 2.0])


def test_propagation_falls_back_to_the_lexname_mean_or_leaves_the_key_out(toy_corpus):
    result = propagated(
        toy_corpus, ["rock%1:17:00::", "monster%1:05:00::", "big%3:00:00::", "entity%1:03:00::"]
    )
    # noun.object: the mean of its senses stone [0, 6], pebble [2, 2] and boulder [4, 4] (none
    # of them a key to cover), not of its synset means ([1, 4] and [4, 4]).
    np.testing.assert_allclose(result["rock%1:17:00::"][0], [2.0, 4.0])
    # noun.animal: animal, beast, dog and cat; ghost's [100, -100] is no WordNet key and ignored.
    np.testing.assert_allclose(result["monster%1:05:00::"][0], [3.0, 1.5])
    # adj.all and noun.Tops have no embedded sense: big and entity are left out.
    assert {key: source for key, (_, source) in result.items()} == {
        "rock%1:17:00::": "lexname",
        "monster%1:05:00::": "lexname",
    }


def test_propagated_embeddings_are_sorted_with_corpus_counts(toy_corpus):
    keys = [
        "run%2:38:00::",
        "cat%1:05:00::",
        "big%3:00:00::",
        "creature%1:05:00::",
        "cat%1:05:00::",
        "walk%2:38:00::",
        "lapdog%1:05:00::",
        "run%2:38:00::",
    ]
    full, sources = propagate_sense_embeddings(toy_corpus, ToyWordNet(), keys)
    assert full.keys == (
        "cat%1:05:00::",
        "creature%1:05:00::",
        "lapdog%1:05:00::",
        "run%2:38:00::",
        "walk%2:38:00::",
    )
    assert full.counts.tolist() == [2, 0, 0, 0, 7]
    assert list(sources) == list(full.keys)
    assert set(sources.values()) <= set(COVERAGE_SOURCES)
    assert full.matrix.shape == (5, 2)
    assert COVERAGE_SOURCES == ("corpus", "synset", "hypernym", "lexname")
    empty, none = propagate_sense_embeddings(toy_corpus, ToyWordNet(), ["big%3:00:00::"])
    assert (len(empty), empty.matrix.shape, none) == (0, (0, 2), {})


def test_propagation_refuses_keys_outside_the_wordnet(toy_corpus):
    with pytest.raises(
        ValueError,
        match=r"2 key\(s\) to cover are not in the WordNet, e.g. "
        r"\['ghost%1:18:00::', 'zebra%1:05:00::'\]; expected "
        r"WordNet sense keys",
    ):
        propagate_sense_embeddings(
            toy_corpus, ToyWordNet(), ["zebra%1:05:00::", "dog%1:05:00::", "ghost%1:18:00::"]
        )


def test_propagation_covers_every_sense_of_the_tiny_wordnet_lemmas(tiny):
    corpus = SenseEmbeddings.fit(
        [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [-1.0, 0.0]],
        [FINANCE, "institution%1:14:00::", "deal%2:40:00::", "able%3:00:03::"],
    )
    lemmas, pos = ["bank", "bank", "capable"], ["NOUN", "VERB", "ADJ"]
    keys = [key for lemma, tag in zip(lemmas, pos, strict=True) for key in tiny.senses(lemma, tag)]
    full, sources = propagate_sense_embeddings(corpus, tiny, keys)
    assert sources == {
        FINANCE: "corpus",
        RIVER: "hypernym",
        "bank%2:40:11::": "hypernym",
        "capable%5:00:01:able:03": "lexname",
    }
    np.testing.assert_allclose(full.vector(RIVER), [0.0, 1.0])  # its hypernym, institution
    vectors = [[0.2, 1.0], [5.0, 1.0], [0.0, -3.0]]
    before = NearestSenseWSD(corpus, tiny).predict(vectors, lemmas, pos)
    assert [p.source for p in before] == ["nearest", "mfs", "mfs"]
    after = NearestSenseWSD(full, tiny).predict(vectors, lemmas, pos)
    assert after == [
        WsdPrediction(RIVER, "nearest"),
        WsdPrediction("bank%2:40:11::", "nearest"),
        WsdPrediction("capable%5:00:01:able:03", "nearest"),
    ]


def test_concatenation_unit_normalises_each_part_over_the_common_keys():
    a = SenseEmbeddings(
        ["y%1:00:00::", "x%1:00:00::", "z%1:00:00::"],
        [[0.0, 5.0], [3.0, 4.0], [1.0, 1.0]],
        [4, 2, 6],
    )
    b = SenseEmbeddings(
        ["x%1:00:00::", "y%1:00:00::", "w%1:00:00::"],
        [[0.0, 0.0, 2.0], [1.0, 0.0, 0.0], [1.0, 1.0, 1.0]],
        [0, 9, 1],
    )
    joined = concatenate_sense_embeddings(a, b)
    assert joined.keys == ("x%1:00:00::", "y%1:00:00::")
    assert joined.counts.tolist() == [2, 4]  # from the first
    np.testing.assert_allclose(
        joined.matrix, [[0.6, 0.8, 0.0, 0.0, 1.0], [0.0, 1.0, 1.0, 0.0, 0.0]], rtol=1e-6
    )
    c = SenseEmbeddings(["y%1:00:00::"], [[-2.0]], [3])
    three = concatenate_sense_embeddings(a, b, c)
    assert three.keys == ("y%1:00:00::",) and three.counts.tolist() == [4]
    np.testing.assert_allclose(three.matrix, [[0.0, 1.0, 1.0, 0.0, 0.0, -1.0]])


def test_concatenation_needs_two_inputs_sharing_a_key():
    a = SenseEmbeddings(["x%1:00:00::"], [[1.0]], [1])
    b = SenseEmbeddings(["y%1:00:00::"], [[1.0]], [1])
    for inputs, received in (((), 0), ((a,), 1)):
        with pytest.raises(
            ValueError,
            match=rf"expected at least two SenseEmbeddings to "
            rf"concatenate; received {received}",
        ):
            concatenate_sense_embeddings(*inputs)
    with pytest.raises(ValueError, match=r"the SenseEmbeddings share no sense key"):
        concatenate_sense_embeddings(a, b)


def test_a_repeated_query_scores_the_mean_cosine_of_the_concatenated_parts():
    generator = np.random.default_rng(0)
    query, contextual, gloss = generator.normal(size=(3, 6))
    sense = concatenate_sense_embeddings(
        SenseEmbeddings(["x%1:00:00::"], [contextual], [1]),
        SenseEmbeddings(["x%1:00:00::"], [gloss], [0]),
    )
    repeated = np.concatenate([unit_rows([query]), unit_rows([query])], axis=1)[0]
    row = sense.matrix[0].astype(np.float64)
    cosine = repeated @ row / (np.linalg.norm(repeated) * np.linalg.norm(row))

    def cos(u, v):
        return u @ v / (np.linalg.norm(u) * np.linalg.norm(v))

    assert cosine == pytest.approx((cos(query, contextual) + cos(query, gloss)) / 2, abs=1e-6)


def test_unit_rows_scales_rows_to_unit_length_and_keeps_zero_rows():
    rows = unit_rows([[3.0, 4.0], [0.0, 0.0], [0.0, -2.0], [1e-3, 0.0]])
    np.testing.assert_allclose(rows, [[0.6, 0.8], [0.0, 0.0], [0.0, -1.0], [1.0, 0.0]])
    np.testing.assert_allclose(np.linalg.norm(rows, axis=1), [1.0, 0.0, 1.0, 1.0])
    with pytest.raises(ValueError, match=r"vectors must be a 2-D array"):
        unit_rows([1.0, 2.0])


def test_concatenation_weights_scale_each_part_and_rank_by_the_weighted_cosines():
    a = SenseEmbeddings(["x%1:00:00::", "y%1:00:00::"], [[1.0, 0.0], [0.0, 1.0]], [1, 1])
    b = SenseEmbeddings(["x%1:00:00::", "y%1:00:00::"], [[0.0, 1.0], [1.0, 0.0]], [1, 1])
    joined = concatenate_sense_embeddings(a, b, weights=[1.0, 0.5])
    np.testing.assert_allclose(joined.matrix, [[1.0, 0.0, 0.0, 0.5], [0.0, 1.0, 0.5, 0.0]])
    query = np.concatenate([unit_rows([[0.8, 0.6]])] * 2, axis=1)
    # x: 0.8 + 0.5 * 0.6 = 1.1 against y: 0.6 + 0.5 * 0.8 = 1.0; equal weights would tie.
    np.testing.assert_allclose(joined.matrix @ query[0], [1.1, 1.0])
    for bad in ([1.0], [1.0, 0.0], [1.0, -2.0], [True, 1.0], ["1", 1.0]):
        with pytest.raises(ValueError, match=r"weights must be 2 positive numbers, one per input"):
            concatenate_sense_embeddings(a, b, weights=bad)


def test_fill_takes_the_primary_vector_where_there_is_one():
    primary = SenseEmbeddings(["x%1:00:00::"], [[1.0, 0.0]], [3])
    fallback = SenseEmbeddings(["x%1:00:00::", "y%1:00:00::"], [[0.0, 1.0], [1.0, 1.0]], [1, 1])
    filled, sources = fill_sense_embeddings(primary, fallback)
    assert filled.keys == ("x%1:00:00::", "y%1:00:00::") and filled.counts.tolist() == [3, 1]
    np.testing.assert_allclose(filled.matrix, [[1.0, 0.0], [1.0, 1.0]])
    assert sources == {"x%1:00:00::": "primary", "y%1:00:00::": "fallback"}
    with pytest.raises(ValueError, match="the same dimension; received 2 and 3"):
        fill_sense_embeddings(primary, SenseEmbeddings(["x%1:00:00::"], [[0.0, 1.0, 2.0]], [1]))
