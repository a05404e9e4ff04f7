"""Text-classification tasks with fixed train, validation and test splits.

GLUE keeps its test labels private, so a GLUE task's public dev file is the test set here, and
the validation set (early stopping, choosing hyperparameters) is a held-out slice of the labeled
training file: the rows `np.random.default_rng(seed).permutation(n)[:round(n * fraction)]`,
with train the rest, so the two are disjoint and the same for every run with the same seed.

| task      | classes | train + validation (held-out slice) | test                  |
|-----------|---------|-------------------------------------|-----------------------|
| trec      | 6       | trec/train_5500.label (5,452)       | trec/TREC_10.label (500) |
| trec-fine | 50      | trec/train_5500.label (5,452)       | trec/TREC_10.label (500) |
| sst2      | 2       | sst2/train.tsv (67,349)             | sst2/dev.tsv (872, GLUE dev) |
| rte       | 2       | rte/train.tsv (2,490)               | rte/dev.tsv (277, GLUE dev) |
| mrpc      | 2       | mrpc/train.tsv (3,668)              | mrpc/dev.tsv (408, GLUE dev) |
| imdb      | 2       | imdb/train.jsonl (25,000)           | imdb/test.jsonl (25,000) |

With the default `validation_fraction=0.1`, train/validation hold 4,907/545 (TREC), 60,614/6,735
(SST-2), 2,241/249 (RTE), 3,301/367 (MRPC) and 22,500/2,500 (IMDb) examples. trec and trec-fine
hold out the same questions.

Two caveats. SST-2's training file has phrase-level examples cut from its own sentences, so a
validation slice shares text with train and scores higher than GLUE dev does. TREC_10 uses 42 of
the 50 fine classes, all of which occur in train_5500; the 8 others (ENTY:cremat, ENTY:letter,
ENTY:religion, ENTY:symbol, ENTY:word, NUM:code, NUM:ord, NUM:volsize) have no test question, so
a per-class report over the test set lists 42 classes. The label set of every task is the set
of its training file's labels (the tests check this), and a validation or test label outside it
is an error that names the class and the file, never a silently added class.
"""

import dataclasses
from pathlib import Path

import numpy as np

from kbert.data.data_dir import data_dir as find_data_dir
from kbert.data.imdb import read_imdb
from kbert.data.label_vocabulary import LabelVocabulary
from kbert.data.mrpc import read_mrpc
from kbert.data.rte import LABELS as RTE_LABELS
from kbert.data.rte import read_rte
from kbert.data.sst2 import read_sst2
from kbert.data.trec import COARSE_LABELS, read_trec
from kbert.data.tsv_rows import text_lines

SPLITS = ("train", "validation", "test")
METRICS = ("accuracy", "f1")

_TREC_FINE_LABELS = (
    "ABBR:abb",
    "ABBR:exp",
    "DESC:def",
    "DESC:desc",
    "DESC:manner",
    "DESC:reason",
    "ENTY:animal",
    "ENTY:body",
    "ENTY:color",
    "ENTY:cremat",
    "ENTY:currency",
    "ENTY:dismed",
    "ENTY:event",
    "ENTY:food",
    "ENTY:instru",
    "ENTY:lang",
    "ENTY:letter",
    "ENTY:other",
    "ENTY:plant",
    "ENTY:product",
    "ENTY:religion",
    "ENTY:sport",
    "ENTY:substance",
    "ENTY:symbol",
    "ENTY:techmeth",
    "ENTY:termeq",
    "ENTY:veh",
    "ENTY:word",
    "HUM:desc",
    "HUM:gr",
    "HUM:ind",
    "HUM:title",
    "LOC:city",
    "LOC:country",
    "LOC:mount",
    "LOC:other",
    "LOC:state",
    "NUM:code",
    "NUM:count",
    "NUM:date",
    "NUM:dist",
    "NUM:money",
    "NUM:ord",
    "NUM:other",
    "NUM:perc",
    "NUM:period",
    "NUM:speed",
    "NUM:temp",
    "NUM:volsize",
    "NUM:weight",
)
_PAIR_HEADER, _SINGLE_HEADER = "text_a\ttext_b\tlabel", "text\tlabel"


