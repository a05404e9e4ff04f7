"""Entity-level scores of token tagging (NER, chunking) in plain Python, as CoNLL reports them.

Tags are IOB2 strings: "B-X" begins an entity of type X, "I-X" continues one, "O" is outside. An
entity is a `(start, end, type)` triple of word indices with `end` exclusive, so the entity's
words are `words[start:end]`.

Scores are exact match, as the CoNLL-2000/2003 `conlleval` script (and seqeval's default mode)
computes them: a predicted entity is correct only when its start, end and type all equal those of
a gold entity of the same sentence. Precision, recall and F1 are micro-averaged (every entity of
every type pooled) and also given per type. A score whose denominator is zero is 0, as in
`kbert.metrics.classification_metrics`.

A tagger decoded by argmax can emit invalid IOB2: an "I-X" that does not continue an entity of
type X (first in the sentence, after "O", or after a tag of another type). `repair` chooses how it
is read:

- "begin" (the default, conlleval's rule): it begins a new entity of type X, as if it were "B-X".
- "drop": it is read as "O"; so is each "I-X" after it, up to the next "B-" tag.

Token accuracy (`token_accuracy`) is reported beside entity F1 but says little on its own: most
words are "O", so a tagger that predicts "O" everywhere scores high and finds no entity.
"""

import numbers
from collections import Counter
from collections.abc import Mapping

from kbert.checks import check_int

_REPAIRS = ("begin", "drop")


def _check_repair(repair):
    if not isinstance(repair, str) or repair not in _REPAIRS:
        raise ValueError(f'repair must be "begin" or "drop"; received {repair!r}')


def _as_list(values, what):
    """Returns an ordered sequence (list, tuple, 1-D array, ...) as a list; rejects str and sets."""
    if isinstance(values, (str, bytes, set, frozenset, Mapping)):
        raise ValueError(
            f"{what} must be an ordered sequence (list, tuple or array); received "
            f"{type(values).__name__} {values!r}"
        )
    try:
        return list(values)
    except TypeError:
        raise ValueError(
            f"{what} must be an ordered sequence (list, tuple or array); received "
            f"{type(values).__name__} {values!r}"
        ) from None


def _parse_tag(tag, position):
    """Returns (prefix, type) of one IOB2 tag: ("O", None), ("B", type) or ("I", type)."""
    if isinstance(tag, str):
        if tag == "O":
            return "O", None
        prefix, dash, entity_type = tag.partition("-")
        if prefix in ("B", "I") and dash and entity_type:
            return prefix, entity_type
    raise ValueError(
        'tags must be IOB2 strings "B-<type>", "I-<type>" or "O"; received '
        f"{tag!r} at position {position}"
    )


def repair_bio(tags, repair="begin"):
    """Rewrites the invalid "I-X" tags of one sentence so the sequence is valid IOB2.

    An "I-X" is invalid when it does not continue an entity of type X: first in the sentence,
    after "O", or after a "B-Y"/"I-Y" of another type Y.

    Args:
        tags: sequence of str, one IOB2 tag per word ("B-PER", "I-PER", "O", ...).
        repair: str, default "begin". "begin" rewrites an invalid "I-X" to "B-X" (conlleval's
            reading); "drop" rewrites it to "O".

    Returns:
        list of str, the same length as `tags`, in which every "I-X" continues an entity of type X.
        `bio_to_entities(tags, repair)` equals `bio_to_entities(repair_bio(tags, repair))`.

    Example:
    >>> repair_bio(["O", "I-PER", "I-PER", "I-LOC"])
    ['O', 'B-PER', 'I-PER', 'B-LOC']
    >>> repair_bio(["O", "I-PER", "I-PER", "B-LOC", "I-LOC"], repair="drop")
    ['O', 'O', 'O', 'B-LOC', 'I-LOC']
    """
    _check_repair(repair)
    repaired = []
    open_type = None  # type of the entity the previous word belongs to, None after "O"
    for position, tag in enumerate(_as_list(tags, "tags")):
        prefix, entity_type = _parse_tag(tag, position)
        if prefix == "I" and entity_type != open_type:
            if repair == "begin":
                prefix = "B"
            else:
                prefix, entity_type = "O", None
        repaired.append("O" if prefix == "O" else f"{prefix}-{entity_type}")
        open_type = entity_type
    return repaired


