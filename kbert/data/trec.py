"""TREC question classification (Li & Roth 2002): 6 coarse and 50 fine labels."""

from kbert.data.data_dir import locate

COARSE_LABELS = ("ABBR", "DESC", "ENTY", "HUM", "LOC", "NUM")
_FILES = {"train": "train_5500.label", "test": "TREC_10.label"}
_URL = "https://cogcomp.seas.upenn.edu/Data/QA/QC/"


def read_trec(split="train", fine=False, data_dir=None):
    """Reads TREC questions and labels.

    The local copy (`<data_dir>/trec/`) is UTF-8; the cogcomp original has one Latin-1 byte,
    so undecodable files are read as Latin-1.

    Args:
        split: str, "train" (5,452 questions) or "test" (500).
        fine: bool, default False. Fine labels ("NUM:dist") instead of coarse ("NUM").
        data_dir: str or Path, default None (`KBERT_DATA_DIR`, then ../shared/data).

    Returns:
        `(texts, labels)`: two lists of str.

    Example:
    >>> texts, labels = read_trec("test")  # doctest: +SKIP
    >>> labels[0], texts[0]  # doctest: +SKIP
    ('NUM', 'How far is it from Denver to Aspen ?')
    """
    if split not in _FILES:
        raise ValueError(f"TREC split must be one of {sorted(_FILES)}; received {split!r}")
    path = locate(f"trec/{_FILES[split]}", _URL + _FILES[split], data_dir)
    raw = path.read_bytes()
    try:
        content = raw.decode("utf-8")
    except UnicodeDecodeError:
        content = raw.decode("latin-1")
    texts, labels = [], []
    for number, line in enumerate(content.splitlines(), start=1):
        if not line.strip():
            continue
        label, _, text = line.partition(" ")
        coarse, colon, fine_label = label.partition(":")
        if not colon or coarse not in COARSE_LABELS or not fine_label or not text.strip():
            raise ValueError(
                f"{path}:{number}: expected 'COARSE:fine question…' with COARSE in "
                f"{COARSE_LABELS}; found {line[:60]!r}"
            )
        texts.append(text.strip())
        labels.append(label if fine else coarse)
    return texts, labels
