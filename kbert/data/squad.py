"""SQuAD v1.1, extractive question answering over Wikipedia paragraphs (Rajpurkar et al. 2016)."""

import dataclasses
import json

from kbert.data.data_dir import data_dir as find_data_dir
from kbert.data.data_dir import locate

_URL = "https://rajpurkar.github.io/SQuAD-explorer/dataset/"
_TRAIN, _DEV = "squad_v1.1/train-v1.1.json", "squad_v1.1/dev-v1.1.json"


@dataclasses.dataclass(frozen=True)
class SquadExample:
    """One SQuAD question about one paragraph.

    Args:
        id: str. The question id, the key of the official evaluation.
        title: str. The Wikipedia article's title.
        context: str. The paragraph.
        question: str.
        answers: tuple of `(text, start)` pairs, `start` a character offset into `context`;
            empty for a question kept for evaluation only.

    Example:
    >>> example = SquadExample("q1", "Paris", "Paris is in France.", "Where is Paris?",
    ...                        (("France", 12),))
    >>> text, start = example.answers[0]
    >>> example.context[start:start + len(text)]
    'France'
    """

    id: str
    title: str
    context: str
    question: str
    answers: tuple = ()


def _field(value, key, kind, path, where):
    """Returns `value[key]`, checking it exists and is a `kind`."""
    if not isinstance(value, dict):
        raise ValueError(f"{path}: {where}: expected a JSON object; found {type(value).__name__}")
    if key not in value:
        raise ValueError(f"{path}: {where}: missing key {key!r}; found keys {sorted(value)}")
    field = value[key]
    # bool is an int subclass; an answer_start of `true` is malformed, not offset 1.
    if not isinstance(field, kind) or (kind is int and isinstance(field, bool)):
        raise ValueError(
            f"{path}: {where}.{key}: expected {kind.__name__}; found {type(field).__name__}"
        )
    return field


def _read_articles(path, validate):
    """Returns one list of `SquadExample` per article of a SQuAD v1.1 file."""
    with open(path, encoding="utf-8") as file:
        try:
            content = json.load(file)
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}: expected SQuAD JSON; found invalid JSON ({error})") from None
    articles = []
    for a, article in enumerate(_field(content, "data", list, path, "top level")):
        where = f"data[{a}]"
        title = _field(article, "title", str, path, where)
        examples = []
        for p, paragraph in enumerate(_field(article, "paragraphs", list, path, where)):
            where = f"data[{a}].paragraphs[{p}]"
            context = _field(paragraph, "context", str, path, where)
            for q, qa in enumerate(_field(paragraph, "qas", list, path, where)):
                where = f"data[{a}].paragraphs[{p}].qas[{q}]"
                id_ = _field(qa, "id", str, path, where)
                question = _field(qa, "question", str, path, where)
                answers = []
                for n, answer in enumerate(_field(qa, "answers", list, path, where)):
                    answer_where = f"{where}.answers[{n}]"
                    text = _field(answer, "text", str, path, answer_where)
                    start = _field(answer, "answer_start", int, path, answer_where)
                    if validate:
                        _check_answer(path, id_, context, text, start)
                    answers.append((text, start))
                examples.append(SquadExample(id_, title, context, question, tuple(answers)))
        articles.append(examples)
    return articles


def _check_answer(path, id_, context, text, start):
    end = start + len(text)
    if start < 0 or end > len(context):
        raise ValueError(
            f"{path}: question {id_!r}: answer offsets fall outside the context: "
            f"expected 0 <= start and start+len(text) <= {len(context)} (the context "
            f"length); found start {start}, end {end}"
        )
    if context[start:end] != text:
        raise ValueError(
            f"{path}: question {id_!r}: the context does not contain the answer at "
            f"its offset {start}: expected {text!r}; found {context[start:end]!r}"
        )


