import dataclasses
from collections import Counter

import numpy as np
import pytest

from kbert.data import (
    CLASSIFICATION_TASKS,
    ClassificationTask,
    LabelVocabulary,
    classification_task_from_files,
    load_classification_task,
    read_imdb,
    read_mrpc,
    read_rte,
    read_sst2,
    read_trec,
)


def _rte_dir(root, train_rows=20, dev_rows=5):
    (root / "rte").mkdir()
    labels = ("entailment", "not_entailment")
    for split, count in (("train", train_rows), ("dev", dev_rows)):
        lines = ["index\tsentence1\tsentence2\tlabel"]
        lines += [
            f"{i}\t{split} premise {i}\t{split} hypothesis {i}\t{labels[i % 2]}"
            for i in range(count)
        ]
        (root / "rte" / f"{split}.tsv").write_text("\n".join(lines) + "\n")
    return root


def test_task_table():
    assert sorted(CLASSIFICATION_TASKS) == ["imdb", "mrpc", "rte", "sst2", "trec", "trec-fine"]
    assert [name for name, task in CLASSIFICATION_TASKS.items() if task.is_pair] == ["rte", "mrpc"]
    assert len(CLASSIFICATION_TASKS["trec"].label_names) == 6
    assert len(CLASSIFICATION_TASKS["trec-fine"].label_names) == 50
    mrpc = CLASSIFICATION_TASKS["mrpc"]
    assert (mrpc.metric, mrpc.positive_label, mrpc.reported_metrics) == (
        "f1",
        "paraphrase",
        ("f1", "accuracy"),
    )
    for name, task in CLASSIFICATION_TASKS.items():
        assert task.name == name and task.description
        if name != "mrpc":
            assert task.metric == "accuracy" and task.reported_metrics == ("accuracy",)
    with pytest.raises(ValueError, match="metric 'f1' needs positive_label, one of \\['a', 'b'\\]"):
        ClassificationTask("x", LabelVocabulary(["a", "b"]), is_pair=False, metric="f1")
    with pytest.raises(ValueError, match="metric must be one of .*received 'auc'"):
        ClassificationTask("x", LabelVocabulary(["a", "b"]), is_pair=False, metric="auc")


def test_unknown_names_splits_and_arguments_list_the_valid_ones(tmp_path):
    with pytest.raises(
        ValueError,
        match="unknown classification task 'mnli'; expected one of "
        r"\['imdb', 'mrpc', 'rte', 'sst2', 'trec', 'trec-fine'\]",
    ):
        load_classification_task("mnli", "train", data_dir=tmp_path)
    with pytest.raises(
        ValueError,
        match=r"split must be one of \('train', 'validation', 'test'\);"
        " received 'dev'",
    ):
        load_classification_task("rte", "dev", data_dir=tmp_path)
    for fraction in (-0.1, 1, 1.5, True):
        with pytest.raises(ValueError, match=r"validation_fraction must be a number in \[0, 1\)"):
            load_classification_task(
                "rte", "train", data_dir=tmp_path, validation_fraction=fraction
            )
    with pytest.raises(ValueError, match="seed must be a non-negative int; received -1"):
        load_classification_task("rte", "train", data_dir=tmp_path, seed=-1)
    with pytest.raises(ValueError, match="max_examples must be a positive int or None"):
        load_classification_task("rte", "train", data_dir=tmp_path, max_examples=2.5)
    with pytest.raises(ValueError, match="leaves 0 for validation and 20 for train"):
        load_classification_task(
            "rte", "train", data_dir=_rte_dir(tmp_path), validation_fraction=0.01
        )


