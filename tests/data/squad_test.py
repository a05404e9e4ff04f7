import json

import pytest

from kbert.data import SquadExample, load_squad, read_squad, squad_references

CONTEXT = "Super Bowl 50 was won by the Denver Broncos."


def _squad(articles):
    """A SQuAD v1.1 object from `[(title, [(context, [(id, question, answers)])])]`."""
    return {
        "version": "1.1",
        "data": [
            {
                "title": title,
                "paragraphs": [
                    {
                        "context": context,
                        "qas": [
                            {
                                "id": id_,
                                "question": question,
                                "answers": [
                                    {"text": text, "answer_start": start} for text, start in answers
                                ],
                            }
                            for id_, question, answers in qas
                        ],
                    }
                    for context, qas in paragraphs
                ],
            }
            for title, paragraphs in articles
        ],
    }


def _article(title, n_questions=1):
    qas = [(f"{title}-{i}", f"Who won {i}?", [("Denver Broncos", 29)]) for i in range(n_questions)]
    return (title, [(CONTEXT, qas)])


def _write(path, content):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(content), encoding="utf-8")
    return path


def test_reads_one_example_per_question_and_keeps_unanswered_ones(tmp_path):
    path = _write(
        tmp_path / "dev.json",
        _squad(
            [
                (
                    "Super_Bowl_50",
                    [
                        (
                            CONTEXT,
                            [
                                (
                                    "q1",
                                    "Who won?",
                                    [("Denver Broncos", 29), ("the Denver Broncos", 25)],
                                ),
                                ("q2", "Unanswered?", []),
                            ],
                        )
                    ],
                )
            ]
        ),
    )
    examples = read_squad(path)
    assert examples == [
        SquadExample(
            "q1",
            "Super_Bowl_50",
            CONTEXT,
            "Who won?",
            (("Denver Broncos", 29), ("the Denver Broncos", 25)),
        ),
        SquadExample("q2", "Super_Bowl_50", CONTEXT, "Unanswered?", ()),
    ]
    assert squad_references(examples) == {"q1": ["Denver Broncos", "the Denver Broncos"], "q2": []}
    with pytest.raises(ValueError, match="question id 'q1' appears twice"):
        squad_references(examples + examples[:1])


def test_answers_outside_or_not_at_their_offset_are_refused(tmp_path):
    path = _write(
        tmp_path / "dev.json", _squad([("T", [(CONTEXT, [("q9", "?", [("Denver Broncos", 40)])])])])
    )
    with pytest.raises(
        ValueError,
        match=r"dev\.json: question 'q9': answer offsets fall outside "
        r"the context: .*<= 44 \(the context length\); found "
        r"start 40, end 54",
    ):
        read_squad(path)
    assert read_squad(path, validate=False)[0].answers == (("Denver Broncos", 40),)
    _write(path, _squad([("T", [(CONTEXT, [("q9", "?", [("Denver Broncos", -1)])])])]))
    with pytest.raises(ValueError, match="answer offsets fall outside the context"):
        read_squad(path)
    _write(path, _squad([("T", [(CONTEXT, [("q9", "?", [("Denver Broncos", 28)])])])]))
    with pytest.raises(
        ValueError,
        match=r"question 'q9': the context does not contain the answer "
        r"at its offset 28: expected 'Denver Broncos'; found "
        r"' Denver Bronco'",
    ):
        read_squad(path)


def test_missing_keys_and_wrong_types_name_the_path_and_key(tmp_path):
    path = _write(tmp_path / "bad.json", {"version": "1.1", "articles": []})
    with pytest.raises(ValueError, match=r"bad\.json: top level: missing key 'data'"):
        read_squad(path)
    content = _squad([_article("T")])
    del content["data"][0]["paragraphs"][0]["qas"][0]["id"]
    _write(path, content)
    with pytest.raises(
        ValueError,
        match=r"bad\.json: data\[0\]\.paragraphs\[0\]\.qas\[0\]: "
        r"missing key 'id'",
    ):
        read_squad(path)
    content = _squad([_article("T")])
    content["data"][0]["paragraphs"][0]["qas"][0]["answers"][0]["answer_start"] = "29"
    _write(path, content)
    with pytest.raises(ValueError, match=r"answers\[0\]\.answer_start: expected int; found str"):
        read_squad(path)
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad\.json: expected SQuAD JSON; found invalid JSON"):
        read_squad(path)


