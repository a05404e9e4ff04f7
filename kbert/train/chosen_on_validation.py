"""The settings the grids chose on validation, read from their records, not copied by hand.

A lab that runs a method "at the setting validation chose" (lab03's adapters, lab05's
discriminative factor, lab06's LM-loss weight, lab17's temperature and soft weight, every
comparison's peak rates) reads that choice from the grid's own record in `docs/results/`. So a
re-recording of the course at one commit makes the grid's choice and the labs that read it
agree by construction: the grids run first (`benchmarks/course.py`), and a lab recorded after
them reads what they chose at the same commit. Each read file is pinned by its SHA-256 in the
reading run's record (`kbert.run_inputs.note_input`).

The records are read from `docs/results/`, or from `$KBERT_CHOICES_DIR` (which
`benchmarks/record_labs.py` sets to where it copies the records it makes); each choice's source
names the record and the commit it was made at. Where the record does not exist, or holds no
choice for the start, the reader falls back to the
source's setting (or the repository's default) and says so in `Chosen.source`, which the labs
print beside their table.

- `chosen_rates(start)`: full fine-tuning's and discriminative rates' peak rates and the
  discriminative factor (`benchmarks/adaptation_grid.py --studies rates`; lab01 in
  `adaptation_grid.json`, MiniLM-L6 in `adaptation_grid_minilm.json`);
- `chosen_factor(start)`: discriminative rates' factor (the same records);
- `chosen_adapters(start)`: the adapters' trainable set, size and peak rate, the best on
  validation among the sets' choices (`--studies adapters`, `adaptation_grid_adapters.json`);
- `chosen_multitask(start, train_examples)`: the LM-loss weights at the study's size nearest
  `train_examples` (`--studies multitask`, `adaptation_grid_multitask.json`);
- `chosen_distillation(start)`: temperature and soft-target weight
  (`benchmarks/distillation_grid.py`, `distillation_grid.json`).
"""

import dataclasses
import json
import os
from pathlib import Path

from kbert.run_inputs import note_input

RESULTS_DIR = Path(__file__).resolve().parents[2] / "docs" / "results"
# Where to read the records instead (set by `benchmarks/record_labs.py` to the checkout it
# copies fresh records into, so a course's labs read what its grids chose).
CHOICES_VARIABLE = "KBERT_CHOICES_DIR"
RATES_RECORDS = {"lab01": "adaptation_grid", "minilm_l6": "adaptation_grid_minilm"}
ADAPTERS_RECORD = "adaptation_grid_adapters"
MULTITASK_RECORD = "adaptation_grid_multitask"
DISTILLATION_RECORD = "distillation_grid"


@dataclasses.dataclass(frozen=True)
class Chosen:
    """A setting and where it came from.

    Attributes:
        value: dict. The setting (a recipe's options).
        source: str. The record and the row validation chose, or why the fallback is used.
        recorded: bool. Whether `value` came from a record.
    """

    value: dict
    source: str
    recorded: bool


def records_dir(given=None):
    """Where the records are read: `given`, else `$KBERT_CHOICES_DIR`, else `docs/results/`."""
    if given is not None:
        return Path(given)
    return Path(os.environ.get(CHOICES_VARIABLE) or RESULTS_DIR)


def read_record(name, directory=None):
    """Record `name` (`<directory>/<name>.json`, see `records_dir`) as a dict, or None when
    absent; the file is pinned as an input of this run.

    Raises:
        ValueError: the file exists but is no record (not JSON, or without `results`).
    """
    path = records_dir(directory) / f"{name}.json"
    if not path.is_file():
        return None
    note_input(path)
    try:
        record = json.loads(path.read_text())
    except json.JSONDecodeError as error:
        raise ValueError(f"{path} is not a run record (not JSON: {error})") from None
    if not isinstance(record, dict) or not isinstance(record.get("results"), dict):
        raise ValueError(f"{path} is not a run record: it has no 'results' dict")
    return record


def read_results(name, directory=None):
    """The `results` of record `name` (`read_record`), or None when absent."""
    record = read_record(name, directory)
    return None if record is None else record["results"]


def _made_at(name, record):
    """ "name.json (commit abc1234567)": which code made `record`, the one a choice was read from."""
    commit = record.get("commit") or "commit unknown"
    return f"{name}.json ({commit[:10]})"


def _fallback(value, name, start, why):
    return Chosen(dict(value), f"no choice for {start!r} in {name}.json ({why})", False)