def test_validation_is_a_seeded_disjoint_slice_of_the_training_file(tmp_path):
    _rte_dir(tmp_path)
    train = load_classification_task("rte", "train", data_dir=tmp_path, validation_fraction=0.2)
    validation = load_classification_task(
        "rte", "validation", data_dir=tmp_path, validation_fraction=0.2
    )
    assert (len(train), len(validation)) == (16, 4)
    assert sorted(train.texts + validation.texts) == sorted(f"train premise {i}" for i in range(20))
    for examples in (train, validation):
        assert examples.labels.dtype == np.int32
        numbers = [int(text.rsplit(" ", 1)[1]) for text in examples.texts]
        assert examples.text_pairs == [f"train hypothesis {i}" for i in numbers]
        assert examples.labels.tolist() == [i % 2 for i in numbers]
        assert examples.label_names == CLASSIFICATION_TASKS["rte"].label_names
    assert "rte/train.tsv (validation: 4 rows of 20, validation_fraction=0.2, seed=0)" in (
        validation.source
    )
    again = load_classification_task(
        "rte", "validation", data_dir=tmp_path, validation_fraction=0.2
    )
    other = load_classification_task(
        "rte", "validation", data_dir=tmp_path, validation_fraction=0.2, seed=1
    )
    assert again.texts == validation.texts and other.texts != validation.texts
    first = load_classification_task(
        "rte", "train", data_dir=tmp_path, validation_fraction=0.2, max_examples=3
    )
    assert first.texts == train.texts[:3]


def test_test_split_is_the_dev_file_in_order(tmp_path):
    _rte_dir(tmp_path)
    test = load_classification_task("rte", "test", data_dir=tmp_path)
    assert test.texts == [f"dev premise {i}" for i in range(5)]
    assert test.labels.tolist() == [0, 1, 0, 1, 0] and test.source.endswith("rte/dev.tsv")
    assert (
        load_classification_task("rte", "test", data_dir=tmp_path, max_examples=2).texts
        == (test.texts[:2])
    )


def test_a_test_class_outside_the_training_labels_is_named_with_its_file(tmp_path):
    (tmp_path / "trec").mkdir()
    (tmp_path / "trec" / "TREC_10.label").write_text("NUM:dist How far ?\nNUM:xyz Which ?\n")
    with pytest.raises(
        ValueError,
        match=r"test labels in .*TREC_10\.label include 1 class\(es\) "
        r"absent from the training labels: 'NUM:xyz'",
    ):
        load_classification_task("trec-fine", "test", data_dir=tmp_path)
    test = load_classification_task("trec", "test", data_dir=tmp_path)
    assert test.label_names.decode(test.labels) == ["NUM", "NUM"] and test.text_pairs is None


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def test_user_files_single_texts_with_a_header(tmp_path):
    rows = "".join(f"text {i}\t{'pos' if i % 3 else 'neg'}\n" for i in range(10))
    train = _write(tmp_path / "train.tsv", "\ufefftext\tlabel\n" + rows)
    test = _write(tmp_path / "test.tsv", "good\tpos\n\nbad\tneg\n")
    task, splits = classification_task_from_files(train, test, validation_fraction=0.2)
    assert not task.is_pair and task.label_names.names == ("neg", "pos")
    assert list(splits) == ["train", "validation", "test"]
    assert (len(splits["train"]), len(splits["validation"])) == (8, 2)
    assert sorted(splits["train"].texts + splits["validation"].texts) == sorted(
        f"text {i}" for i in range(10)
    )
    assert splits["test"].texts == ["good", "bad"] and splits["test"].labels.tolist() == [1, 0]
    assert splits["test"].text_pairs is None and splits["test"].source == str(test)
    again = classification_task_from_files(train, test, validation_fraction=0.2)[1]
    assert again["validation"].texts == splits["validation"].texts


