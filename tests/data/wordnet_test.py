from pathlib import Path

import pytest

from kbert.data import wordnet as wordnet_module
from kbert.data.wordnet import WordNet, load_wordnet, wordnet_dir

_HEADER = "  1 This software and database is being provided to you, the LICENSEE, by  \n"
# A tiny WordNet in the real files' format. Offsets need not be byte offsets here: the reader
# never seeks. bank's index line lists the financial sense first, against data-file order.
TINY_WORDNET = {
    "data.noun": [
        "00000100 17 n 02 bank 1 riverside 0 001 @ 00000300 n 0000 | sloping land beside a body "
        "of water  ",
        "00000200 14 n 02 bank 0 depository_financial_institution 0 001 @ 00000300 n 0000 | a "
        'financial institution; "he cashed a check at the bank"  ',
        "00000300 14 n 01 Institution 0 000 | an organization founded for a purpose  ",
        "00000400 17 n 02 Moon 1 moon 3 000 | the natural satellite of the Earth  ",
    ],
    "index.noun": [
        "bank n 2 1 @ 2 1 00000200 00000100  ",
        "depository_financial_institution n 1 1 @ 1 0 00000200  ",
        "institution n 1 0 1 0 00000300  ",
        "moon n 1 0 1 0 00000400  ",
        "riverside n 1 1 @ 1 0 00000100  ",
    ],
    "data.verb": [
        "00000500 40 v 01 bank b 001 @ 00000600 v 0000 01 + 02 00 | do business with a bank  ",
        "00000600 40 v 02 deal 0 do_business 0 000 01 + 02 00 | engage in commerce  ",
    ],
    "index.verb": [
        "bank v 1 1 @ 1 0 00000500  ",
        "deal v 1 0 1 0 00000600  ",
        "do_business v 1 0 1 0 00000600  ",
    ],
    # A head adjective whose word carries a marker, and its satellite (& points to the head).
    "data.adj": [
        "00000700 00 a 01 able(a) 3 001 & 00000800 a 0000 | having the necessary means or skill  ",
        "00000800 00 s 02 capable 1 competent(p) 0 001 & 00000700 a 0000 | able to do something "
        "well  ",
    ],
    "index.adj": [
        "able a 1 1 & 1 0 00000700  ",
        "capable a 1 1 & 1 0 00000800  ",
        "competent a 1 1 & 1 0 00000800  ",
    ],
    "data.adv": ["00000900 02 r 01 ably 0 001 \\ 00000700 a 0101 | with competence  "],
    "index.adv": ["ably r 1 1 \\ 1 0 00000900  "],
}