def _chosen_row(outcome, family):
    label = outcome["chosen"][family]
    return next(row for row in outcome["rows"] if row["label"] == label)


def chosen_rates(start, fallback, results_dir=None):
    """Peak rates chosen on validation for `start` (the grid's rates study).

    Args:
        start: str. A start's name (`lab01`, `minilm_l6`).
        fallback: dict. Method → peak rate, used where the record has no choice; its
            "full" rate also stands for every method trained at full fine-tuning's rate.
        results_dir: path, default `records_dir()` (`$KBERT_CHOICES_DIR` or `docs/results/`).

    Returns:
        `Chosen`: `value` maps each method of `fallback` to its rate: "full" and
        "discriminative_lr" from the record, the other methods (which train every weight at
        one rate) at full's rate, as in the grid.
    """
    name = RATES_RECORDS.get(start)
    record = {} if name is None else read_record(name, results_dir) or {}
    results = record.get("results")
    outcome = ((results or {}).get("studies") or {}).get("rates", {}).get(start)
    if outcome is None:
        return _fallback(fallback, name or "adaptation_grid", start, "not recorded")
    full = _chosen_row(outcome, "full")
    discriminative = _chosen_row(outcome, "discriminative_lr")
    value = {method: full["learning_rate"] for method in fallback}
    value["discriminative_lr"] = discriminative["learning_rate"]
    source = f"{_made_at(name, record)}: '{full['label']}', '{discriminative['label']}'"
    return Chosen(value, source, True)


def chosen_factor(start, fallback, results_dir=None):
    """Discriminative rates' factor between layer groups validation chose for `start`.

    Args:
        fallback: float. Used where the record has no choice.

    Returns:
        `Chosen`: `value` has `factor`.
    """
    name = RATES_RECORDS.get(start)
    record = {} if name is None else read_record(name, results_dir) or {}
    results = record.get("results")
    outcome = ((results or {}).get("studies") or {}).get("rates", {}).get(start)
    if outcome is None:
        return _fallback({"factor": fallback}, name or "adaptation_grid", start, "not recorded")
    row = _chosen_row(outcome, "discriminative_lr")
    factor = row.get("options", {}).get("factor", row.get("factor"))
    if factor is None:
        return _fallback({"factor": fallback}, name, start, "its row has no factor")
    return Chosen({"factor": factor}, f"{_made_at(name, record)}: '{row['label']}'", True)


def chosen_adapters(start, fallback, results_dir=None):
    """The adapters' setting validation chose for `start`: the best on validation among each
    trainable set's own choice (`benchmarks/adaptation_studies.py`).

    Returns:
        `Chosen`: `value` has `trainable`, `bottleneck_dim` and `learning_rate`, the peak rate
        the chosen row trained at. The study's rates are multiples of the full fine-tuning
        rate it chose itself, which need not be the rates study's choice that a lab's other
        rows train at: the rate, not the multiple, is what validation saw.
    """
    record = read_record(ADAPTERS_RECORD, results_dir) or {}
    results = record.get("results")
    outcome = ((results or {}).get("studies") or {}).get("adapters", {}).get(start)
    if outcome is None:
        return _fallback(fallback, ADAPTERS_RECORD, start, "not recorded")
    families = [family for family in outcome["chosen"] if family.startswith("adapters")]
    if not families:
        return _fallback(fallback, ADAPTERS_RECORD, start, "no adapters row")
    best = max((_chosen_row(outcome, family) for family in families), key=lambda r: r["val_mean"])
    options = best["options"]  # the recipe's options; the row's rate is `learning_rate`
    value = {
        "trainable": options["trainable"],
        "bottleneck_dim": options["bottleneck_dim"],
        "learning_rate": best["learning_rate"],
    }
    return Chosen(value, f"{_made_at(ADAPTERS_RECORD, record)}: '{best['label']}'", True)


def chosen_feature_extraction(start, fallback, results_dir=None):
    """Feature extraction's peak rate validation chose for `start` in the adapters study
    (`benchmarks/adaptation_studies.py` reads the start by its best layers at each rate).

    Returns:
        `Chosen`: `value` has `learning_rate`, the rate the chosen row trained at.
    """
    record = read_record(ADAPTERS_RECORD, results_dir) or {}
    results = record.get("results")
    outcome = ((results or {}).get("studies") or {}).get("adapters", {}).get(start)
    if outcome is None:
        return _fallback(fallback, ADAPTERS_RECORD, start, "not recorded")
    if "feature_extraction" not in outcome.get("chosen", {}):
        return _fallback(fallback, ADAPTERS_RECORD, start, "no feature extraction row")
    row = _chosen_row(outcome, "feature_extraction")
    value = {"learning_rate": row["learning_rate"]}
    return Chosen(value, f"{_made_at(ADAPTERS_RECORD, record)}: '{row['label']}'", True)


