import collections
import re

import pytest

from kbert.data.data_dir import data_dir
from kbert.data.raganato import WsdInstance, WsdSentence
from kbert.data.semcor import SEMCOR_PARTS, load_semcor, read_semcor, semcor_counts

# Toy tagfiles in SemCor 3.0's format, one per part, with every variant of the real files'
# lines (a backslash at a line's end continues it: each <wf> is one line).
BR_A01 = """<contextfile concordance=brown>
<context filename=br-a01 paras=yes>
<p pnum=1>
<s snum=1>
<wf cmd=ignore pos=DT>The</wf>
<wf cmd=done rdf=group pos=NNP lemma=group wnsn=1 lexsn=1:03:00:: pn=group>\
Fulton_County_Grand_Jury</wf>
<wf cmd=done pos=VB lemma=say wnsn=1 lexsn=2:32:00::>said</wf>
<wf cmd=done pos=JJ lemma=recent wnsn=2 lexsn=5:00:00:past:00>recent</wf>
<wf cmd=done pos=NN lemma=year wnsn=2;1 lexsn=1:28:02::;1:28:01::>year</wf>
<wf cmd=done pos=RB ot=notag>in</wf>
<wf cmd=done sep="-" pos=JJ lemma=west wnsn=1 lexsn=3:00:00::>West</wf>
<punc>``</punc>
<wf cmd=done pos=VB lemma=take_place wnsn=1 lexsn=2:30:00::>took_place</wf>
<punc>.</punc>
</s>
</p>
<p pnum=2>
<s snum=2>
<wf cmd=done pos=NN lemma=process wnsn=0;1 lexsn=1:22:00::;1:04:00::>processes</wf>
<wf cmd=done pos=JJ lemma=such wnsn=0 lexsn=5:00:01:specified:00>such</wf>
<wf cmd=done pos=JJ lemma=one wnsn=1;2 lexsn=5:00:01:single(a):00;5:00:02:single(a):00>\
one</wf>
<wf cmd=done pos=VB lemma=cut_corners wnsn=1 lexsn=2:36:00::>corner</wf>
<wf cmd=ignore dc=-1 rdf=cut_corners pos=VB>cut</wf>
<wf cmd=tag pos=MD|VB>shouldda</wf>
<wf cmd=done rdf= pos=NN ot=notag>65</wf>
<wf cmd=done pos=VB ot=idiom>took_a_swipe_at</wf>
</s>
</p>
</context>
</contextfile>
"""
BR_E30 = """<contextfile concordance=brown1>
<context filename=br-e30 paras=yes>
<p pnum=1>
<s snum=7>
<wf cmd=done pos=JJ lemma=heavy wnsn=0;1 lexsn=5:00:00:wide:00;3:00:01::>heavy</wf>
<wf cmd=done pos=RB lemma=visibly wnsn=1 lexsn=4:02:00::>visibly</wf>
<wf cmd=verify_tag pos=VBZ>'s</wf>
</s>
</p>
</context>
</contextfile>
"""
BR_A06 = """<contextfile concordance=brown>
<context filename=br-a06 paras=yes>
<p pnum=1>
<s snum=1>
<wf cmd=tag pos=NN>bill</wf>
<wf cmd=ignore pos=TO>_to</wf>
<wf cmd=done pos=VB lemma=pass wnsn=3 lexsn=2:41:00::>pass</wf>
<punc>!</punc>
</s>
</p>
</context>
</contextfile>
"""
FILES = {"brown1": {"br-a01": BR_A01}, "brown2": {"br-e30": BR_E30}, "brownv": {"br-a06": BR_A06}}


def _write(root, files=None):
    """Writes `files` ({part: {name: text or bytes}}, default FILES) under `root`; returns root."""
    for part, texts in (FILES if files is None else files).items():
        folder = root / part / "tagfiles"
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in texts.items():
            data = text if isinstance(text, bytes) else text.encode("utf-8")
            (folder / name).write_bytes(data)
    return root