@dataclasses.dataclass(frozen=True)
class ClassificationTask:
    """What a classification task is: its classes, input kind and headline metric.

    Args:
        name: str. The task's key, e.g. "rte".
        label_names: LabelVocabulary. The classes; a class id is its position.
        is_pair: bool. True when each example is two texts (premise and hypothesis, ...).
        metric: str, default "accuracy". The headline metric, "accuracy" or "f1" (binary F1 of
            `positive_label`).
        description: str, default "". One line for people.
        positive_label: str or int, default None. The positive class for "f1".
        reported_metrics: tuple of str, default None: `(metric,)`, plus "accuracy" when the
            headline metric is F1 (GLUE reports both for MRPC).

    Example:
    >>> task = CLASSIFICATION_TASKS["mrpc"]
    >>> task.metric, task.positive_label, task.reported_metrics
    ('f1', 'paraphrase', ('f1', 'accuracy'))
    """

    name: str
    label_names: LabelVocabulary
    is_pair: bool
    metric: str = "accuracy"
    description: str = ""
    positive_label: object = None
    reported_metrics: tuple = None

    def __post_init__(self):
        if not isinstance(self.label_names, LabelVocabulary):
            raise ValueError(
                f"label_names must be a LabelVocabulary; received {type(self.label_names).__name__}"
            )
        if self.metric not in METRICS:
            raise ValueError(f"metric must be one of {METRICS}; received {self.metric!r}")
        if self.metric == "f1" and self.positive_label not in self.label_names.names:
            raise ValueError(
                f"metric 'f1' needs positive_label, one of "
                f"{list(self.label_names.names)!r}; received {self.positive_label!r}"
            )
        if self.reported_metrics is None:
            reported = (self.metric,) + (("accuracy",) if self.metric != "accuracy" else ())
            object.__setattr__(self, "reported_metrics", reported)


@dataclasses.dataclass(frozen=True, eq=False)
class Examples:
    """One split of a classification task, ready to tokenize.

    Args:
        texts: list of str. The (first) texts.
        text_pairs: list of str, or None for single-text tasks. The second texts.
        labels: np.int32 array. Class ids into `label_names`.
        label_names: LabelVocabulary. The task's classes.
        source: str. The file the examples came from and which rows of it.
    """

    texts: list
    text_pairs: list
    labels: np.ndarray
    label_names: LabelVocabulary
    source: str

    def __len__(self):
        return len(self.texts)

    def subset(self, rows):
        """The examples at `rows` (ints), as a new `Examples`."""
        rows = [int(row) for row in rows]
        return Examples(
            texts=[self.texts[row] for row in rows],
            text_pairs=None if self.text_pairs is None else [self.text_pairs[row] for row in rows],
            labels=self.labels[rows],
            label_names=self.label_names,
            source=f"{self.source} (subset of {len(rows)})",
        )

    def sample(self, size, seed):
        """`size` of the examples drawn by `seed`, kept in file order, as a new `Examples`
        (these examples themselves when `size` is 0 or None, or not smaller than their count).

        Raises:
            ValueError: `size` is negative.
        """
        if size is not None and size < 0:
            raise ValueError(f"sample size must be 0 (all) or more, got {size}")
        if not size or size >= len(self):
            return self
        rng = np.random.default_rng(seed)
        return self.subset(np.sort(rng.permutation(len(self))[:size]))


# The readers give 0/1 for these; tasks name the classes (class id = the reader's int).
_BINARY_SENTIMENT = ("negative", "positive")
_PARAPHRASE = ("not_paraphrase", "paraphrase")