def chosen_multitask(start, train_examples, fallback, results_dir=None):
    """The multitask LM-loss weights validation chose for `start`, at the study's labelled
    size nearest `train_examples` (its largest size when `train_examples` is None: all of them).

    Returns:
        `Chosen`: `value` has `language_model_weight` (and `language_model_final_weight` when
        the chosen row anneals it).
    """
    record = read_record(MULTITASK_RECORD, results_dir) or {}
    results = record.get("results")
    sizes = ((results or {}).get("studies") or {}).get("multitask", {}).get(start)
    if not sizes:
        return _fallback(fallback, MULTITASK_RECORD, start, "not recorded")
    if train_examples is None:
        size = max(sizes, key=int)
    else:
        size = min(sizes, key=lambda each: (abs(int(each) - train_examples), -int(each)))
    row = _chosen_row(sizes[size], "multitask")
    options = row.get("options") or {}
    value = {
        key: options[key]
        for key in ("language_model_weight", "language_model_final_weight")
        if key in options
    }
    if "language_model_weight" not in value:
        return _fallback(fallback, MULTITASK_RECORD, start, "its row has no LM-loss weight")
    return Chosen(
        value,
        f"{_made_at(MULTITASK_RECORD, record)} at {size} questions: '{row['label']}'",
        True,
    )


def chosen_distillation(start, fallback, results_dir=None):
    """The temperature and soft-target weight validation chose for `start`.

    Returns:
        `Chosen`: `value` has `temperature` and `soft_weight`.
    """
    record = read_record(DISTILLATION_RECORD, results_dir) or {}
    results = record.get("results")
    outcome = ((results or {}).get("starts") or {}).get(start)
    if outcome is None:
        return _fallback(fallback, DISTILLATION_RECORD, start, "not recorded")
    value = {key: outcome["chosen"][key] for key in ("temperature", "soft_weight")}
    return Chosen(
        value,
        f"{_made_at(DISTILLATION_RECORD, record)}: T={value['temperature']:g} "
        f"α={value['soft_weight']:g}",
        True,
    )


def chosen_variants(label, recipe, starts, choose, extra=None):
    """Comparison variants running each start's chosen setting: one row labelled `label` when
    every start chose the same on validation, else one row per distinct setting, labelled with
    the starts that chose it (`"adapters (chosen: minilm_l6)"`, or `"(fallback: …)"` for starts
    whose grid holds no choice, even when the fallback equals another start's choice); every
    row runs on every start (the harness runs each
    variant on each start), so a start's own row is the one its label names.

    Args:
        label: str. The row's label.
        recipe: callable. The recipe (`kbert.train.adaptation_recipes`).
        starts: list of `StartingPoint` (their `name`).
        choose: callable start name → `Chosen`.
        extra: dict, default None. Options added to every row.

    Returns:
        (variants, sources): the `(label, recipe, options)` triples, and start name → the
        `Chosen.source` for printing.
    """
    groups, sources = {}, {}
    for start in starts:
        chosen = choose(start.name)
        sources[start.name] = chosen.source
        key = json.dumps(chosen.value, sort_keys=True)
        kind = "chosen" if chosen.recorded else "fallback"
        groups.setdefault(key, (chosen.value, {}))[1].setdefault(kind, []).append(start.name)
    # The plain label only when every start chose the same setting on validation: a start
    # whose grid holds no choice runs the fallback, and its row must say so.
    unanimous = len(groups) == 1 and set(next(iter(groups.values()))[1]) == {"chosen"}
    variants = [
        (
            label if unanimous else f"{label} ({_named_by(names)})",
            recipe,
            {**value, **(extra or {})},
        )
        for value, names in groups.values()
    ]
    return variants, sources


def _named_by(names):
    """`"chosen: lab01"`, `"fallback: minilm_l6"` (a start whose grid holds no choice runs the
    fallback, and its row must not read as chosen), or both joined by "; "."""
    return "; ".join(f"{kind}: {'+'.join(starts)}" for kind, starts in sorted(names.items()))
