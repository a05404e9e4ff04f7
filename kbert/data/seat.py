"""SEAT and WEAT association tests as files: two target sets and two attribute sets.

The Sentence Encoder Association Test (May et al., NAACL 2019, "On Measuring Social Biases in
Sentence Encoders") puts the Word Embedding Association Test's word lists (Caliskan et al.,
Science 2017) into semantically bleached sentences ("This is Katie.", "Katie is here.") and adds
tests of its own (the angry black woman stereotype, Heilman's double bind). The course copy is
`seat/` under the data directory (CC BY-NC 4.0; its SOURCE.md names the repository and commit).
Each file is one JSON object with `targ1`, `targ2` (target concepts X and Y) and `attr1`,
`attr2` (attributes A and B), each `{"category": str, "examples": [str, ...]}`.

The numbers (effect size, permutation p-value) are `kbert.analysis.association_tests`.
"""

import dataclasses
import json
from pathlib import Path

from kbert.data.data_dir import data_dir as find_data_dir

SETS = ("targ1", "targ2", "attr1", "attr2")


@dataclasses.dataclass(frozen=True)
class AssociationTest:
    """One association test: targets X and Y, attributes A and B, each a category and examples.

    Args:
        name: str. The file's stem ("sent-weat6").
        source: str. The file it was read from.
        categories: tuple of 4 str. The names of X, Y, A and B ("MaleNames", "FemaleNames",
            "Career", "Family").
        x, y, a, b: tuple of str. The examples (words or sentences) of each set.
    """

    name: str
    source: str
    categories: tuple
    x: tuple
    y: tuple
    a: tuple
    b: tuple

    def texts(self):
        """Every distinct example of the four sets, in file order (what an encoder must embed)."""
        return list(dict.fromkeys(self.x + self.y + self.a + self.b))


def association_test_path(name, data_dir=None):
    """The file of a SEAT/WEAT test: `name` as a path to a file, or a stem under `seat/`."""
    if Path(name).suffix == ".jsonl" or Path(name).is_file():
        return Path(name)
    root = find_data_dir(data_dir, required=True)
    return root / "seat" / f"{name}.jsonl"


def read_association_test(name, data_dir=None):
    """Reads one SEAT/WEAT test file and checks its four sets.

    Args:
        name: str or Path. A test's stem ("sent-weat6", "weat3", looked up in `seat/` under the
            data directory) or the path of a file in the same format.
        data_dir: str or Path, default None (`KBERT_DATA_DIR`, then ../shared/data).

    Returns:
        `AssociationTest`.

    Raises:
        ValueError: naming the file, when it is missing, not a JSON object, lacks one of
            `targ1`, `targ2`, `attr1`, `attr2`, or a set is not a category (str) with a
            non-empty list of non-empty strings.
    """
    path = association_test_path(str(name), data_dir)
    if not path.is_file():
        raise ValueError(f"{path}: no such SEAT/WEAT test file (expected seat/<test>.jsonl)")
    try:
        content = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise ValueError(f"{path}: cannot be read as JSON ({error})") from None
    if not isinstance(content, dict):
        raise ValueError(f"{path}: expected one JSON object with keys {', '.join(SETS)}")
    missing = [key for key in SETS if key not in content]
    if missing:
        raise ValueError(
            f"{path}: missing {', '.join(missing)}; a test holds {', '.join(SETS)}, each "
            '{"category": str, "examples": [str, ...]}'
        )
    categories, examples = [], []
    for key in SETS:
        entry = content[key]
        words = entry.get("examples") if isinstance(entry, dict) else None
        category = entry.get("category") if isinstance(entry, dict) else None
        if (
            not isinstance(category, str)
            or not isinstance(words, list)
            or not words
            or not all(isinstance(word, str) and word.strip() for word in words)
        ):
            raise ValueError(
                f'{path}: {key} must be {{"category": str, "examples": [non-empty str, ...]}} '
                f"with at least one example; received {str(entry)[:80]!r}"
            )
        categories.append(category)
        examples.append(tuple(words))
    return AssociationTest(path.stem, str(path), tuple(categories), *examples)
