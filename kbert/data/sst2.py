"""SST-2, the binary Stanford Sentiment Treebank as GLUE distributes it."""

from kbert.data.data_dir import locate
from kbert.data.tsv_rows import text_lines

LABELS = ("negative", "positive")
_URL = "https://dl.fbaipublicfiles.com/glue/data/SST-2.zip"


def read_sst2(split="dev", data_dir=None):
    """Reads SST-2 sentences and labels (0 negative, 1 positive).

    Args:
        split: str, "train" (67,349 phrases and sentences) or "dev" (872 sentences). GLUE's
            test split has no labels.
        data_dir: str or Path, default None (`KBERT_DATA_DIR`, then ../shared/data).

    Returns:
        `(texts, labels)`: a list of str and a list of int.
    """
    if split not in ("train", "dev"):
        raise ValueError(f"SST-2 split must be 'train' or 'dev'; received {split!r}")
    path = locate(f"sst2/{split}.tsv", _URL, data_dir, extract_member=f"SST-2/{split}.tsv")
    # text_lines: lines end at \n or \r only (str.splitlines also breaks at U+0085 and
    # friends inside a sentence) and a binary or non-UTF-8 file is refused naming FILE:line.
    lines = text_lines(path)
    header = next(lines, (1, ""))[1]
    if header.split("\t")[:2] != ["sentence", "label"]:
        raise ValueError(f"{path}:1: expected the header 'sentence<TAB>label'")
    texts, labels = [], []
    for number, line in lines:
        if not line.strip():
            continue
        text, tab, label = line.rpartition("\t")
        if not tab or label not in ("0", "1"):
            raise ValueError(f"{path}:{number}: expected 'sentence<TAB>0|1'; found {line[:60]!r}")
        texts.append(text.strip())
        labels.append(int(label))
    return texts, labels