def write_tiny_wordnet(folder, **replace):
    """Writes `TINY_WORDNET` (with files replaced by `replace`, None to omit) into `folder`."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    files = {**TINY_WORDNET, **{name.replace("_", "."): lines for name, lines in replace.items()}}
    for name, lines in files.items():
        if lines is not None:
            (folder / name).write_text(
                _HEADER + "".join(line + "\n" for line in lines), encoding="utf-8"
            )
    return folder


@pytest.fixture
def tiny(tmp_path):
    return WordNet(write_tiny_wordnet(tmp_path / "wordnet"))


def test_keys_are_built_from_the_data_files(tiny):
    assert len(tiny) == 14
    for key in (
        "bank%1:17:01::",
        "bank%1:14:00::",
        "riverside%1:17:00::",
        "institution%1:14:00::",
        "bank%2:40:11::",
        "do_business%2:40:00::",
        "ably%4:02:00::",
    ):
        assert key in tiny
    assert "Institution%1:14:00::" not in tiny  # lemmas are lowercased in keys
    assert "bank%1:17:1::" not in tiny and "bank%1:17:01" not in tiny


def test_adjective_markers_are_stripped_and_satellites_name_their_head(tiny):
    assert "able%3:00:03::" in tiny and "able(a)%3:00:03::" not in tiny
    assert "capable%5:00:01:able:03" in tiny
    assert "competent%5:00:00:able:03" in tiny
    assert tiny.senses("competent", "ADJ") == ["competent%5:00:00:able:03"]
    assert tiny.pos_of("capable%5:00:01:able:03") == "ADJ"


def test_senses_follow_the_index_order_and_accept_both_pos_spellings(tiny):
    assert tiny.senses("bank", "NOUN") == ["bank%1:14:00::", "bank%1:17:01::"]
    assert tiny.senses(" Bank", "n") == tiny.senses("bank", "NOUN")
    assert tiny.senses("bank", "VERB") == ["bank%2:40:11::"]
    assert tiny.senses("Depository Financial Institution", "NOUN") == [
        "depository_financial_institution%1:14:00::"
    ]
    assert tiny.most_frequent_sense("bank", "NOUN") == "bank%1:14:00::"
    assert tiny.senses("ably", "r") == ["ably%4:02:00::"]


def test_unknown_lemmas_have_no_senses_and_unknown_pos_is_an_error(tiny):
    assert tiny.senses("zebra", "NOUN") == []
    assert tiny.senses("able", "NOUN") == []
    assert tiny.most_frequent_sense("zebra", "VERB") is None
    with pytest.raises(
        ValueError,
        match=r"part of speech must be one of \('NOUN', 'VERB', "
        r"'ADJ', 'ADV', 'n', 'v', 'a', 'r'\); received 's'",
    ):
        tiny.senses("capable", "s")


def test_a_lemma_twice_in_one_synset_has_two_keys_and_lists_the_first(tiny):
    assert "moon%1:17:01::" in tiny and "moon%1:17:03::" in tiny
    assert tiny.senses("moon", "NOUN") == ["moon%1:17:01::"]
    assert tiny.synset_offset("moon%1:17:03::") == tiny.synset_offset("moon%1:17:01::") == 400


def test_gloss_offset_lemma_and_pos_of_a_key(tiny):
    assert tiny.gloss("bank%1:14:00::") == (
        'a financial institution; "he cashed a check at the bank"'
    )
    assert tiny.gloss("riverside%1:17:00::") == tiny.gloss("bank%1:17:01::")
    assert tiny.synset_offset("bank%1:17:01::") == 100
    assert tiny.lemma_of("depository_financial_institution%1:14:00::") == (
        "depository_financial_institution"
    )
    assert [
        tiny.pos_of(key)
        for key in ("bank%1:14:00::", "bank%2:40:11::", "able%3:00:03::", "ably%4:02:00::")
    ] == ["NOUN", "VERB", "ADJ", "ADV"]
    for method in (tiny.gloss, tiny.synset_offset, tiny.lemma_of, tiny.pos_of):
        with pytest.raises(
            ValueError,
            match=r"'bank%1:99:00::' is not a sense key of the "
            r"WordNet at",
        ):
            method("bank%1:99:00::")


def test_synsets_members_hypernyms_and_lexnames(tiny):
    river = tiny.synset("bank%1:17:01::")
    assert river == ("n", 100) and tiny.synset("riverside%1:17:00::") == river
    assert tiny.synset_keys(river) == ("bank%1:17:01::", "riverside%1:17:00::")
    assert tiny.hypernyms(river) == (("n", 300),)
    assert tiny.synset_keys(("n", 300)) == ("institution%1:14:00::",)
    assert tiny.hypernyms(("n", 300)) == ()
    assert tiny.lexname(river) == "noun.object" and tiny.lexname(("n", 300)) == "noun.group"
    assert tiny.hypernyms(tiny.synset("bank%2:40:11::")) == (("v", 600),)
    assert tiny.lexname(("v", 600)) == "verb.possession"
    assert tiny.hypernyms(tiny.synset("capable%5:00:01:able:03")) == ()  # & is not a hypernym
    assert tiny.lexname(tiny.synset("ably%4:02:00::")) == "adv.all"
    # A lemma written twice in one synset lists both keys once each.
    assert tiny.synset_keys(tiny.synset("moon%1:17:01::")) == ("moon%1:17:01::", "moon%1:17:03::")
    for bad in (("n", 999), ("x", 100), "n100", None):
        with pytest.raises(
            ValueError,
            match=r"is not a synset of the WordNet .* expected a "
            r"\(letter, offset\) pair",
        ):
            tiny.synset_keys(bad)
    with pytest.raises(ValueError, match="is not a sense key"):
        tiny.synset("bank%1:99:00::")


def test_hypernym_pointers_and_lexnames_are_checked(tmp_path):
    with pytest.raises(
        ValueError,
        match=r"data.noun: synset 00000100 has a hypernym pointer to "
        r"00000999, which is not in the file",
    ):
        WordNet(
            write_tiny_wordnet(
                tmp_path / "a",
                data_noun=["00000100 17 n 01 bank 1 001 @ 00000999 n 0000 | sloping land  "],
                index_noun=["bank n 1 1 @ 1 0 00000100  "],
            )
        )
    with pytest.raises(ValueError, match=r"data.noun:2: .*lex_filenum in \[0, 45\)"):
        WordNet(
            write_tiny_wordnet(
                tmp_path / "b",
                data_noun=["00000100 45 n 01 bank 1 000 | sloping land  "],
                index_noun=["bank n 1 0 1 0 00000100  "],
            )
        )


def test_wordnet_dir_order_and_errors(tmp_path, monkeypatch):
    folder = write_tiny_wordnet(tmp_path / "wn")
    monkeypatch.delenv("KBERT_WORDNET_DIR", raising=False)
    assert wordnet_dir(folder) == folder
    monkeypatch.setenv("KBERT_WORDNET_DIR", str(folder))
    assert wordnet_dir() == folder
    assert wordnet_dir(folder) == folder  # the argument wins
    monkeypatch.setenv("KBERT_WORDNET_DIR", str(tmp_path / "missing"))
    with pytest.raises(
        ValueError,
        match=r"no WordNet 3.0 database at KBERT_WORDNET_DIR="
        r".*missing'.*expected a folder holding data.noun and "
        r"index.noun; install it with `apt-get install "
        r"wordnet-base`",
    ):
        wordnet_dir()
    monkeypatch.delenv("KBERT_WORDNET_DIR")
    monkeypatch.setattr(wordnet_module, "DEFAULT_WORDNET_DIR", str(tmp_path / "none"))
    with pytest.raises(ValueError, match=r"no WordNet 3.0 database at the default"):
        wordnet_dir()
    with pytest.raises(ValueError, match=r"at the path argument '.*nowhere'"):
        wordnet_dir(tmp_path / "nowhere")


def test_load_wordnet_parses_each_folder_once(tmp_path):
    folder = write_tiny_wordnet(tmp_path / "wn")
    first = load_wordnet(folder)
    assert load_wordnet(str(folder) + "/") is first
    assert load_wordnet(write_tiny_wordnet(tmp_path / "other")) is not first
    assert repr(first).endswith("14 sense keys)")


def test_malformed_files_are_named(tmp_path):
    with pytest.raises(ValueError, match=r"has no data.verb; expected data.\* and index.\*"):
        WordNet(write_tiny_wordnet(tmp_path / "a", data_verb=None))
    with pytest.raises(ValueError, match=r"data.noun:3: expected a WordNet data line"):
        WordNet(
            write_tiny_wordnet(
                tmp_path / "b",
                data_noun=[TINY_WORDNET["data.noun"][0], "00000200 14 n 02 bank 0 | truncated"],
            )
        )
    with pytest.raises(ValueError, match=r"data.adj:2: .*a satellite with an `&` pointer"):
        WordNet(
            write_tiny_wordnet(
                tmp_path / "c", data_adj=["00000800 00 s 01 capable 1 000 | no head pointer  "]
            )
        )
    with pytest.raises(
        ValueError,
        match=r"index.noun:2: 'bank' lists synset 00000300, which "
        r"does not hold that lemma in data.noun",
    ):
        WordNet(write_tiny_wordnet(tmp_path / "d", index_noun=["bank n 1 0 1 0 00000300  "]))
    with pytest.raises(ValueError, match=r"index.adv:2: expected a WordNet index line"):
        WordNet(write_tiny_wordnet(tmp_path / "e", index_adv=["ably r x"]))


@pytest.fixture(scope="module")
def real_wordnet():
    try:
        return load_wordnet()
    except ValueError as error:
        pytest.fail(f"the slow tier needs WordNet 3.0: {error}")


@pytest.mark.slow
def test_real_wordnet_has_the_documented_keys_and_sense_order(real_wordnet):
    assert len(real_wordnet) == 206_949  # 206,941 (lemma, synset) pairs + 8 second keys
    assert real_wordnet.senses("bank", "NOUN")[:2] == ["bank%1:17:01::", "bank%1:14:00::"]
    assert len(real_wordnet.senses("bank", "NOUN")) == 10
    assert len(real_wordnet.senses("bank", "VERB")) == 8
    assert real_wordnet.gloss("bank%1:17:01::").startswith(
        "sloping land (especially the slope beside a body of water)"
    )
    assert real_wordnet.synset_offset("bank%1:17:01::") == 9213565
    assert "peculiar%5:00:00:specific:00" in real_wordnet  # a satellite, from ALL's gold
    assert "galore%5:00:00:abundant:00" in real_wordnet  # "galore(ip)" in data.adj
    assert real_wordnet.most_frequent_sense("New York", "NOUN") == "new_york%1:15:01::"  # the city


@pytest.mark.slow
def test_real_wordnet_holds_every_gold_key_of_all(real_wordnet, data_root):
    path = data_root / "wsd_raganato2017" / "ALL" / "ALL.gold.key.txt"
    keys = {
        key for line in path.read_text(encoding="utf-8").splitlines() for key in line.split()[1:]
    }
    assert len(keys) == 3669
    assert sorted(key for key in keys if key not in real_wordnet) == []


@pytest.mark.slow
def test_real_keys_offsets_and_sense_numbers_equal_index_sense(real_wordnet):
    # index.sense (Debian's wordnet-sense-index, which run.sh installs) is WordNet's own list of
    # sense keys: `sense_key synset_offset sense_number tag_cnt`. The keys that kbert builds
    # from data.* and index.* must be exactly these, in the same synsets and sense order.
    path = real_wordnet.path / "index.sense"
    if not path.is_file():
        pytest.fail(
            f"{path} is missing: install it with `apt-get install wordnet-sense-index` "
            "(bash run.sh setup does)"
        )
    letter = {"1": "n", "2": "v", "3": "a", "4": "r", "5": "a"}
    keys = set()
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            key, offset, number, _ = line.split()
            keys.add(key)
            assert real_wordnet.synset(key) == (letter[key.split("%")[1][0]], int(offset)), key
            senses = real_wordnet.senses(real_wordnet.lemma_of(key), letter[key.split("%")[1][0]])
            # A lemma written twice in one synset (8 keys) is listed under its first key only.
            if key in senses:
                assert senses.index(key) + 1 == int(number), key
    # All of index.sense's keys are built, plus the 8 second keys of "Moon 1 moon 3"-style
    # synsets, which index.sense leaves out.
    assert len(keys) == 206_941 and len(real_wordnet) == 206_949


@pytest.mark.slow
def test_real_hypernyms_and_lexnames(real_wordnet):
    car = real_wordnet.synset("car%1:06:00::")
    assert [real_wordnet.synset_keys(h)[0] for h in real_wordnet.hypernyms(car)] == [
        "motor_vehicle%1:06:00::"
    ]
    assert real_wordnet.lexname(car) == "noun.artifact"
    paris = real_wordnet.synset("paris%1:15:00::")  # an instance: @i to national_capital
    assert "national_capital%1:15:00::" in [
        real_wordnet.synset_keys(h)[0] for h in real_wordnet.hypernyms(paris)
    ]


@pytest.mark.slow
def test_real_sense_numbers_mostly_agree_with_cntlist(real_wordnet):
    # cntlist.rev (`key sense_number tag_cnt`) ships with wordnet-base but does not match its
    # index files exactly: 1,992 of its 37,387 keys are not WordNet 3.0 keys (e.g.
    # "above%5:00:00:preceding(a):00", marker kept) and 713 of the rest give another sense
    # number. Most agree, which a wrong sense order would break.
    letter = {"1": "n", "2": "v", "3": "a", "4": "r", "5": "a"}
    agree = total = 0
    with open(real_wordnet.path / "cntlist.rev", encoding="utf-8") as lines:
        for line in lines:
            key, number, _ = line.split()
            if key in real_wordnet:
                senses = real_wordnet.senses(
                    real_wordnet.lemma_of(key), letter[key.split("%")[1][0]]
                )
                total += 1
                agree += senses.index(key) + 1 == int(number)
    assert total == 35_395
    assert agree / total > 0.97