def read_squad(path, validate=True):
    """Reads a SQuAD v1.1 JSON file as one example per question.

    Questions with no answers are kept (`answers=()`), for evaluation files; `load_squad`
    refuses them in a training split.

    Args:
        path: str or Path. A file in the format
            `{"data": [{"title", "paragraphs": [{"context", "qas": [{"id", "question",
            "answers": [{"text", "answer_start"}]}]}]}]}`.
        validate: bool, default True. Check that every answer lies inside its context at its
            offset (`context[start:start + len(text)] == text`).

    Returns:
        A list of `SquadExample`, in file order.

    Raises:
        ValueError: a missing key or wrongly typed field (naming the path and where in the
            file), or with `validate`, an answer that is not in its context at its offset
            (naming the question id).

    Example:
    >>> examples = read_squad("../shared/data/squad_v1.1/dev-v1.1.json")  # doctest: +SKIP
    >>> len(examples), examples[0].answers[0]  # doctest: +SKIP
    (10570, ('Denver Broncos', 177))
    """
    return [example for article in _read_articles(path, validate) for example in article]


def load_squad(split="train", data_dir=None, train_articles=40):
    """Loads a SQuAD v1.1 split, falling back to a by-article split of the dev set.

    With `squad_v1.1/train-v1.1.json` under the data directory, or with no SQuAD there at all
    (both files are then downloaded), "train" is the official training set and "validation" the
    official dev set. With only `dev-v1.1.json` (the course machines), the dev set's articles
    are split: "train" is the first `train_articles` articles and "validation" the rest, so no
    article is in both. Report such scores as dev-split scores, not official dev scores.

    Args:
        split: str, default "train". "train" or "validation".
        data_dir: str or Path, default None (`KBERT_DATA_DIR`, then ../shared/data).
        train_articles: int, default 40. Dev articles used for training in the dev split
            (at least 1, fewer than the 48 articles); ignored for the official files.

    Returns:
        `(examples, source)`: a list of `SquadExample` and a short str, "official" or, e.g.,
        "dev-split(first 40 articles train / 8 eval)".

    Example:
    >>> examples, source = load_squad("validation")  # doctest: +SKIP
    >>> len(examples), source  # doctest: +SKIP
    (1589, 'dev-split(first 40 articles train / 8 eval)')
    """
    if split not in ("train", "validation"):
        raise ValueError(f"SQuAD split must be 'train' or 'validation'; received {split!r}")
    root = find_data_dir(data_dir)
    local_dev_only = root is not None and (root / _DEV).is_file() and not (root / _TRAIN).is_file()
    if not local_dev_only:
        relative = _TRAIN if split == "train" else _DEV
        path = locate(relative, _URL + relative.split("/")[-1], data_dir)
        examples = read_squad(path)
        if split == "train":
            _check_answered(path, examples)
        return examples, "official"
    path = root / _DEV
    articles = _read_articles(path, validate=True)
    if not 1 <= train_articles < len(articles):
        raise ValueError(
            f"train_articles must be at least 1 and fewer than the {len(articles)} "
            f"articles of {path}; received {train_articles}"
        )
    chosen = articles[:train_articles] if split == "train" else articles[train_articles:]
    examples = [example for article in chosen for example in article]
    if split == "train":
        _check_answered(path, examples)
    source = (
        f"dev-split(first {train_articles} articles train / {len(articles) - train_articles} eval)"
    )
    return examples, source


def _check_answered(path, examples):
    for example in examples:
        if not example.answers:
            raise ValueError(
                f"{path}: question {example.id!r} has no answers; a training split "
                "needs at least one per question"
            )


def squad_references(examples):
    """Returns the gold answers per question id, as the SQuAD metrics take them.

    Args:
        examples: iterable of `SquadExample`.

    Returns:
        A dict `{id: [answer text, ...]}`, in example order.

    Example:
    >>> squad_references([SquadExample("q1", "T", "a b", "?", (("b", 2), ("b", 2)))])
    {'q1': ['b', 'b']}
    """
    references = {}
    for example in examples:
        if example.id in references:
            raise ValueError(f"question id {example.id!r} appears twice; expected unique ids")
        references[example.id] = [text for text, _ in example.answers]
    return references
