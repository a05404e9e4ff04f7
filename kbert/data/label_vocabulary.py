"""An ordered set of class names and the ids a classifier predicts for them."""

import numbers

import numpy as np


class LabelVocabulary:
    """An ordered, duplicate-free tuple of label names; a name's position is its class id.

    Names are str or int (SST-2 and MRPC files label with 0/1, RTE and TREC with words). NumPy
    scalars are converted to their Python type, so a vocabulary built from an array round-trips
    through JSON.

    Args:
        names: iterable of str or int. The class names, in id order, at least one, no duplicates.

    Example:
    >>> vocabulary = LabelVocabulary(["entailment", "not_entailment"])
    >>> vocabulary.encode(["not_entailment", "entailment"]).tolist()
    [1, 0]
    >>> vocabulary.decode([0, 1])
    ['entailment', 'not_entailment']
    >>> LabelVocabulary.from_json(vocabulary.to_json()) == vocabulary
    True
    """

    def __init__(self, names):
        if isinstance(names, (str, bytes)):
            raise ValueError(
                f"label names must be a list of str or int; received the string "
                f"{names!r} (wrap a single name in a list)"
            )
        checked = []
        for name in names:
            if isinstance(name, np.generic):
                name = name.item()
            if isinstance(name, bool) or not isinstance(name, (str, numbers.Integral)):
                raise ValueError(
                    f"label names must be str or int; received {name!r} ({type(name).__name__})"
                )
            checked.append(name if isinstance(name, str) else int(name))
        if not checked:
            raise ValueError("a label vocabulary needs at least one name; received none")
        duplicates = sorted({repr(name) for name in checked if checked.count(name) > 1})
        if duplicates:
            raise ValueError(
                f"label names must be unique; received duplicates "
                f"{', '.join(duplicates)} in {checked!r}"
            )
        self._names = tuple(checked)
        self._ids = {name: index for index, name in enumerate(self._names)}

    @classmethod
    def from_labels(cls, labels):
        """Builds the vocabulary of the distinct labels in a dataset, sorted.

        Args:
            labels: iterable of str or int, e.g. the labels of a training file.

        Returns:
            A `LabelVocabulary` whose names are `sorted(set(labels))`.

        Example:
        >>> LabelVocabulary.from_labels(["b", "a", "b"]).names
        ('a', 'b')
        """
        labels = [label.item() if isinstance(label, np.generic) else label for label in labels]
        try:
            return cls(sorted(set(labels)))
        except TypeError:
            kinds = sorted({type(label).__name__ for label in labels})
            raise ValueError(
                f"labels must all be str or all be int to be sorted; received a "
                f"mix of {', '.join(kinds)}"
            ) from None

    @property
    def names(self):
        """The label names, a tuple in id order."""
        return self._names

    def __len__(self):
        return len(self._names)

    def __eq__(self, other):
        return isinstance(other, LabelVocabulary) and self._names == other.names

    def __hash__(self):
        return hash(self._names)

    def __repr__(self):
        return f"LabelVocabulary({list(self._names)!r})"

    def encode(self, labels, source=None):
        """Maps label names to class ids.

        Args:
            labels: iterable of str or int, names from this vocabulary.
            source: str, default None. Where the labels come from (a file path), named in the
                error for an unknown label.

        Returns:
            A 1-D `np.int32` array of ids.

        Example:
        >>> LabelVocabulary([0, 1]).encode([1, 1, 0]).tolist()
        [1, 1, 0]
        """
        if isinstance(labels, (str, bytes)):
            raise ValueError(f"labels must be a list of names; received the string {labels!r}")
        ids = []
        for label in labels:
            try:
                ids.append(self._ids[label])
            except (KeyError, TypeError):  # TypeError: an unhashable label
                where = f" in {source}" if source is not None else ""
                raise ValueError(
                    f"unknown label {label!r}{where}; expected one of the "
                    f"{len(self)} known labels {list(self._names)!r}"
                ) from None
        return np.asarray(ids, dtype=np.int32)

    def decode(self, ids):
        """Maps class ids back to label names.

        Args:
            ids: iterable of int in `[0, len(self))`, e.g. `argmax` of a classifier's logits.

        Returns:
            A list of names.

        Example:
        >>> LabelVocabulary(["neg", "pos"]).decode(np.array([1, 0]))
        ['pos', 'neg']
        """
        ids = np.asarray(ids)
        if ids.ndim != 1:
            raise ValueError(f"ids must be a 1-D sequence of class ids; received shape {ids.shape}")
        if ids.size and (ids.dtype == bool or not np.issubdtype(ids.dtype, np.integer)):
            raise ValueError(f"ids must be integers; received dtype {ids.dtype}")
        names = []
        for class_id in ids.tolist():
            if not 0 <= class_id < len(self):
                raise ValueError(
                    f"class id {class_id} is out of range: expected 0 to "
                    f"{len(self) - 1} for the labels {list(self._names)!r}"
                )
            names.append(self._names[class_id])
        return names

    def to_json(self):
        """Returns the names as a JSON-serialisable list (for a run directory's config).

        Example:
        >>> import json
        >>> json.dumps(LabelVocabulary(["a", "b"]).to_json())
        '["a", "b"]'
        """
        return list(self._names)

    @classmethod
    def from_json(cls, data):
        """Rebuilds a vocabulary from `to_json()`'s list (or a JSON string of it).

        Args:
            data: list of str or int, or a str holding that list as JSON.

        Returns:
            A `LabelVocabulary`.
        """
        if isinstance(data, str):
            import json

            try:
                data = json.loads(data)
            except json.JSONDecodeError as error:
                raise ValueError(
                    f"expected a JSON list of label names; received {data[:60]!r} ({error})"
                ) from None
        if not isinstance(data, list):
            raise ValueError(
                f"expected a JSON list of label names; received {type(data).__name__} {data!r:.60}"
            )
        return cls(data)
