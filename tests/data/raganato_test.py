import collections

import pytest

from kbert.data.raganato import (
    WSD_EVALUATION_SETS,
    WsdCorpus,
    WsdInstance,
    WsdSentence,
    load_wsd_set,
    read_raganato,
    wsd_scores,
)

XML = """<?xml version="1.0" encoding="UTF-8" ?>
<corpus lang="en" source="toy">
<text id="d000">
<sentence id="d000.s000">
<wf lemma="the" pos="DET">The</wf>
<instance id="d000.s000.t000" lemma="art" pos="NOUN">art</instance>
<wf lemma="of" pos="ADP">of</wf>
<instance id="d000.s000.t001" lemma="change_ringing" pos="NOUN">change-ringing</instance>
</sentence>
<sentence id="d000.s001">
<wf lemma="new_york" pos="NOUN">New York</wf>
<instance id="d000.s001.t000" lemma="peculiar" pos="ADJ">peculiar</instance>
</sentence>
</text>
</corpus>
"""
GOLD = (
    "d000.s000.t000 art%1:09:00::\n"
    "d000.s000.t001 change_ringing%1:04:00::\n"
    "d000.s001.t000 peculiar%5:00:00:specific:00 peculiar%5:00:00:characteristic:00\n"
)


def _write(folder, name, xml=XML, gold=GOLD):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.data.xml").write_text(xml, encoding="utf-8")
    (folder / f"{name}.gold.key.txt").write_text(gold, encoding="utf-8")
    return folder / f"{name}.data.xml", folder / f"{name}.gold.key.txt"


def _all_style():
    """A corpus with ALL's set-prefixed ids: two sets, three sentences."""
    sentences = tuple(
        WsdSentence(f"{s}.d000.s00{i}", ("bank",), ("bank",), ("NOUN",))
        for s, i in (("senseval2", 0), ("senseval2", 1), ("semeval2007", 0))
    )
    instances = tuple(
        WsdInstance(f"{sentence.id}.t000", index, 0, "bank", "NOUN", (f"bank%1:17:0{index}::",))
        for index, sentence in enumerate(sentences)
    )
    return WsdCorpus("ALL", sentences, instances, "ALL.data.xml")


def test_reads_sentences_instances_and_gold_keys(tmp_path):
    corpus = read_raganato(*_write(tmp_path, "toy"))
    assert corpus.name == "toy" and corpus.source == str(tmp_path / "toy.data.xml")
    assert corpus.sentences[0] == WsdSentence(
        "d000.s000",
        ("The", "art", "of", "change-ringing"),
        ("the", "art", "of", "change_ringing"),
        ("DET", "NOUN", "ADP", "NOUN"),
    )
    assert corpus.sentences[1].words == ("New York", "peculiar")  # one word each, as written
    assert corpus.instances[2] == WsdInstance(
        "d000.s001.t000",
        1,
        1,
        "peculiar",
        "ADJ",
        ("peculiar%5:00:00:specific:00", "peculiar%5:00:00:characteristic:00"),
    )
    for instance in corpus.instances:
        sentence = corpus.sentences[instance.sentence_index]
        assert sentence.lemmas[instance.word_index] == instance.lemma
    assert corpus.gold()["d000.s001.t000"] == {
        "peculiar%5:00:00:specific:00",
        "peculiar%5:00:00:characteristic:00",
    }
    assert read_raganato(*_write(tmp_path, "toy"), name="mine").name == "mine"


def test_instances_and_gold_lines_must_match(tmp_path):
    xml, gold = _write(tmp_path, "a", gold=GOLD.split("\n", 1)[1])
    with pytest.raises(
        ValueError,
        match=r"a.gold.key.txt: has no line for instance "
        r"'d000.s000.t000' of .*a.data.xml",
    ):
        read_raganato(xml, gold)
    xml, gold = _write(tmp_path, "b", gold=GOLD + "d000.s009.t000 art%1:09:00::\n")
    with pytest.raises(
        ValueError,
        match=r"b.gold.key.txt: 1 gold line\(s\) name no instance of "
        r".*b.data.xml, e.g. 'd000.s009.t000'",
    ):
        read_raganato(xml, gold)
    xml, gold = _write(tmp_path, "c", gold=GOLD + "d000.s000.t000 art%1:09:01::\n")
    with pytest.raises(
        ValueError,
        match=r"c.gold.key.txt:4: instance 'd000.s000.t000' appears "
        r"twice",
    ):
        read_raganato(xml, gold)
    xml, gold = _write(tmp_path, "d", gold=GOLD + "d000.s000.t003\n")
    with pytest.raises(ValueError, match=r"d.gold.key.txt:4: expected `instance_id key"):
        read_raganato(xml, gold)


