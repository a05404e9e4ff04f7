import pytest

from kbert.data import read_mrpc

HEADER = "\ufeffQuality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"
ROWS = [
    '1\t11\t12\tHe called "the witness" late.\tLate, he called "the witness".\n',
    "0\t21\t22\tShares rose 5%.\tThe CEO resigned.\n",
    "1\t31\t32\tIt rained.\tThere was rain.\n",
]


def _write(root, name, text):
    (root / "mrpc").mkdir(exist_ok=True)
    (root / "mrpc" / name).write_text(text, encoding="utf-8")


def test_reads_glue_files_with_a_byte_order_mark(tmp_path):
    _write(tmp_path, "dev.tsv", HEADER + "".join(ROWS))
    texts_a, texts_b, labels = read_mrpc("dev", data_dir=tmp_path)
    assert texts_a[0] == 'He called "the witness" late.' and texts_b[1] == "The CEO resigned."
    assert labels == [1, 0, 1]


def test_without_glue_files_the_split_is_rebuilt_from_the_msr_corpus_and_dev_ids(tmp_path):
    """The download fallback's format: the whole MSR training corpus plus GLUE's dev ids."""
    _write(tmp_path, "msr_paraphrase_train.txt", HEADER + "".join(ROWS))
    _write(tmp_path, "mrpc_dev_ids.tsv", "21\t22\n\n")
    assert read_mrpc("dev", data_dir=tmp_path) == (["Shares rose 5%."], ["The CEO resigned."], [0])
    texts_a, _, labels = read_mrpc("train", data_dir=tmp_path)
    assert texts_a == ['He called "the witness" late.', "It rained."] and labels == [1, 1]
    _write(tmp_path, "mrpc_dev_ids.tsv", "21 22\n")
    with pytest.raises(ValueError, match=r"mrpc_dev_ids\.tsv:1: expected '#1 ID<TAB>#2 ID'"):
        read_mrpc("dev", data_dir=tmp_path)
    _write(tmp_path, "mrpc_dev_ids.tsv", "98\t99\n")
    with pytest.raises(ValueError, match="no dev pairs in .*msr_paraphrase_train.txt"):
        read_mrpc("dev", data_dir=tmp_path)


def test_malformed_lines_name_the_file_and_line(tmp_path):
    _write(tmp_path, "train.tsv", HEADER + ROWS[0] + "2\t21\t22\tA.\tB.\n")
    with pytest.raises(ValueError, match=r"train\.tsv:3: expected '0\|1<TAB>#1 ID<TAB>#2 ID"):
        read_mrpc("train", data_dir=tmp_path)
    _write(tmp_path, "train.tsv", HEADER + "1\t21\t22\tA. B.\n")
    with pytest.raises(ValueError, match=r"train\.tsv:2: .*found 4 fields"):
        read_mrpc("train", data_dir=tmp_path)
    _write(tmp_path, "train.tsv", "index\t#1 ID\t#2 ID\t#1 String\t#2 String\n" + ROWS[0])
    with pytest.raises(ValueError, match=r"train\.tsv:1: expected the header 'Quality<TAB>"):
        read_mrpc("train", data_dir=tmp_path)


def test_unlabeled_test_split_and_unknown_splits_are_refused(tmp_path):
    with pytest.raises(ValueError, match="'test' has no labels .*expected 'train' or 'dev'"):
        read_mrpc("test", data_dir=tmp_path)
    with pytest.raises(ValueError, match="MRPC split must be 'train' or 'dev'; received 'val'"):
        read_mrpc("val", data_dir=tmp_path)


@pytest.mark.slow
def test_real_files_have_the_documented_counts(data_root):
    texts_a, texts_b, labels = read_mrpc("train", data_dir=data_root)
    assert len(texts_a) == len(texts_b) == 3668 and (labels.count(1), labels.count(0)) == (
        2474,
        1194,
    )
    assert texts_a[0].startswith('Amrozi accused his brother, whom he called "the witness"')
    labels = read_mrpc("dev", data_dir=data_root)[2]
    assert (len(labels), labels.count(1), labels.count(0)) == (408, 279, 129)