def bio_to_entities(tags, repair="begin"):
    """Decodes the IOB2 tags of one sentence into entities.

    "B-X" always begins an entity of type X; "I-X" after "B-X" or "I-X" continues it; an invalid
    "I-X" (first in the sentence, after "O", or after another type) is read by `repair`, as in
    `repair_bio`.

    Args:
        tags: sequence of str, one IOB2 tag per word ("B-PER", "I-PER", "O", ...).
        repair: str, default "begin". "begin" (conlleval's rule): an invalid "I-X" begins an
            entity of type X. "drop": it is read as "O".

    Returns:
        list of `(start, end, type)` tuples in sentence order: int word indices with `end`
        exclusive, and the str type.

    Example:
    >>> bio_to_entities(["B-PER", "I-PER", "O", "B-LOC", "I-ORG"])
    [(0, 2, 'PER'), (3, 4, 'LOC'), (4, 5, 'ORG')]
    >>> bio_to_entities(["B-PER", "I-PER", "O", "B-LOC", "I-ORG"], repair="drop")
    [(0, 2, 'PER'), (3, 4, 'LOC')]
    """
    entities = []
    start, open_type = None, None
    for position, tag in enumerate(repair_bio(tags, repair)):
        if tag.startswith("I-"):
            continue  # repaired: it continues the open entity
        if start is not None:
            entities.append((start, position, open_type))
            start, open_type = None, None
        if tag.startswith("B-"):
            start, open_type = position, tag[2:]
    if start is not None:
        entities.append((start, position + 1, open_type))
    return entities


def _check_entity(entity, what, position):
    if (
        isinstance(entity, (str, bytes))
        or not isinstance(entity, (tuple, list))
        or len(entity) != 3
    ):
        raise ValueError(
            f"{what} must hold (start, end, type) entities; received {entity!r} at position "
            f"{position}"
        )
    start, end, entity_type = entity
    for value in (start, end):
        if not isinstance(value, numbers.Integral) or isinstance(value, bool):
            raise ValueError(
                f"{what} must hold (start, end, type) entities with int start and end; received "
                f"{entity!r}"
            )
    if not 0 <= start < end:
        raise ValueError(
            f"{what} must hold entities with 0 <= start < end (end exclusive); received {entity!r}"
        )
    if not isinstance(entity_type, str):
        raise ValueError(f"{what} must hold entities whose type is a str; received {entity!r}")
    return int(start), int(end), str(entity_type)


def _sentence_entities(sentence, what):
    """Returns (set of entities, number of tags or None when given as entities or empty)."""
    if isinstance(sentence, (set, frozenset)):
        items = list(sentence)
    else:
        items = _as_list(sentence, what)
        if items and isinstance(items[0], str):
            entities = bio_to_entities(items, repair="begin")
            return set(entities), len(items)
    if not items:
        return set(), None
    return {_check_entity(entity, what, i) for i, entity in enumerate(items)}, None


def _check_sentences(gold, predicted):
    gold = _as_list(gold, "gold")
    predicted = _as_list(predicted, "predicted")
    if len(gold) != len(predicted):
        raise ValueError(
            "gold and predicted must hold the same number of sentences; received "
            f"len(gold)={len(gold)} and len(predicted)={len(predicted)}"
        )
    return gold, predicted


def _precision_recall_f1(num_correct, num_predicted, num_gold):
    return {
        "precision": num_correct / num_predicted if num_predicted else 0.0,
        "recall": num_correct / num_gold if num_gold else 0.0,
        # 2c / (p + g) equals 2PR / (P + R) where both are defined, and is 0 (not NaN) otherwise.
        "f1": 2 * num_correct / (num_predicted + num_gold) if num_predicted + num_gold else 0.0,
    }