CLASSIFICATION_TASKS = {
    "trec": ClassificationTask(
        "trec",
        LabelVocabulary(COARSE_LABELS),
        is_pair=False,
        description="TREC question type (Li & Roth 2002), 6 coarse classes: ABBR abbreviation, "
        "DESC description, ENTY entity, HUM human, LOC location, NUM number",
    ),
    "trec-fine": ClassificationTask(
        "trec-fine",
        LabelVocabulary(_TREC_FINE_LABELS),
        is_pair=False,
        description="TREC question type, the 50 fine classes of train_5500 ('NUM:date', "
        "'LOC:city', ...); TREC_10 uses 42 of them",
    ),
    "sst2": ClassificationTask(
        "sst2",
        LabelVocabulary(_BINARY_SENTIMENT),
        is_pair=False,
        description="SST-2 (GLUE): sentiment of movie-review sentences and phrases, "
        "0 negative, 1 positive",
    ),
    "rte": ClassificationTask(
        "rte",
        LabelVocabulary(RTE_LABELS),
        is_pair=True,
        description="RTE (GLUE): does sentence 1 entail sentence 2? 'entailment' or "
        "'not_entailment'",
    ),
    "mrpc": ClassificationTask(
        "mrpc",
        LabelVocabulary(_PARAPHRASE),
        is_pair=True,
        metric="f1",
        positive_label="paraphrase",
        description="MRPC (GLUE): are two news sentences paraphrases? 1 yes, 0 no; F1 of "
        "class 1 and accuracy are reported, as GLUE does",
    ),
    "imdb": ClassificationTask(
        "imdb",
        LabelVocabulary(_BINARY_SENTIMENT),
        is_pair=False,
        description="IMDb (Maas et al. 2011): sentiment of full movie reviews, 0 negative "
        "(1-4 stars), 1 positive (7-10 stars)",
    ),
}

# Each task's (train file, test file) under the data directory, as the readers look them up.
_FILES = {
    "trec": ("trec/train_5500.label", "trec/TREC_10.label"),
    "trec-fine": ("trec/train_5500.label", "trec/TREC_10.label"),
    "sst2": ("sst2/train.tsv", "sst2/dev.tsv"),
    "rte": ("rte/train.tsv", "rte/dev.tsv"),
    "mrpc": ("mrpc/train.tsv", "mrpc/dev.tsv"),
    "imdb": ("imdb/train.jsonl", "imdb/test.jsonl"),
}


def load_classification_task(
    name, split, data_dir=None, validation_fraction=0.1, seed=0, max_examples=None
):
    """Loads one split of a built-in task (see the module docstring for the split table).

    Args:
        name: str. A key of `CLASSIFICATION_TASKS`: "trec", "trec-fine", "sst2", "rte", "mrpc"
            or "imdb".
        split: str. "train", "validation" (a held-out slice of the training file) or "test".
        data_dir: str or Path, default None (`KBERT_DATA_DIR`, then ../shared/data).
        validation_fraction: float, default 0.1. The share of the training file held out.
        seed: int, default 0. Chooses the held-out rows; train and validation are shuffled in
            that same permutation's order, test keeps file order.
        max_examples: int, default None. Keep only the first `max_examples` of the split (a
            seeded random sample for train and validation; the held-out rows do not change).

    Returns:
        An `Examples`.

    Example:
    >>> validation = load_classification_task("rte", "validation")  # doctest: +SKIP
    >>> len(validation), validation.label_names.names  # doctest: +SKIP
    (249, ('entailment', 'not_entailment'))
    """
    if name not in CLASSIFICATION_TASKS:
        raise ValueError(
            f"unknown classification task {name!r}; expected one of {sorted(CLASSIFICATION_TASKS)}"
        )
    _check_split_arguments(split, validation_fraction, seed, max_examples)
    task = CLASSIFICATION_TASKS[name]
    train_file, test_file = _FILES[name]
    if split == "test":
        texts, pairs, labels = _read_builtin(name, "test", data_dir, max_examples)
        rows = np.arange(min(len(texts), max_examples or len(texts)))
        source = _source(test_file, data_dir)
    else:
        texts, pairs, labels = _read_builtin(name, "train", data_dir, None)
        rows = _held_out_rows(len(texts), split, validation_fraction, seed)[:max_examples]
        source = (
            f"{_source(train_file, data_dir)} ({split}: {len(rows)} rows of "
            f"{len(texts)}, validation_fraction={validation_fraction}, seed={seed})"
        )
    return _examples(texts, pairs, labels, rows, task.label_names, source, split)