def test_reads_sentences_words_lemmas_and_tags(tmp_path):
    corpus = read_semcor(_write(tmp_path))
    assert corpus.name == "semcor" and corpus.source == str(tmp_path)
    assert [s.id for s in corpus.sentences] == [
        "br-a01.s001",
        "br-a01.s002",
        "br-e30.s007",
        "br-a06.s001",
    ]
    first, second, third, fourth = corpus.sentences
    assert first == WsdSentence(
        "br-a01.s001",
        (
            "The",
            "Fulton County Grand Jury",
            "said",
            "recent",
            "year",
            "in",
            "West",
            "``",
            "took place",
            ".",
        ),
        ("the", "group", "say", "recent", "year", "in", "west", "``", "take_place", "."),
        ("DET", "NOUN", "VERB", "ADJ", "NOUN", "ADV", "ADJ", "PUNCT", "VERB", "PUNCT"),
    )
    # wnsn=0 only ("such") keeps its lemma and its Penn tag; untagged multiwords get the
    # lowercased surface as lemma; "MD|VB" reads as MD; an empty `rdf=` is accepted.
    assert second == WsdSentence(
        "br-a01.s002",
        ("processes", "such", "one", "corner", "cut", "shouldda", "65", "took a swipe at"),
        ("process", "such", "one", "cut_corners", "cut", "shouldda", "65", "took_a_swipe_at"),
        ("NOUN", "ADJ", "ADJ", "VERB", "VERB", "AUX", "NOUN", "VERB"),
    )
    assert third.pos == ("ADJ", "ADV", "VERB")
    assert fourth == WsdSentence(
        "br-a06.s001",
        ("bill", "to", "pass", "!"),
        ("bill", "to", "pass", "!"),
        ("NOUN", "PART", "VERB", "PUNCT"),
    )


def test_instances_and_gold_keys(tmp_path):
    corpus = read_semcor(_write(tmp_path))
    assert corpus.instances == (
        WsdInstance("br-a01.s001.t000", 0, 1, "group", "NOUN", ("group%1:03:00::",)),
        WsdInstance("br-a01.s001.t001", 0, 2, "say", "VERB", ("say%2:32:00::",)),
        WsdInstance("br-a01.s001.t002", 0, 3, "recent", "ADJ", ("recent%5:00:00:past:00",)),
        WsdInstance("br-a01.s001.t003", 0, 4, "year", "NOUN", ("year%1:28:02::", "year%1:28:01::")),
        WsdInstance("br-a01.s001.t004", 0, 6, "west", "ADJ", ("west%3:00:00::",)),
        WsdInstance("br-a01.s001.t005", 0, 8, "take_place", "VERB", ("take_place%2:30:00::",)),
        # wnsn=0;1: the wnsn-0 key is dropped; "such" (wnsn=0 only) is no instance.
        WsdInstance("br-a01.s002.t000", 1, 0, "process", "NOUN", ("process%1:04:00::",)),
        # The head word's adjective marker is dropped, as WordNet's sense keys spell it.
        WsdInstance(
            "br-a01.s002.t001",
            1,
            2,
            "one",
            "ADJ",
            ("one%5:00:01:single:00", "one%5:00:02:single:00"),
        ),
        WsdInstance("br-a01.s002.t002", 1, 3, "cut_corners", "VERB", ("cut_corners%2:36:00::",)),
        # A satellite (5) and a head adjective (3) key: both ADJ.
        WsdInstance("br-e30.s007.t000", 2, 0, "heavy", "ADJ", ("heavy%3:00:01::",)),
        WsdInstance("br-e30.s007.t001", 2, 1, "visibly", "ADV", ("visibly%4:02:00::",)),
        WsdInstance("br-a06.s001.t000", 3, 2, "pass", "VERB", ("pass%2:41:00::",)),
    )
    for instance in corpus.instances:
        sentence = corpus.sentences[instance.sentence_index]
        assert sentence.lemmas[instance.word_index] == instance.lemma
        assert sentence.pos[instance.word_index] == instance.pos
    assert corpus.gold()["br-a01.s001.t003"] == {"year%1:28:02::", "year%1:28:01::"}