def entity_scores(gold, predicted):
    """Exact-match entity precision, recall and F1, micro-averaged and per type (CoNLL).

    Each sentence of `gold` and of `predicted` is given either as IOB2 tags or as a collection of
    entities, and the two forms can be mixed:

    - tags: a list (tuple, array) of str, decoded with `bio_to_entities(tags, repair="begin")`,
      conlleval's reading of invalid "I-" tags (call `repair_bio(tags, "drop")` first for the
      other reading). When both sides of a sentence are tags, they must have the same length.
    - entities: a set or list of `(start, end, type)` triples (end exclusive). Spans may nest or
      overlap; a repeated triple counts once.

    A sentence's form is told by its first item (a str means tags); an empty sentence has no
    entities.

    Args:
        gold: sequence with one item per sentence, tags or entities.
        predicted: sequence with one item per sentence, tags or entities, as many as `gold`.

    Returns:
        dict of plain Python values:
        - "precision", "recall", "f1": float, micro over all entities (0 where undefined).
        - "num_gold", "num_predicted", "num_correct": int entity counts.
        - "per_type": {type: {"precision", "recall", "f1": float, "support": int (gold entities
          of the type), "num_predicted", "num_correct": int}}, for each type found in `gold` or
          `predicted`, sorted by type.

    Example:
    >>> scores = entity_scores([["B-PER", "I-PER", "O", "B-LOC"]],
    ...                        [["B-PER", "O", "O", "B-LOC"]])
    >>> scores["precision"], scores["recall"], scores["f1"], scores["num_correct"]
    (0.5, 0.5, 0.5, 1)
    >>> scores["per_type"]["PER"]["f1"], scores["per_type"]["LOC"]["support"]
    (0.0, 1)
    """
    gold, predicted = _check_sentences(gold, predicted)
    gold_counts, predicted_counts, correct_counts = Counter(), Counter(), Counter()
    for index, (gold_sentence, predicted_sentence) in enumerate(zip(gold, predicted, strict=True)):
        gold_entities, gold_length = _sentence_entities(gold_sentence, f"gold sentence {index}")
        predicted_entities, predicted_length = _sentence_entities(
            predicted_sentence, f"predicted sentence {index}"
        )
        if (
            gold_length is not None
            and predicted_length is not None
            and (gold_length != predicted_length)
        ):
            raise ValueError(
                f"gold and predicted tags of sentence {index} must have the same length; "
                f"received {gold_length} and {predicted_length}"
            )
        gold_counts.update(entity[2] for entity in gold_entities)
        predicted_counts.update(entity[2] for entity in predicted_entities)
        correct_counts.update(entity[2] for entity in gold_entities & predicted_entities)

    num_gold = sum(gold_counts.values())
    num_predicted = sum(predicted_counts.values())
    num_correct = sum(correct_counts.values())
    per_type = {}
    for entity_type in sorted(set(gold_counts) | set(predicted_counts)):
        per_type[entity_type] = {
            **_precision_recall_f1(
                correct_counts[entity_type],
                predicted_counts[entity_type],
                gold_counts[entity_type],
            ),
            "support": gold_counts[entity_type],
            "num_predicted": predicted_counts[entity_type],
            "num_correct": correct_counts[entity_type],
        }
    return {
        **_precision_recall_f1(num_correct, num_predicted, num_gold),
        "num_gold": num_gold,
        "num_predicted": num_predicted,
        "num_correct": num_correct,
        "per_type": per_type,
    }