def classification_task_from_files(
    train_path,
    test_path,
    validation_path=None,
    name="custom",
    validation_fraction=0.1,
    seed=0,
    max_examples=None,
    metric="accuracy",
    positive_label=None,
):
    """Builds a task and its three splits from your own tab-separated files.

    Each line is `text<TAB>label` (single texts) or `text_a<TAB>text_b<TAB>label` (pairs); the
    first line decides which, and every line of every file must agree. Texts may not contain
    tabs (there is no quoting). A first line exactly `text<TAB>label` or
    `text_a<TAB>text_b<TAB>label` is a header and skipped; any other first line is data. Blank
    lines are skipped; a byte-order mark is allowed. Labels are kept as strings ("1" is not 1).

    The classes are the sorted distinct labels of the training file; a validation or test label
    outside them is an error. Without `validation_path`, validation is a held-out slice of the
    training file, as in `load_classification_task`.

    Args:
        train_path: str or Path. The labeled training file.
        test_path: str or Path. The labeled test file.
        validation_path: str or Path, default None. A labeled validation file.
        name: str, default "custom". The task's name.
        validation_fraction: float, default 0.1. Held-out share of train when there is no
            validation file.
        seed: int, default 0. Chooses the held-out rows and the order of train and validation.
        max_examples: int, default None. Keep only `max_examples` training examples (a seeded
            sample); validation and test are never cut, so their metrics cover every row.
        metric: str, default "accuracy". "accuracy" or "f1".
        positive_label: str, default None. The positive class when `metric` is "f1".

    Returns:
        `(task, splits)`: a `ClassificationTask` and a dict of `Examples` keyed by "train",
        "validation" and "test".

    Example:
    >>> task, splits = classification_task_from_files("train.tsv", "test.tsv")  # doctest: +SKIP
    >>> task.is_pair, task.label_names.names, len(splits["validation"])  # doctest: +SKIP
    (False, ('negative', 'positive'), 100)
    """
    _check_split_arguments("train", validation_fraction, seed, max_examples)
    texts, pairs, labels = _read_labeled_tsv(train_path)
    task = ClassificationTask(
        name,
        LabelVocabulary.from_labels(labels),
        is_pair=pairs is not None,
        metric=metric,
        positive_label=positive_label,
        description=f"from {train_path} and {test_path}",
    )
    splits = {}
    if validation_path is None:
        for split in ("train", "validation"):
            rows = _held_out_rows(len(texts), split, validation_fraction, seed)
            rows = rows[:max_examples] if split == "train" else rows
            source = (
                f"{train_path} ({split}: {len(rows)} rows of {len(texts)}, "
                f"validation_fraction={validation_fraction}, seed={seed})"
            )
            splits[split] = _examples(texts, pairs, labels, rows, task.label_names, source, split)
    else:
        rows = np.random.default_rng(seed).permutation(len(texts))[:max_examples]
        splits["train"] = _examples(
            texts, pairs, labels, rows, task.label_names, str(train_path), "train"
        )
    for split, path in (("validation", validation_path), ("test", test_path)):
        if path is None:
            continue
        other_texts, other_pairs, other_labels = _read_labeled_tsv(path)
        if (other_pairs is not None) != task.is_pair:
            kinds = ("text pairs", "single texts")
            raise ValueError(
                f"{path} holds {kinds[other_pairs is None]} but the training file "
                f"{train_path} holds {kinds[not task.is_pair]}; expected the same "
                f"kind in every file"
            )
        rows = np.arange(len(other_texts))
        splits[split] = _examples(
            other_texts, other_pairs, other_labels, rows, task.label_names, str(path), split
        )
    return task, {split: splits[split] for split in SPLITS}


def _check_split_arguments(split, validation_fraction, seed, max_examples):
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}; received {split!r}")
    if isinstance(validation_fraction, bool) or not (
        isinstance(validation_fraction, (int, float)) and 0 <= validation_fraction < 1
    ):
        raise ValueError(
            f"validation_fraction must be a number in [0, 1); received {validation_fraction!r}"
        )
    if validation_fraction == 0 and split == "validation":
        raise ValueError(
            "split 'validation' needs validation_fraction > 0; received 0 (with 0 "
            "the whole training file is the train split)"
        )
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative int; received {seed!r}")
    if max_examples is not None and (
        isinstance(max_examples, bool) or not isinstance(max_examples, int) or max_examples < 1
    ):
        raise ValueError(f"max_examples must be a positive int or None; received {max_examples!r}")


