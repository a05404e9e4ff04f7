"""MRPC, the Microsoft Research Paraphrase Corpus, in GLUE's train/dev split."""

from kbert.data.data_dir import data_dir as find_data_dir
from kbert.data.data_dir import locate
from kbert.data.tsv_rows import tsv_rows

_HEADER = ["Quality", "#1 ID", "#2 ID", "#1 String", "#2 String"]
# GLUE's own download script builds train.tsv/dev.tsv from these two files (as do Hugging Face
# and TFDS): the MSR training corpus as SentEval hosts it, and the 408 (#1 ID, #2 ID) pairs that
# GLUE holds out as dev.
_CORPUS_URL = "https://dl.fbaipublicfiles.com/senteval/senteval_data/msr_paraphrase_train.txt"
_DEV_IDS_URL = "https://dl.fbaipublicfiles.com/glue/data/mrpc_dev_ids.tsv"


def read_mrpc(split="train", data_dir=None):
    """Reads MRPC sentence pairs and labels (1 paraphrase, 0 not).

    The local files (`<data_dir>/mrpc/{train,dev}.tsv`) are GLUE's: UTF-8 with a byte-order
    mark, a header, and five tab-separated columns `Quality<TAB>#1 ID<TAB>#2 ID<TAB>#1 String
    <TAB>#2 String`; strings contain `"`, so lines are split on tabs with no quoting.

    Without them, the reader rebuilds the split as GLUE's `download_glue_data.py` does: it takes
    `mrpc/msr_paraphrase_train.txt` (the 4,076-pair MSR training corpus, same five-column format)
    and `mrpc/mrpc_dev_ids.tsv` (lines `#1 ID<TAB>#2 ID`) from the data directory, or downloads
    them from SentEval's and GLUE's public copies. The pairs listed in the ids file are dev, the
    rest train, in corpus order. Pairs, ids and labels are GLUE's; SentEval's copy is
    tokenized ("brother , whom"), while GLUE's local files are not.

    Args:
        split: str, default "train". "train" (3,668 pairs) or "dev" (408). GLUE's test split has
            no labels, so it is refused.
        data_dir: str or Path, default None (`KBERT_DATA_DIR`, then ../shared/data).

    Returns:
        `(texts_a, texts_b, labels)`: two lists of str and a list of int.

    Example:
    >>> texts_a, texts_b, labels = read_mrpc("dev")  # doctest: +SKIP
    >>> len(labels), sum(labels)  # doctest: +SKIP
    (408, 279)
    """
    if split == "test":
        raise ValueError(
            "MRPC split 'test' has no labels (GLUE keeps them private); expected 'train' or 'dev'"
        )
    if split not in ("train", "dev"):
        raise ValueError(f"MRPC split must be 'train' or 'dev'; received {split!r}")
    root = find_data_dir(data_dir)
    if root is not None and (root / "mrpc" / f"{split}.tsv").is_file():
        rows = _read_pairs(root / "mrpc" / f"{split}.tsv")
    else:
        try:
            corpus = locate("mrpc/msr_paraphrase_train.txt", _CORPUS_URL, data_dir)
            ids_path = locate("mrpc/mrpc_dev_ids.tsv", _DEV_IDS_URL, data_dir)
        except ValueError as error:
            raise ValueError(
                f"mrpc/{split}.tsv is not under data directory {str(root)!r}, and "
                f"rebuilding it from the MSR corpus failed: {error}"
            ) from None
        dev_ids = _read_dev_ids(ids_path)
        rows = [row for row in _read_pairs(corpus) if (row[:2] in dev_ids) == (split == "dev")]
        if not rows:
            raise ValueError(
                f"no {split} pairs in {corpus}: expected the MSR training corpus and "
                f"GLUE's dev ids in {ids_path}"
            )
    return [row[2] for row in rows], [row[3] for row in rows], [row[4] for row in rows]


def _read_pairs(path):
    """Parses the five-column MSR format into `(id1, id2, text_a, text_b, label)` tuples."""
    rows = []
    for number, fields in tsv_rows(path, _HEADER):
        if (
            len(fields) != 5
            or fields[0] not in ("0", "1")
            or not fields[1].isdigit()
            or not fields[2].isdigit()
            or not fields[3].strip()
            or not fields[4].strip()
        ):
            raise ValueError(
                f"{path}:{number}: expected '0|1<TAB>#1 ID<TAB>#2 ID<TAB>"
                f"#1 String<TAB>#2 String' with numeric ids and non-empty "
                f"strings; found {len(fields)} fields in "
                f"{chr(9).join(fields)[:60]!r}"
            )
        rows.append((fields[1], fields[2], fields[3].strip(), fields[4].strip(), int(fields[0])))
    return rows


def _read_dev_ids(path):
    """Reads GLUE's `#1 ID<TAB>#2 ID` lines into a set of pairs."""
    ids = set()
    with open(path, encoding="utf-8-sig") as lines:
        for number, line in enumerate(lines, start=1):
            fields = line.strip().split("\t")
            if fields == [""]:
                continue
            if len(fields) != 2 or not all(field.isdigit() for field in fields):
                raise ValueError(
                    f"{path}:{number}: expected '#1 ID<TAB>#2 ID' (two numbers); "
                    f"found {line.strip()[:60]!r}"
                )
            ids.add(tuple(fields))
    return ids