def test_user_files_pairs_are_detected_and_a_validation_file_is_used(tmp_path):
    train = _write(tmp_path / "train.tsv", "a1\tb1\tyes\na2\tb2\tno\na3\tb3\tyes\n")
    validation = _write(tmp_path / "validation.tsv", "text_a\ttext_b\tlabel\nv1\tw1\tno\n")
    test = _write(tmp_path / "test.tsv", "t1\tu1\tyes\n")
    task, splits = classification_task_from_files(
        train, test, validation_path=validation, metric="f1", positive_label="yes"
    )
    assert task.is_pair and task.metric == "f1" and task.reported_metrics == ("f1", "accuracy")
    assert sorted(zip(splits["train"].texts, splits["train"].text_pairs, strict=True)) == [
        ("a1", "b1"),
        ("a2", "b2"),
        ("a3", "b3"),
    ]
    assert splits["validation"].text_pairs == ["w1"] and splits["validation"].labels.tolist() == [0]
    assert splits["test"].text_pairs == ["u1"]
    single = _write(tmp_path / "single.tsv", "t1\tyes\n")
    with pytest.raises(
        ValueError,
        match=r"single\.tsv holds single texts but the training file "
        r".*train\.tsv holds text pairs",
    ):
        classification_task_from_files(train, single, validation_path=validation)


def test_user_file_errors_name_the_file_and_line(tmp_path):
    test = _write(tmp_path / "test.tsv", "fine\tpos\n")
    cases = {
        "a\tpos\nb\tc\tneg\n": r"bad\.tsv:2: expected 2 tab-separated fields as in the file's "
        r"first line; found 3",
        "a b pos\n": r"bad\.tsv:1: expected 'text<TAB>label' or 'text_a<TAB>text_b<TAB>label'; "
        r"found 1 fields",
        "a\tpos\n \tneg\n": r"bad\.tsv:2: empty text",
        "a\tb\tpos\na\t\tneg\n": r"bad\.tsv:2: empty text",
        "a\tpos\nb\t\n": r"bad\.tsv:2: empty label",
        "text\tlabel\n": r"bad\.tsv: no examples",
    }
    for content, message in cases.items():
        with pytest.raises(ValueError, match=message):
            classification_task_from_files(_write(tmp_path / "bad.tsv", content), test)
    train = _write(tmp_path / "train.tsv", "x\tpos\ny\tneg\nz\tpos\n")
    unseen = _write(tmp_path / "unseen.tsv", "a\tpos\nb\tneutral\n")
    with pytest.raises(
        ValueError,
        match=r"test labels in .*unseen\.tsv include 1 class\(es\) "
        r"absent from the training labels: 'neutral'",
    ):
        classification_task_from_files(train, unseen, validation_fraction=0.34)
    with pytest.raises(ValueError, match="expected a labeled TSV file; .*missing.tsv"):
        classification_task_from_files(train, tmp_path / "missing.tsv", validation_fraction=0.34)


@pytest.mark.slow
def test_real_splits_partition_the_training_file(data_root):
    readers = {
        "trec": lambda: (read_trec("train", data_dir=data_root)[0], None),
        "rte": lambda: read_rte("train", data_dir=data_root)[:2],
        "mrpc": lambda: read_mrpc("train", data_dir=data_root)[:2],
    }
    sizes = {"trec": (4907, 545, 500), "rte": (2241, 249, 277), "mrpc": (3301, 367, 408)}
    for name, read in readers.items():
        splits = {
            split: load_classification_task(name, split, data_dir=data_root)
            for split in ("train", "validation", "test")
        }
        assert tuple(len(examples) for examples in splits.values()) == sizes[name]
        texts, pairs = read()
        rows = Counter(zip(texts, pairs or texts, strict=True))
        held = Counter()
        for split in ("train", "validation"):
            examples = splits[split]
            held.update(zip(examples.texts, examples.text_pairs or examples.texts, strict=True))
        assert held == rows  # disjoint, and together the whole training file
    again = load_classification_task("mrpc", "validation", data_dir=data_root)
    other = load_classification_task("mrpc", "validation", data_dir=data_root, seed=1)
    assert again.texts == splits["validation"].texts and again.texts != other.texts