def test_malformed_xml_is_named(tmp_path):
    xml, gold = _write(tmp_path, "broken", xml=XML.replace("</sentence>\n</text>", "</text>"))
    with pytest.raises(
        ValueError,
        match=r"broken.data.xml: expected well-formed XML in the "
        r"Raganato format; found malformed XML",
    ):
        read_raganato(xml, gold)
    xml, gold = _write(tmp_path, "noid", xml=XML.replace(' id="d000.s001.t000"', ""))
    with pytest.raises(
        ValueError,
        match=r"noid.data.xml: sentence 'd000.s001': <instance> has "
        r"no 'id' attribute",
    ):
        read_raganato(xml, gold)
    xml, gold = _write(
        tmp_path, "tag", xml=XML.replace('<wf lemma="of" pos="ADP">of</wf>', "<w>of</w>")
    )
    with pytest.raises(
        ValueError,
        match=r"tag.data.xml: sentence 'd000.s000': expected <wf> or "
        r"<instance> elements; found <w>",
    ):
        read_raganato(xml, gold)


def test_without_sets_drops_instances_and_reindexes_sentences():
    corpus = _all_style()
    rest = corpus.without_sets(["senseval2"])
    assert rest.name == "ALL-without-senseval2"
    assert [s.id for s in rest.sentences] == ["semeval2007.d000.s000"]
    assert rest.instances == (
        WsdInstance("semeval2007.d000.s000.t000", 0, 0, "bank", "NOUN", ("bank%1:17:02::",)),
    )
    assert rest.gold() == {"semeval2007.d000.s000.t000": {"bank%1:17:02::"}}
    assert corpus.without_sets("semeval2007").instances == corpus.instances[:2]
    assert corpus.without_sets([]).instances == corpus.instances
    with pytest.raises(
        ValueError,
        match=r"no instance id of corpus 'ALL' starts with "
        r"'senseval3.'; expected set names among "
        r"\['semeval2007', 'senseval2'\]",
    ):
        corpus.without_sets(["senseval2", "senseval3"])


def test_scores_follow_the_framework_scorer():
    gold = {
        "t1": {"a%1:00:00::"},
        "t2": {"b%1:00:00::", "b%1:00:01::"},
        "t3": {"c%1:00:00::"},
        "t4": {"d%1:00:00::"},
    }
    predictions = {
        "t1": "a%1:00:00::",  # ok 1
        "t2": ["b%1:00:01::", "b%1:00:09::"],  # ok 1/2, notok 1/2
        "t3": ["c%1:00:09::", "c%1:00:09::"],  # notok 1 (repeats count once)
        "t4": None,
    }  # unanswered
    scores = wsd_scores(predictions, gold)
    assert scores["answered"] == 3 and scores["total"] == 4
    assert scores["precision"] == pytest.approx(100 * 1.5 / 3)
    assert scores["recall"] == pytest.approx(100 * 1.5 / 4)
    assert scores["f1"] == pytest.approx(2 * 50 * 37.5 / 87.5)
    # Leaving an instance out, giving None or an empty list are the same.
    del predictions["t4"]
    assert wsd_scores(predictions, gold) == scores
    assert wsd_scores({**predictions, "t4": []}, gold) == scores
    assert wsd_scores({}, gold) == {
        "precision": 0.0,
        "recall": 0.0,
        "f1": 0.0,
        "answered": 0,
        "total": 4,
    }
    perfect = wsd_scores({"t1": "a%1:00:00::"}, {"t1": "a%1:00:00::"})
    assert perfect["f1"] == 100.0


def test_scores_refuse_unknown_ids_and_empty_gold():
    with pytest.raises(
        ValueError,
        match=r"2 prediction id\(s\) are not in gold, e.g. "
        r"\['x', 'y'\]",
    ):
        wsd_scores({"x": "a%1:00:00::", "t1": None, "y": None}, {"t1": {"a%1:00:00::"}})
    with pytest.raises(ValueError, match="gold is empty"):
        wsd_scores({}, {})