def test_a_lemma_without_lexsn_is_only_a_lemma(tmp_path):
    # Not in SemCor 3.0, but the format allows it: a lemmatized, untagged word.
    text = BR_A06.replace(
        "<wf cmd=tag pos=NN>bill</wf>", "<wf cmd=done pos=NNS lemma=bill>bills</wf>"
    )
    _write(tmp_path, {"brownv": {"br-a06": text}})
    corpus = read_semcor(tmp_path, parts="brownv")
    assert corpus.sentences[0].lemmas[:2] == ("bill", "to")
    assert corpus.sentences[0].pos[0] == "NOUN"
    assert [i.lemma for i in corpus.instances] == ["pass"]
    assert semcor_counts(tmp_path, parts="brownv")["total"]["tagged"] == 1


def test_parts_order_and_max_sentences(tmp_path):
    _write(tmp_path)
    corpus = read_semcor(tmp_path, parts=("brownv", "brown1"))
    assert [s.id for s in corpus.sentences] == ["br-a06.s001", "br-a01.s001", "br-a01.s002"]
    assert read_semcor(tmp_path, parts="brown2").instances[0].id == "br-e30.s007.t000"
    first = read_semcor(tmp_path, max_sentences=1)
    assert [s.id for s in first.sentences] == ["br-a01.s001"]
    assert len(first.instances) == 6
    two = read_semcor(tmp_path, parts=("brown2", "brownv", "brown1"), max_sentences=2)
    assert [s.id for s in two.sentences] == ["br-e30.s007", "br-a06.s001"]
    assert [i.sentence_index for i in two.instances] == [0, 0, 1]
    assert read_semcor(tmp_path, max_sentences=99) == read_semcor(tmp_path)
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(
            ValueError,
            match=f"max_sentences must be a positive int or None; received {re.escape(repr(bad))}",
        ):
            read_semcor(tmp_path, max_sentences=bad)
    for bad in ((), ("brown3",), ("brown1", "brown1")):
        with pytest.raises(
            ValueError,
            match=r"parts must be distinct names among \('brown1', "
            r"'brown2', 'brownv'\); received",
        ):
            read_semcor(tmp_path, parts=bad)


def test_counts(tmp_path):
    counts = semcor_counts(_write(tmp_path))
    assert list(counts) == [*SEMCOR_PARTS, "total"] == ["brown1", "brown2", "brownv", "total"]
    assert counts["brown1"] == {
        "documents": 1,
        "sentences": 2,
        "wf": 16,
        "punc": 2,
        "tagged": 10,
        "unmapped": 1,
        "instances": 9,
        "gold_keys": 11,
        "head_markers_stripped": 2,
    }
    assert counts["brown2"] == {
        "documents": 1,
        "sentences": 1,
        "wf": 3,
        "punc": 0,
        "tagged": 2,
        "unmapped": 0,
        "instances": 2,
        "gold_keys": 2,
        "head_markers_stripped": 0,
    }
    assert counts["total"] == {
        "documents": 3,
        "sentences": 4,
        "wf": 22,
        "punc": 3,
        "tagged": 13,
        "unmapped": 1,
        "instances": 12,
        "gold_keys": 14,
        "head_markers_stripped": 2,
    }
    corpus = read_semcor(tmp_path)
    assert counts["total"]["instances"] == len(corpus.instances)
    assert counts["total"]["gold_keys"] == sum(len(i.gold_keys) for i in corpus.instances)
    assert semcor_counts(tmp_path, parts=("brownv",))["total"]["documents"] == 1


def _line_of(text, fragment):
    return next(n for n, line in enumerate(text.split("\n"), 1) if fragment in line)


