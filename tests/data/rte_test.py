import pytest

from kbert.data import read_rte

HEADER = "index\tsentence1\tsentence2\tlabel\n"


def _write(root, split, text):
    (root / "rte").mkdir(exist_ok=True)
    (root / "rte" / f"{split}.tsv").write_text(text, encoding="utf-8")


def test_reads_pairs_with_quotes_and_no_csv_quoting(tmp_path):
    _write(
        tmp_path,
        "dev",
        HEADER + '0\tHe said "yes.\tHe agreed.\tentailment\n'
        "1\tA cat \u0085 sat.\tA dog sat.\tnot_entailment\n\n",
    )
    texts_a, texts_b, labels = read_rte("dev", data_dir=tmp_path)
    assert texts_a == ['He said "yes.', "A cat \u0085 sat."]
    assert texts_b == ["He agreed.", "A dog sat."]
    assert labels == ["entailment", "not_entailment"]


def test_malformed_lines_name_the_file_and_line(tmp_path):
    _write(tmp_path, "train", HEADER + "0\tA.\tB.\tentailment\n1\tA.\tB.\tcontradiction\n")
    with pytest.raises(
        ValueError,
        match=r"train\.tsv:3: expected 'index<TAB>sentence1<TAB>"
        r"sentence2<TAB>entailment\|not_entailment'",
    ):
        read_rte("train", data_dir=tmp_path)
    _write(tmp_path, "train", HEADER + "0\tA.\tB.\n")
    with pytest.raises(ValueError, match=r"train\.tsv:2: .* found 3 fields in '0\\tA"):
        read_rte("train", data_dir=tmp_path)
    _write(tmp_path, "train", HEADER + "0\t \tB.\tentailment\n")
    with pytest.raises(ValueError, match=r"train\.tsv:2: .*non-empty sentences"):
        read_rte("train", data_dir=tmp_path)
    _write(tmp_path, "train", "index\tsentence1\tsentence2\n0\tA.\tB.\n")
    with pytest.raises(
        ValueError,
        match=r"train\.tsv:1: expected the header 'index<TAB>"
        r"sentence1<TAB>sentence2<TAB>label'",
    ):
        read_rte("train", data_dir=tmp_path)


def test_unlabeled_test_split_and_unknown_splits_are_refused(tmp_path):
    with pytest.raises(ValueError, match="'test' has no labels .*expected 'train' or 'dev'"):
        read_rte("test", data_dir=tmp_path)
    with pytest.raises(ValueError, match="RTE split must be 'train' or 'dev'; received 'valid'"):
        read_rte("valid", data_dir=tmp_path)


@pytest.mark.slow
def test_real_files_have_the_documented_counts(data_root):
    texts_a, texts_b, labels = read_rte("train", data_dir=data_root)
    assert len(texts_a) == len(texts_b) == 2490
    assert (labels.count("entailment"), labels.count("not_entailment")) == (1249, 1241)
    assert texts_a[0] == "No Weapons of Mass Destruction Found in Iraq Yet."
    labels = read_rte("dev", data_dir=data_root)[2]
    assert (len(labels), labels.count("entailment"), labels.count("not_entailment")) == (
        277,
        146,
        131,
    )
