"""RTE, Recognizing Textual Entailment (PASCAL RTE 1, 2, 3 and 5) as GLUE distributes it."""

from kbert.data.data_dir import locate
from kbert.data.tsv_rows import tsv_rows

LABELS = ("entailment", "not_entailment")
_HEADER = ["index", "sentence1", "sentence2", "label"]
_URL = "https://dl.fbaipublicfiles.com/glue/data/RTE.zip"


def read_rte(split="train", data_dir=None):
    """Reads RTE premise/hypothesis pairs and their labels.

    The files are GLUE's tab-separated `index<TAB>sentence1<TAB>sentence2<TAB>label` with a
    header. Sentences contain `"`, so lines are split on tabs with no quoting (csv's
    `QUOTE_NONE`). Without a local copy, the split is read from GLUE's `RTE.zip`.

    Args:
        split: str, default "train". "train" (2,490 pairs) or "dev" (277). GLUE's test split
            has no labels, so it is refused.
        data_dir: str or Path, default None (`KBERT_DATA_DIR`, then ../shared/data).

    Returns:
        `(texts_a, texts_b, labels)`: three lists of str; the labels are "entailment" or
        "not_entailment".

    Example:
    >>> premises, hypotheses, labels = read_rte("dev")  # doctest: +SKIP
    >>> len(labels), labels.count("entailment")  # doctest: +SKIP
    (277, 146)
    """
    if split == "test":
        raise ValueError(
            "RTE split 'test' has no labels (GLUE keeps them private); expected 'train' or 'dev'"
        )
    if split not in ("train", "dev"):
        raise ValueError(f"RTE split must be 'train' or 'dev'; received {split!r}")
    path = locate(f"rte/{split}.tsv", _URL, data_dir, extract_member=f"RTE/{split}.tsv")
    texts_a, texts_b, labels = [], [], []
    for number, fields in tsv_rows(path, _HEADER):
        if (
            len(fields) != 4
            or fields[3] not in LABELS
            or not fields[1].strip()
            or not fields[2].strip()
        ):
            raise ValueError(
                f"{path}:{number}: expected 'index<TAB>sentence1<TAB>sentence2"
                f"<TAB>{'|'.join(LABELS)}' with non-empty sentences; found "
                f"{len(fields)} fields in {chr(9).join(fields)[:60]!r}"
            )
        texts_a.append(fields[1].strip())
        texts_b.append(fields[2].strip())
        labels.append(fields[3])
    return texts_a, texts_b, labels