def test_load_wsd_set_finds_local_files_including_semcor(tmp_path):
    with pytest.raises(
        ValueError,
        match=r"WSD set must be one of \('senseval2', 'senseval3', "
        r"'semeval2007', 'semeval2013', 'semeval2015', 'ALL', "
        r"'semcor'\); received 'senseval4'",
    ):
        load_wsd_set("senseval4", data_dir=tmp_path)
    _write(tmp_path / "wsd_raganato2017" / "semcor", "semcor")
    corpus = load_wsd_set("semcor", data_dir=tmp_path)
    assert corpus.name == "semcor" and len(corpus.instances) == 3


def test_without_a_local_copy_the_framework_zip_is_downloaded(tmp_path, monkeypatch):
    import keras

    extracted = tmp_path / "cache" / "datasets" / "WSD_Evaluation_Framework"
    _write(extracted / "Evaluation_Datasets" / "semeval2015", "semeval2015")
    requested = []
    monkeypatch.setattr(
        keras.utils,
        "get_file",
        lambda name, url, **kwargs: (
            requested.append((name, url, kwargs["extract"])) or str(extracted)
        ),
    )
    monkeypatch.setenv("KBERT_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "empty").mkdir()
    corpus = load_wsd_set("semeval2015", data_dir=tmp_path / "empty")
    assert len(corpus.instances) == 3
    url = "http://lcl.uniroma1.it/wsdeval/data/WSD_Evaluation_Framework.zip"
    assert requested == [("WSD_Evaluation_Framework.zip", url, True)] * 2
    requested.clear()
    with pytest.raises(
        ValueError,
        match="semcor.data.xml not found under data directory .* there is no public download",
    ):
        load_wsd_set("semcor", data_dir=tmp_path / "empty", download=False)
    assert requested == []


# The real files read in well under a second each, so these stay in the fast tier.
def test_real_sets_have_the_documented_counts(data_root):
    # SOURCE.md: sentences, tokens, instances, instances with >1 gold key, POS of instances.
    expected = {
        "senseval2": (242, 5766, 2282, 103, {"NOUN": 1066, "VERB": 517, "ADJ": 445, "ADV": 254}),
        "senseval3": (352, 5541, 1850, 37, {"NOUN": 900, "VERB": 588, "ADJ": 350, "ADV": 12}),
        "semeval2007": (135, 3201, 455, 4, {"NOUN": 159, "VERB": 296}),
        "semeval2013": (306, 8391, 1644, 12, {"NOUN": 1644}),
        "semeval2015": (138, 2604, 1022, 184, {"NOUN": 531, "VERB": 251, "ADJ": 160, "ADV": 80}),
        "ALL": (1173, 25503, 7253, 340, {"NOUN": 4300, "VERB": 1652, "ADJ": 955, "ADV": 346}),
    }
    for name, (sentences, tokens, instances, multiple, pos) in expected.items():
        corpus = load_wsd_set(name, data_dir=data_root)
        assert len(corpus.sentences) == sentences
        assert sum(len(s.words) for s in corpus.sentences) == tokens
        assert len(corpus.instances) == instances
        assert sum(len(i.gold_keys) > 1 for i in corpus.instances) == multiple
        assert collections.Counter(i.pos for i in corpus.instances) == pos
    first = load_wsd_set("senseval2", data_dir=data_root).instances[1]
    assert (first.id, first.lemma, first.gold_keys) == (
        "d000.s000.t001",
        "change_ringing",
        ("change_ringing%1:04:00::",),
    )


def test_real_all_splits_by_set_prefix(data_root):
    corpus = load_wsd_set("ALL", data_dir=data_root)
    assert corpus.instances[0].id == "senseval2.d000.s000.t000"
    sizes = collections.Counter(i.id.split(".")[0] for i in corpus.instances)
    assert sizes == {
        "senseval2": 2282,
        "senseval3": 1850,
        "semeval2007": 455,
        "semeval2013": 1644,
        "semeval2015": 1022,
    }
    assert tuple(sizes) == WSD_EVALUATION_SETS
    rest = corpus.without_sets(["senseval2", "senseval3"])
    assert len(rest.instances) == 455 + 1644 + 1022
    for instance in rest.instances:
        sentence = rest.sentences[instance.sentence_index]
        assert sentence.id == instance.id.rsplit(".", 1)[0]
        assert sentence.lemmas[instance.word_index] == instance.lemma