def test_dev_only_is_split_by_article(tmp_path):
    _write(
        tmp_path / "squad_v1.1" / "dev-v1.1.json",
        _squad([_article("A", 2), _article("B", 3), _article("C", 1)]),
    )
    train, source = load_squad("train", data_dir=tmp_path, train_articles=2)
    validation, same_source = load_squad("validation", data_dir=tmp_path, train_articles=2)
    assert source == same_source == "dev-split(first 2 articles train / 1 eval)"
    assert [e.title for e in train] == ["A", "A", "B", "B", "B"]
    assert [e.title for e in validation] == ["C"]
    for bad in (0, 3):
        with pytest.raises(
            ValueError,
            match=f"train_articles must be at least 1 and fewer than "
            f"the 3 articles .*received {bad}",
        ):
            load_squad("train", data_dir=tmp_path, train_articles=bad)
    with pytest.raises(
        ValueError, match="SQuAD split must be 'train' or 'validation'; received 'dev'"
    ):
        load_squad("dev", data_dir=tmp_path)


def test_training_questions_need_an_answer(tmp_path):
    _write(
        tmp_path / "squad_v1.1" / "dev-v1.1.json",
        _squad([("A", [(CONTEXT, [("q1", "?", [])])]), _article("B")]),
    )
    with pytest.raises(ValueError, match="question 'q1' has no answers; a training split needs"):
        load_squad("train", data_dir=tmp_path, train_articles=1)
    assert load_squad("validation", data_dir=tmp_path, train_articles=1)[0][0].id == "B-0"


def test_a_local_train_file_makes_the_splits_official(tmp_path):
    _write(tmp_path / "squad_v1.1" / "train-v1.1.json", _squad([_article("A", 4)]))
    _write(tmp_path / "squad_v1.1" / "dev-v1.1.json", _squad([_article("B", 2)]))
    train, source = load_squad("train", data_dir=tmp_path)
    assert source == "official" and len(train) == 4
    validation, source = load_squad("validation", data_dir=tmp_path)
    assert source == "official" and [e.title for e in validation] == ["B", "B"]


def test_without_local_squad_the_official_files_are_downloaded(tmp_path, monkeypatch):
    import keras

    requested = []
    download = _write(tmp_path / "download.json", _squad([_article("A", 3)]))
    monkeypatch.setattr(
        keras.utils, "get_file", lambda name, url, **kwargs: requested.append(url) or str(download)
    )
    monkeypatch.setenv("KBERT_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "empty").mkdir()
    assert load_squad("train", data_dir=tmp_path / "empty")[1] == "official"
    assert load_squad("validation", data_dir=tmp_path / "empty")[1] == "official"
    assert requested == [
        "https://rajpurkar.github.io/SQuAD-explorer/dataset/train-v1.1.json",
        "https://rajpurkar.github.io/SQuAD-explorer/dataset/dev-v1.1.json",
    ]


# The real dev file (4.9 MB) parses in well under a second, so these stay in the fast tier.
def test_real_dev_file_has_the_documented_counts(data_root):
    examples = read_squad(data_root / "squad_v1.1" / "dev-v1.1.json")
    assert len(examples) == 10_570  # SOURCE.md
    assert len({e.title for e in examples}) == 48
    assert sum(len(e.answers) for e in examples) == 34_726
    assert examples[0].question == "Which NFL team represented the AFC at Super Bowl 50?"
    assert squad_references(examples[:1]) == {"56be4db0acb8001400a502ec": ["Denver Broncos"] * 3}


def test_real_dev_split_partitions_the_articles(data_root, tmp_path):
    # A link, so the split is tested even where train-v1.1.json sits beside the real dev file.
    (tmp_path / "squad_v1.1").mkdir()
    (tmp_path / "squad_v1.1" / "dev-v1.1.json").symlink_to(
        (data_root / "squad_v1.1" / "dev-v1.1.json").resolve()
    )
    train, source = load_squad("train", data_dir=tmp_path)
    validation, _ = load_squad("validation", data_dir=tmp_path)
    assert source == "dev-split(first 40 articles train / 8 eval)"
    assert (len(train), len(validation)) == (8981, 1589)
    assert len(train) + len(validation) == 10_570
    train_titles, validation_titles = {e.title for e in train}, {e.title for e in validation}
    assert (len(train_titles), len(validation_titles)) == (40, 8)
    assert not train_titles & validation_titles
