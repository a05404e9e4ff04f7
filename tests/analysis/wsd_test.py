import numpy as np
import pytest

from kbert.analysis.wsd import (
    NearestSenseWSD,
    SenseEmbeddings,
    WsdPrediction,
    mfs_predictions,
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
    with pytest.raises(ValueError, match=r"vectors must be a 2-D array \(rows x dimensions\); "
                                         r"received shape \(3,\)"):
        SenseEmbeddings.fit([1.0, 2.0, 3.0], [FINANCE] * 3)
    with pytest.raises(ValueError, match=r"sense_keys must have one entry per row of vectors: "
                                         r"expected 2; received 1"):
        SenseEmbeddings.fit(np.zeros((2, 4)), [(FINANCE,)])
    with pytest.raises(ValueError, match=r"sense_keys\[1\] is empty"):
        SenseEmbeddings.fit(np.zeros((2, 4)), [(FINANCE,), ()])
    with pytest.raises(ValueError, match=r"vectors must be finite; row 1 has NaN"):
        SenseEmbeddings.fit([[0.0], [np.nan]], [FINANCE, RIVER])
    with pytest.raises(ValueError, match=r"on_unknown must be one of \('error', 'skip'\); "
                                         r"received 'ignore'"):
        SenseEmbeddings.fit([[0.0]], [FINANCE], on_unknown="ignore")
    with pytest.raises(ValueError, match=r"keys, matrix rows and counts must match"):
        SenseEmbeddings([FINANCE], np.zeros((2, 3)), [1, 1])


def test_keys_outside_the_inventory_are_refused_or_skipped(tiny):
    unknown = [f"bank%1:99:0{i}::" for i in range(7)]
    vectors = np.arange(16, dtype=float).reshape(8, 2)
    rows = [(RIVER,)] + [(key,) for key in unknown]
    rows[1] = (RIVER, unknown[0])
    with pytest.raises(ValueError, match=r"7 sense key\(s\) are not in the inventory, e.g. "
                                         r"\['bank%1:99:00::', 'bank%1:99:01::', "
                                         r"'bank%1:99:02::', 'bank%1:99:03::', "
                                         r"'bank%1:99:04::'\]; expected WordNet sense keys"):
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
    with pytest.raises(ValueError, match=r"other.npz: expected the arrays 'keys', 'matrix' and "
                                         r"'counts' .*; missing \['keys', 'counts'\]"):
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
    senses = SenseEmbeddings.fit([[0.0, 1.0], [10.0, 1.0], [-5.0, -5.0]],
                                 [FINANCE, RIVER, "bank%2:40:11::"])
    wsd = NearestSenseWSD(senses, tiny)
    predictions = wsd.predict([[0.1, 1.0], [3.0, 0.2], [-1.0, -1.0]], ["bank", "Bank", "bank"],
                              "NOUN")
    # The third is nearest to the verb sense, which is not a noun candidate.
    assert predictions == [WsdPrediction(FINANCE, "nearest"), WsdPrediction(RIVER, "nearest"),
                           WsdPrediction(FINANCE, "nearest")]
    # A tie goes to the lower sense number; a zero vector ties everything.
    assert wsd.predict([[0.0, 0.0]], ["bank"], ["n"]) == [WsdPrediction(FINANCE, "nearest")]
    assert wsd.predict([[-1.0, -1.0]], ["bank"], ["VERB"]) == [
        WsdPrediction("bank%2:40:11::", "nearest")]


def test_no_embedded_candidate_falls_back_to_mfs_and_unknown_lemmas_are_unanswered(tiny):
    senses = SenseEmbeddings.fit([[1.0, 0.0]], [RIVER])
    wsd = NearestSenseWSD(senses, tiny)
    predictions = wsd.predict(np.ones((4, 2)), ["bank", "capable", "zebra", "able"],
                              ["NOUN", "ADJ", "NOUN", "NOUN"])
    assert predictions == [WsdPrediction(RIVER, "nearest"),
                           WsdPrediction("capable%5:00:01:able:03", "mfs"),
                           WsdPrediction(None, "unknown_lemma"),
                           WsdPrediction(None, "unknown_lemma")]  # able is no noun


def test_predict_checks_shapes_and_pos(tiny):
    wsd = NearestSenseWSD(SenseEmbeddings.fit([[1.0, 0.0]], [RIVER]), tiny)
    with pytest.raises(ValueError, match=r"vectors must have the sense embeddings' dimension 2; "
                                         r"received shape \(1, 3\)"):
        wsd.predict(np.ones((1, 3)), ["bank"], "NOUN")
    with pytest.raises(ValueError, match=r"lemmas and pos must have one entry per row of "
                                         r"vectors: expected 2; received 1 lemmas and 2 pos"):
        wsd.predict(np.ones((2, 2)), ["bank"], "NOUN")
    with pytest.raises(ValueError, match=r"vectors must be a 2-D array"):
        wsd.predict(np.ones(2), ["bank"], "NOUN")
    with pytest.raises(ValueError, match=r"part of speech must be one of"):
        wsd.predict(np.ones((1, 2)), ["bank"], ["PROPN"])


def test_mfs_predictions_take_the_first_sense_and_skip_unknown_lemmas(tiny):
    sentence = WsdSentence("d0.s0", ("bank", "zebra", "capable"), ("bank", "zebra", "capable"),
                           ("NOUN", "NOUN", "ADJ"))
    instances = (WsdInstance("d0.s0.t0", 0, 0, "bank", "NOUN", (RIVER,)),
                 WsdInstance("d0.s0.t1", 0, 1, "zebra", "NOUN", ("zebra%1:05:00::",)),
                 WsdInstance("d0.s0.t2", 0, 2, "capable", "ADJ", ("capable%5:00:01:able:03",)))
    corpus = WsdCorpus("toy", (sentence,), instances, "toy.data.xml")
    predictions = mfs_predictions(corpus, tiny)
    assert predictions == {"d0.s0.t0": FINANCE, "d0.s0.t2": "capable%5:00:01:able:03"}
    scores = wsd_scores(predictions, corpus.gold())
    assert (scores["precision"], scores["answered"], scores["total"]) == (50.0, 2, 3)
    assert scores["recall"] == pytest.approx(100 / 3)


@pytest.mark.slow
def test_mfs_reproduces_the_frameworks_wordnet_first_sense_baseline(data_root):
    # Raganato et al. (2017), Table: the "WN 1st sense" row, F1 in percent to one decimal.
    published = {"senseval2": 66.8, "senseval3": 66.2, "semeval2007": 55.2, "semeval2013": 63.0,
                 "semeval2015": 67.8, "ALL": 65.2}
    wordnet = load_wordnet()
    for name in WSD_EVALUATION_SETS + ("ALL",):
        corpus = load_wsd_set(name, data_dir=data_root)
        scores = wsd_scores(mfs_predictions(corpus, wordnet), corpus.gold())
        assert scores["answered"] == scores["total"]  # WordNet knows every instance's lemma
        assert round(scores["f1"], 1) == published[name], name