# (description, old line fragment -> new text, fragment of the expected message)
MALFORMED = [
    (
        "unknown line",
        "<wf cmd=ignore pos=DT>The</wf>",
        "<w>The</w>",
        "expected a tagfile line (<contextfile>, <context>, <p>, <s>, <wf …>word</wf>",
    ),
    (
        "bad wf",
        "<wf cmd=ignore pos=DT>The</wf>",
        "<wf cmd=ignore pos=DT>The",
        "expected `<wf name=value …>word</wf>`; found '<wf cmd=ignore pos=DT>The'",
    ),
    ("bad punc", "<punc>.</punc>", "<punc></punc>", "expected `<punc>mark</punc>`"),
    (
        "wf outside s",
        "<p pnum=2>",
        "<wf cmd=ignore pos=DT>The</wf>",
        "expected <wf> inside <s snum=…> … </s>; found it outside a sentence",
    ),
    ("punc outside s", "<p pnum=2>", "<punc>.</punc>", "expected <punc> inside <s snum=…>"),
    (
        "s inside s",
        "<punc>``</punc>",
        "<s snum=9>",
        "expected </s> before a new <s>; the <s> of line 4 is not closed",
    ),
    (
        "p inside s",
        "<punc>``</punc>",
        "</p>",
        "expected </s> before '</p>'; the <s> of line 4 is not closed",
    ),
    ("stray </s>", "<p pnum=2>", "</s>", "found </s> with no open <s snum=…>"),
    ("bad s", "<s snum=2>", "<s snum=two>", "expected `<s snum=N>`; found '<s snum=two>'"),
    (
        "repeated snum",
        "<s snum=2>",
        "<s snum=1>",
        "expected unique sentence numbers in a file; snum=1 appears twice",
    ),
    (
        "count mismatch",
        "wnsn=2;1 lexsn=1:28:02::;1:28:01::",
        "wnsn=2;1 lexsn=1:28:02::",
        "expected as many ';'-separated wnsn as lexsn values; found wnsn=2;1 (2) and "
        "lexsn=1:28:02:: (1)",
    ),
    (
        "wnsn without lexsn",
        "pos=RB ot=notag>in",
        "pos=RB wnsn=1>in",
        "expected as many ';'-separated wnsn as lexsn values; found wnsn=1 and no lexsn=",
    ),
    (
        "bad wnsn",
        "wnsn=2;1 lexsn",
        "wnsn=2;x lexsn",
        "expected wnsn values that are non-negative integers; found wnsn=2;x",
    ),
    (
        "short lexsn",
        "lexsn=2:32:00::",
        "lexsn=2:32::",
        "expected each lexsn as ss_type:lex_filenum:lex_id:head_word:head_id",
    ),
    (
        "satellite without head",
        "lexsn=5:00:00:past:00",
        "lexsn=5:00:00::",
        "expected each lexsn as ss_type:lex_filenum:lex_id:head_word:head_id (e.g. 1:09:00:: or "
        "5:00:00:past:00); found '5:00:00::'",
    ),
    (
        "head on a noun",
        "lexsn=1:03:00::",
        "lexsn=1:03:00:past:00",
        "expected each lexsn as ss_type:lex_filenum:lex_id:head_word:head_id (e.g. 1:09:00:: or "
        "5:00:00:past:00); found '1:03:00:past:00'",
    ),
    (
        "lexsn without lemma",
        "pos=VB lemma=say wnsn=1",
        "pos=VB wnsn=1",
        "expected a <wf> with lexsn= to have a lemma= and a wnsn= as well",
    ),
    (
        "keys of two parts of speech",
        "lexsn=1:28:02::;1:28:01::",
        "lexsn=1:28:02::;2:28:01::",
        "expected the sense keys of one word to share a part of speech; found "
        "['year%1:28:02::', 'year%2:28:01::'] (['NOUN', 'VERB'])",
    ),
    (
        "unknown Penn tag",
        "pos=DT>The",
        "pos=ZZ>The",
        "expected a Penn Treebank tag among ['#', '$', \"''\"",
    ),
    (
        "no pos",
        "<wf cmd=ignore pos=DT>The</wf>",
        "<wf cmd=ignore>The</wf>",
        "expected a pos= attribute on every <wf>",
    ),
    ("empty word", "pos=RB ot=notag>in", "pos=RB ot=notag>_", "expected a word between"),
]