def token_accuracy(gold, predicted, ignore_tags=()):
    """Fraction of words whose predicted tag equals the gold tag, over all sentences.

    Args:
        gold: sequence with one item per sentence, each a sequence of tags (str) or tag ids (int).
        predicted: sequence with one item per sentence, each the same length as its gold sentence.
        ignore_tags: collection of tags or ids, default (). Positions whose gold tag is in it are
            left out, e.g. `("O",)` for accuracy on entity words only, or `(-100,)` for the
            padding and sub-word positions of a label array.

    Returns:
        float in [0, 1]; 0.0 when no position is counted (no words, or all ignored).

    Example:
    >>> token_accuracy([["B-PER", "I-PER", "O"], ["O"]], [["B-PER", "O", "O"], ["O"]])
    0.75
    >>> token_accuracy([["B-PER", "I-PER", "O"], ["O"]], [["B-PER", "O", "O"], ["O"]],
    ...                ignore_tags=("O",))
    0.5
    """
    gold, predicted = _check_sentences(gold, predicted)
    if isinstance(ignore_tags, (str, bytes)):
        raise ValueError(
            f"ignore_tags must be a collection of tags such as ('O',); received str {ignore_tags!r}"
        )
    try:
        ignored = frozenset(ignore_tags)
    except TypeError:
        raise ValueError(
            f"ignore_tags must be a collection of tags such as ('O',); received {ignore_tags!r}"
        ) from None
    num_counted = num_correct = 0
    for index, (gold_sentence, predicted_sentence) in enumerate(zip(gold, predicted, strict=True)):
        gold_tags = _as_list(gold_sentence, f"gold sentence {index}")
        predicted_tags = _as_list(predicted_sentence, f"predicted sentence {index}")
        if len(gold_tags) != len(predicted_tags):
            raise ValueError(
                f"gold and predicted tags of sentence {index} must have the same length; "
                f"received {len(gold_tags)} and {len(predicted_tags)}"
            )
        for gold_tag, predicted_tag in zip(gold_tags, predicted_tags, strict=True):
            if gold_tag in ignored:
                continue
            num_counted += 1
            num_correct += bool(gold_tag == predicted_tag)
    return num_correct / num_counted if num_counted else 0.0


def entity_report(scores, digits=2):
    """Formats the result of `entity_scores` as a text table in percent, for printing.

    Args:
        scores: dict returned by `entity_scores`.
        digits: int, default 2. Digits after the decimal point.

    Returns:
        str: a header line, one line per type (sorted), a rule, and a "micro" line whose support
        is the number of gold entities. No trailing newline.

    Example:
    >>> scores = entity_scores([["B-PER", "I-PER", "O", "B-LOC"]],
    ...                        [["B-PER", "O", "O", "B-LOC"]])
    >>> print(entity_report(scores))
    type   precision  recall      f1  support
    LOC       100.00  100.00  100.00        1
    PER         0.00    0.00    0.00        1
    -----------------------------------------
    micro      50.00   50.00   50.00        2
    """
    check_int("digits", digits, minimum=0)
    required = ("precision", "recall", "f1", "num_gold", "per_type")
    if not isinstance(scores, Mapping) or any(key not in scores for key in required):
        raise ValueError(
            f"scores must be the dict returned by entity_scores, with keys {list(required)}; "
            f"received {scores!r}"
        )
    rows = [
        (str(entity_type), values["precision"], values["recall"], values["f1"], values["support"])
        for entity_type, values in sorted(scores["per_type"].items())
    ]
    micro = ("micro", scores["precision"], scores["recall"], scores["f1"], scores["num_gold"])
    names = ("type", "precision", "recall", "f1", "support")
    widths = [max(len(names[0]), *(len(row[0]) for row in [*rows, micro]))]
    widths += [max(len(name), digits + 4) for name in names[1:4]]  # "100." + digits
    widths.append(max(len(names[4]), *(len(str(row[4])) for row in [*rows, micro])))

    def line(row):
        cells = [f"{row[0]:<{widths[0]}}"]
        cells += [
            f"{100 * value:>{width}.{digits}f}"
            for value, width in zip(row[1:4], widths[1:4], strict=True)
        ]
        cells.append(f"{row[4]:>{widths[4]}}")
        return "  ".join(cells)

    header = "  ".join(
        [f"{names[0]:<{widths[0]}}"]
        + [f"{name:>{width}}" for name, width in zip(names[1:], widths[1:], strict=True)]
    )
    return "\n".join([header, *(line(row) for row in rows), "-" * len(header), line(micro)])
