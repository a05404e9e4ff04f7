"""SST-2, the binary Stanford Sentiment Treebank as GLUE distributes it."""

from kbert.data.data_dir import locate

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
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines or lines[0].split("\t")[:2] != ["sentence", "label"]:
        raise ValueError(f"{path}:1: expected the header 'sentence<TAB>label'")
    texts, labels = [], []
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        text, tab, label = line.rpartition("\t")
        if not tab or label not in ("0", "1"):
            raise ValueError(f"{path}:{number}: expected 'sentence<TAB>0|1'; found {line[:60]!r}")
        texts.append(text.strip())
        labels.append(int(label))
    return texts, labels