@pytest.mark.parametrize(
    "old, new, message", [case[1:] for case in MALFORMED], ids=[case[0] for case in MALFORMED]
)
def test_malformed_lines_are_named_by_file_and_line(tmp_path, old, new, message):
    assert BR_A01.count(old) == 1
    line = _line_of(BR_A01, old)
    _write(tmp_path, {**FILES, "brown1": {"br-a01": BR_A01.replace(old, new)}})
    with pytest.raises(ValueError, match=re.escape(f"br-a01:{line}: {message}")):
        read_semcor(tmp_path)
    with pytest.raises(ValueError, match=re.escape(f"br-a01:{line}: {message}")):
        semcor_counts(tmp_path)


def test_unclosed_sentence_and_bad_bytes_are_named(tmp_path):
    cut = BR_E30.split("</s>")[0]  # ends after the last <wf> line, line 7
    _write(tmp_path, {"brown2": {"br-e30": cut}})
    with pytest.raises(
        ValueError,
        match=re.escape(
            "br-e30:7: expected </s> before the end of the file; the <s> of line 4 is not closed"
        ),
    ):
        read_semcor(tmp_path, parts=("brown2",))
    latin1 = BR_E30.replace("'s", "caf\u00e9").encode("latin-1")
    _write(tmp_path, {"brown2": {"br-e30": latin1}})
    with pytest.raises(
        ValueError,
        match=re.escape(
            "br-e30:7: expected UTF-8 (ASCII) text, as in SemCor 3.0; found byte b'\\xe9'"
        ),
    ):
        read_semcor(tmp_path, parts=("brown2",))


def test_folders_are_checked(tmp_path):
    with pytest.raises(
        ValueError, match="does not exist or is not a folder; expected the semcor3.0/ folder"
    ):
        read_semcor(tmp_path / "nowhere")
    _write(tmp_path, {"brown1": FILES["brown1"]})
    with pytest.raises(
        ValueError,
        match=r"SemCor part folder '.*brown2/tagfiles' is missing; "
        r"expected <semcor3.0>/brown2/tagfiles/",
    ):
        read_semcor(tmp_path)
    (tmp_path / "brown2" / "tagfiles").mkdir(parents=True)
    with pytest.raises(
        ValueError,
        match=r"SemCor part folder '.*brown2/tagfiles' holds no "
        r"tagfile",
    ):
        semcor_counts(tmp_path, parts=("brown1", "brown2"))
    _write(tmp_path, {"brown2": {"br-a01": BR_E30}})
    with pytest.raises(
        ValueError,
        match=r"tagfile name 'br-a01' is in both '.*brown1/tagfiles' "
        r"and '.*brown2/tagfiles'; expected unique document "
        r"names",
    ):
        read_semcor(tmp_path, parts=("brown1", "brown2"))


def test_load_semcor_finds_the_folder_or_downloads_it(tmp_path, monkeypatch):
    import keras

    _write(tmp_path / "data" / "semcor3.0")
    (tmp_path / "data" / "semcor3.0" / "README.semcor3.0").write_text("SemCor 3.0\n")
    corpus = load_semcor(data_dir=tmp_path / "data", max_sentences=2)
    assert corpus.source == str(tmp_path / "data" / "semcor3.0") and len(corpus.sentences) == 2
    (tmp_path / "empty").mkdir()
    requested = []
    monkeypatch.setattr(
        keras.utils,
        "get_file",
        lambda name, url, **kwargs: (
            requested.append((name, url, kwargs["extract"])) or str(tmp_path / "data")
        ),
    )
    monkeypatch.setenv("KBERT_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(
        ValueError,
        match=r"SemCor 3.0 not found: expected "
        r"semcor3.0/README.semcor3.0 under data directory "
        r"'.*empty'.*download=False",
    ):
        load_semcor(data_dir=tmp_path / "empty", download=False)
    assert requested == []
    # The archive (here: a fake extraction) holds semcor3.0/; its folder is read.
    corpus = load_semcor(data_dir=tmp_path / "empty", parts=("brownv",))
    url = "http://web.eecs.umich.edu/~mihalcea/downloads/semcor/semcor3.0.tar.gz"
    assert requested == [("semcor3.0.tar.gz", url, True)]
    assert [s.id for s in corpus.sentences] == ["br-a06.s001"]