def _held_out_rows(count, split, validation_fraction, seed):
    """The training file's rows for `split`: the seeded permutation's head is validation."""
    size = int(round(count * validation_fraction))
    if validation_fraction == 0:
        return np.random.default_rng(seed).permutation(count)
    if not 0 < size < count:
        raise ValueError(
            f"validation_fraction={validation_fraction} of {count} examples leaves "
            f"{size} for validation and {count - size} for train; expected both "
            f"to be non-empty"
        )
    order = np.random.default_rng(seed).permutation(count)
    return order[:size] if split == "validation" else order[size:]


def _examples(texts, pairs, labels, rows, label_names, source, split):
    """Selects `rows` and encodes their labels, naming any class the task does not have."""
    selected = [labels[row] for row in rows]
    known = set(label_names.names)
    unseen = sorted({repr(label) for label in selected if label not in known})
    if unseen:
        raise ValueError(
            f"{split} labels in {source} include {len(unseen)} class(es) absent from "
            f"the training labels: {', '.join(unseen)}; expected only the "
            f"{len(label_names)} classes {list(label_names.names)!r}"
        )
    return Examples(
        texts=[texts[row] for row in rows],
        text_pairs=None if pairs is None else [pairs[row] for row in rows],
        labels=label_names.encode(selected, source=source),
        label_names=label_names,
        source=source,
    )


def _read_builtin(name, role, data_dir, max_examples):
    """Reads a task's training file (`role` "train") or test file (`role` "test")."""
    train = role == "train"
    if name in ("trec", "trec-fine"):
        texts, labels = read_trec(role, fine=name == "trec-fine", data_dir=data_dir)
        return texts, None, labels
    if name == "sst2":
        texts, labels = read_sst2("train" if train else "dev", data_dir=data_dir)
        return texts, None, [_BINARY_SENTIMENT[label] for label in labels]
    if name == "rte":
        return read_rte("train" if train else "dev", data_dir=data_dir)
    if name == "mrpc":
        texts_a, texts_b, labels = read_mrpc("train" if train else "dev", data_dir=data_dir)
        return texts_a, texts_b, [_PARAPHRASE[label] for label in labels]
    texts, labels = read_imdb(role, data_dir=data_dir, max_examples=max_examples)
    return texts, None, [_BINARY_SENTIMENT[label] for label in labels]


def _source(relative_path, data_dir):
    root = find_data_dir(data_dir)
    if root is not None and (root / relative_path).is_file():
        return str(root / relative_path)
    return f"{relative_path} (downloaded public original)"


def _read_labeled_tsv(path):
    """Reads `text<TAB>label` or `text_a<TAB>text_b<TAB>label` lines: (texts, pairs, labels)."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"expected a labeled TSV file; {str(path)!r} does not exist")
    texts, pairs, labels, columns = [], [], [], None
    for number, line in text_lines(path):  # UTF-8 text, checked line by line
        if number == 1 and line in (_SINGLE_HEADER, _PAIR_HEADER):
            columns = line.count("\t") + 1
            continue
        if not line.strip():
            continue
        fields = line.split("\t")
        if columns is None and len(fields) in (2, 3):
            columns = len(fields)
        if len(fields) != columns:
            expected = (
                "'text<TAB>label' or 'text_a<TAB>text_b<TAB>label'"
                if columns is None
                else f"{columns} tab-separated fields as in the file's first line"
            )
            raise ValueError(
                f"{path}:{number}: expected {expected}; found {len(fields)} fields in {line[:60]!r}"
            )
        if any(not text.strip() for text in fields[:-1]):
            raise ValueError(
                f"{path}:{number}: empty text; expected non-empty text before "
                f"the label, found {line[:60]!r}"
            )
        if not fields[-1].strip():
            raise ValueError(
                f"{path}:{number}: empty label; expected a class name after the "
                f"last tab, found {line[:60]!r}"
            )
        texts.append(fields[0].strip())
        if columns == 3:
            pairs.append(fields[1].strip())
        labels.append(fields[-1].strip())
    if not texts:
        raise ValueError(
            f"{path}: no examples; expected lines 'text<TAB>label' or 'text_a<TAB>text_b<TAB>label'"
        )
    return texts, pairs if columns == 3 else None, labels