@pytest.mark.slow
def test_real_label_sets_are_the_training_files_labels(data_root):
    train_labels = {
        "trec": read_trec("train", data_dir=data_root)[1],
        "trec-fine": read_trec("train", fine=True, data_dir=data_root)[1],
        "sst2": read_sst2("train", data_dir=data_root)[1],
        "rte": read_rte("train", data_dir=data_root)[2],
        "mrpc": read_mrpc("train", data_dir=data_root)[2],
        "imdb": read_imdb("train", data_dir=data_root)[1],
    }
    for name, labels in train_labels.items():
        names = CLASSIFICATION_TASKS[name].label_names.names
        if isinstance(labels[0], int):  # 0/1 readers: the task names class i by its word
            labels = [names[label] for label in labels]
        assert names == tuple(sorted(set(labels))), name
    # TREC_10 uses 42 of the 50 fine classes, and none outside train_5500.
    test = load_classification_task("trec-fine", "test", data_dir=data_root)
    assert len(test) == 500 and len(set(test.labels.tolist())) == 42
    assert len(load_classification_task("sst2", "test", data_dir=data_root)) == 872
    imdb = load_classification_task("imdb", "test", data_dir=data_root, max_examples=100)
    assert len(imdb) == 100 and imdb.source.endswith("imdb/test.jsonl")


@pytest.mark.slow
def test_fraction_zero_trains_on_the_whole_file_and_subset_selects_rows(data_root):
    train = load_classification_task("rte", "train", data_dir=data_root, validation_fraction=0)
    assert len(train) == 2490 and train.label_names.names == ("entailment", "not_entailment")
    with pytest.raises(ValueError, match="split 'validation' needs validation_fraction > 0"):
        load_classification_task("rte", "validation", data_dir=data_root, validation_fraction=0)
    part = train.subset([3, 1])
    assert part.texts == [train.texts[3], train.texts[1]]
    assert part.text_pairs == [train.text_pairs[3], train.text_pairs[1]]
    assert part.labels.tolist() == [train.labels[3], train.labels[1]]


def test_sample_draws_a_seeded_subset_in_file_order_and_keeps_small_sets_whole(data_root):
    rte = load_classification_task("rte", "train", data_dir=data_root, validation_fraction=0)
    # Texts made unique, so each sampled text names its row.
    train = dataclasses.replace(rte, texts=[f"{row}: {text}" for row, text in enumerate(rte.texts)])
    part = train.sample(50, seed=7)
    rows = [train.texts.index(text) for text in part.texts]
    assert len(part) == 50 and rows == sorted(rows) and len(set(rows)) == 50
    assert part.labels.tolist() == [train.labels[row] for row in rows]
    assert part.texts == train.sample(50, seed=7).texts  # the seed fixes the draw
    assert part.texts != train.sample(50, seed=8).texts
    # 0 (or None) means all of them, and so does a size at or over their count.
    for size in (0, None, len(train), len(train) + 1):
        assert train.sample(size, seed=7) is train
    with pytest.raises(ValueError, match="sample size must be 0 .all. or more, got -1"):
        train.sample(-1, seed=7)


@pytest.mark.parametrize(
    "content, says",
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", r"train\.tsv:1: byte b'\\x89' .* not valid UTF-8"),
        (b"good\tpos\nbad \xff movie\tneg\n", r"train\.tsv:2: byte b'\\xff' .* not valid UTF-8"),
        (b"good\tpos\nba\x00d\tneg\n", r"train\.tsv:2: NUL byte"),
    ],
    ids=["png", "bad-byte", "nul-byte"],
)
def test_user_files_that_are_not_utf8_text_name_the_file_and_line(tmp_path, content, says):
    train = tmp_path / "train.tsv"
    train.write_bytes(content)
    test = _write(tmp_path / "test.tsv", "good\tpos\nbad\tneg\n")
    with pytest.raises(ValueError, match=says) as error:
        classification_task_from_files(train, test)
    assert str(train) in str(error.value) and "expected UTF-8 text" in str(error.value)