@pytest.fixture(scope="module")
def semcor_dir():
    root = data_dir()
    if root is None or not (root / "semcor3.0").is_dir():
        pytest.fail(
            f"the slow tier needs SemCor: no semcor3.0/ under the data directory ({root}); "
            "set KBERT_DATA_DIR to a "
            "folder holding it"
        )
    return root / "semcor3.0"


@pytest.mark.slow
def test_real_counts_match_source_md(semcor_dir):
    counts = semcor_counts(semcor_dir)
    # SOURCE.md's table (documents, sentences, wf, punc, tagged); unmapped, instances, keys and
    # stripped head markers measured by this reader. 226,036 instances is also the number of
    # sense annotations Raganato et al. (2017) give for their SemCor.
    expected = {
        "brown1": (103, 11182, 198796, 30562, 106639, 3738, 102901, 103010, 391),
        "brown2": (83, 8956, 160936, 23994, 86000, 3632, 82368, 82881, 230),
        "brownv": (166, 17038, 316814, 47485, 41497, 730, 40767, 40804, 0),
        "total": (352, 37176, 676546, 102041, 234136, 8100, 226036, 226695, 621),
    }
    assert {part: tuple(values.values()) for part, values in counts.items()} == expected
    assert tuple(counts["total"]) == (
        "documents",
        "sentences",
        "wf",
        "punc",
        "tagged",
        "unmapped",
        "instances",
        "gold_keys",
        "head_markers_stripped",
    )


@pytest.mark.slow
def test_real_corpus_is_consistent_and_in_wordnet(semcor_dir):
    corpus = load_semcor(data_dir=semcor_dir.parent, download=False)
    assert len(corpus.sentences) == 37176 and len(corpus.instances) == 226036
    assert corpus.instances[0] == WsdInstance(
        "br-a01.s001.t000", 0, 1, "group", "NOUN", ("group%1:03:00::",)
    )
    assert len({s.id for s in corpus.sentences}) == 37176
    assert len(corpus.gold()) == 226036
    ss_type_pos = {"1": "NOUN", "2": "VERB", "3": "ADJ", "4": "ADV", "5": "ADJ"}
    for instance in corpus.instances:
        sentence = corpus.sentences[instance.sentence_index]
        assert instance.id.startswith(sentence.id + ".t")
        assert sentence.lemmas[instance.word_index] == instance.lemma
        assert sentence.pos[instance.word_index] == instance.pos
        for key in instance.gold_keys:
            lemma, lexsn = key.split("%")
            assert lemma == instance.lemma and ss_type_pos[lexsn[0]] == instance.pos, key
    assert collections.Counter(i.pos for i in corpus.instances) == {
        "NOUN": 87002,
        "VERB": 88334,
        "ADJ": 31753,
        "ADV": 18947,
    }

    from kbert.data.wordnet import load_wordnet

    try:
        wordnet = load_wordnet()
    except ValueError as error:
        pytest.fail(f"the slow tier needs WordNet 3.0 to check the gold keys against ({error})")
    keys = [key for instance in corpus.instances for key in instance.gold_keys]
    missing = collections.Counter(key for key in keys if key not in wordnet)
    print(
        f"SemCor gold keys not in WordNet 3.0: {sum(missing.values())} of {len(keys)}; "
        f"most common: {missing.most_common(10)}"
    )
    assert 1 - sum(missing.values()) / len(keys) >= 0.99
    found = [
        (instance, key)
        for instance in corpus.instances
        for key in instance.gold_keys
        if key in wordnet
    ]
    assert all(wordnet.pos_of(key) == instance.pos for instance, key in found)
