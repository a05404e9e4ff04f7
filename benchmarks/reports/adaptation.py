"""The adaptation comparisons (`benchmarks/adaptation.py`, labs 3–6, 16 and 17): their section
of docs/results.md, README headline, and the notes under a row the grid explains."""

import json
import math
from pathlib import Path

from benchmarks.reports._claims import claim_paragraph
from benchmarks.reports._common import NEAR_MAJORITY, UNEXPLAINED, markdown_table
from kbert.metrics.seed_comparison import format_difference

STEMS = (
    "adaptation",
    "lab03_adapters",
    "lab04_gradual_unfreezing",
    "lab05_discriminative_lr",
    "lab06_multitask",
    "lab16_peft",
    "lab17_distillation",
)


def _columns(results):
    """Which optional columns the record supports: validation, the paired difference (and the
    row it is paired with), each row's peak rate, its epochs (where a row trained other than
    the record's), and its runs at the majority class."""
    rows = results["rows"]
    return {
        "validation": any(row.get("val_mean") is not None for row in rows),
        # Records made since the paired difference was added carry it (a "difference" per
        # row), and since rows were paired with baselines of their own, the label of each.
        "paired": any("difference" in row for row in rows),
        "named": any("baseline" in row for row in rows),
        # Each row's peak rate (its top group's, for discriminative rates).
        "rated": any(row.get("learning_rate") is not None for row in rows),
        # ULMFiT's regime and the tutorial's multitask train longer than the record's epochs.
        "epochs": any(row.get("epochs") not in (None, results["epochs"]) for row in rows),
        "majority": any(row.get("runs_at_majority") is not None for row in rows),
    }


def _cells(row, columns):
    spread = "" if row["acc_sd"] is None else f" ± {row['acc_sd']:.3f}"
    landed = row.get("runs_at_majority")
    return [
        row["start"],
        row["label"],
        *([_rate(row.get("learning_rate"))] if columns["rated"] else []),
        *([str(row.get("epochs") or "–")] if columns["epochs"] else []),
        f"{row['trainable_params']:,} ({row['trainable_pct']:.2f}%)",
        *([f"{row['val_mean']:.3f}"] if columns["validation"] else []),
        f"{row['acc_mean']:.3f}{spread} (n={row['seeds']})",
        *([_difference_cell(row, columns["named"])] if columns["paired"] else []),
        *(
            [("–" if landed is None else f"{landed} of {row['seeds']}")]
            if columns["majority"]
            else []
        ),
        f"{row['train_s']:.0f}",
    ]


def _header(columns):
    paired = f"Δ to {'its baseline' if columns['named'] else 'full'}, paired by seed (points)"
    return (
        ["start", "method"]
        + (["peak rate"] if columns["rated"] else [])
        + (["epochs"] if columns["epochs"] else [])
        + ["trainable"]
        + (["validation"] if columns["validation"] else [])
        + ["test (mean ± sd)"]
        + ([paired] if columns["paired"] else [])
        + (["runs at the majority class"] if columns["majority"] else [])
        + ["train s per run"]
    )


def render(results):
    """Table of an adaptation comparison (labs 3–6, 15, 16, `benchmarks/adaptation.py`)."""
    columns = _columns(results)
    starts = ", ".join(f"{name}: `{path}`" for name, path in results["starts"].items())
    return "\n".join(
        [
            f"TREC-6, {results['train_examples']:,} training questions, {results['epochs']} "
            f"epochs, batch {results['batch_size']}, length {results['sequence_length']}, "
            f"{results['seeds']} seed(s); validation = {results['validation_examples']} "
            f"held-out training questions, test = TREC_10 ({results['test_examples']}). "
            f"Starts: {starts}."
            + (
                " A row's epochs are shown where it trained other than these."
                if columns["epochs"]
                else ""
            ),
            "",
            markdown_table(_header(columns), [_cells(row, columns) for row in results["rows"]]),
        ]
    )


def _rate(rate):
    return "–" if rate is None else f"{rate:g}"


def _difference_cell(row, named):
    """A row's paired difference, and with `named` the row it is paired with."""
    text = format_difference(row.get("difference"))
    if named and row.get("baseline"):
        text += f" vs {row['baseline']}"
    return text


def headline(results):
    parts = []
    for start in dict.fromkeys(row["start"] for row in results["rows"]):
        rows = [row for row in results["rows"] if row["start"] == start]
        # Chosen on validation; a record without validation scores gets no "best".
        scored = [row for row in rows if row.get("val_mean") is not None]
        full = next((row for row in rows if row["label"] == "full"), None)
        if not scored:
            if full is not None:
                parts.append(f"{start}: full {full['acc_mean']:.3f}")
            continue
        best = max(scored, key=lambda row: row["val_mean"])
        text = f"{start}: {best['label']} {best['acc_mean']:.3f}"
        if full is not None and full is not best:
            text += f" (full {full['acc_mean']:.3f})"
        parts.append(text)
    return "TREC-6 test accuracy of the row chosen on validation, " + "; ".join(parts)


def _grid_results(results_dir):
    """The `results` of every `adaptation_grid*.json` record in `results_dir`, by file name."""
    return [
        json.loads(path.read_text(encoding="utf-8"))["results"]
        for path in sorted(Path(results_dir).glob("adaptation_grid*.json"))
    ]


# Labs whose `full` row trains at another rate than full fine-tuning's own choice by design:
# lab05 pairs it with the discriminative rows at their top rate (equal top rates).
EQUAL_TOP_RATE = ("lab05_discriminative_lr",)


def full_rate_notes(results, results_dir, equal_top_rate=False):
    """Notes under a comparison whose `full` row used another rate than `adaptation_grid`
    chose on validation for that start: the grid's measured rates, so a reader sees why that
    row (and a teacher or ensemble built from it) may sit low; with `equal_top_rate`, that the
    row is the baseline at the discriminative rows' top rate, not full fine-tuning's best."""
    grids = {}  # start → (that start's rates study, its grid's settings)
    for grid in _grid_results(results_dir):
        for start, study in grid.get("studies", {}).get("rates", {}).items():
            grids[start] = (study, grid["settings"])
    notes = []
    for row in results["rows"]:
        if row["label"] != "full" or row["start"] not in grids:
            continue
        study, settings = grids[row["start"]]
        measured = {
            entry["learning_rate"]: entry for entry in study["rows"] if entry["method"] == "full"
        }
        if not measured:
            continue
        # The grid's own rule (best validation mean), so the note names the rate it chose.
        best = max(measured.values(), key=lambda entry: entry["val_mean"])
        if row.get("learning_rate") in (None, best["learning_rate"]):
            continue
        rates = ", ".join(
            f"{rate:g}: {entry['acc_mean']:.3f} ± {entry['acc_sd']:.3f}"
            for rate, entry in sorted(measured.items())
        )
        checkpoint = settings.get(f"{row['start']}_model", row["start"])
        top_rates = {
            other.get("learning_rate")
            for other in results["rows"]
            if other["start"] == row["start"] and other["label"].startswith("discriminative_lr")
        }
        if equal_top_rate and row["learning_rate"] in top_rates:
            notes.append(
                f"Note ({row['start']}): its `full` row trains at {row['learning_rate']:g}, the "
                "discriminative rows' top rate, so every difference is read at equal top rates; "
                f"full fine-tuning's own rate, chosen on validation by `adaptation_grid`, is "
                f"{best['learning_rate']:g} (test accuracy by rate: {rates})."
            )
            continue
        notes.append(
            f"Note ({row['start']}): its `full` row is fine-tuned at {row['learning_rate']:g}. "
            f"`adaptation_grid` measured full fine-tuning of "
            f"`{checkpoint}` on the same task ({settings['train_examples']:,} questions, "
            f"{settings['epochs']} epochs, {settings['seeds']} seeds; test accuracy by rate: "
            f"{rates}) and chose {best['learning_rate']:g} on validation, so this row (and "
            f"what is built from it: a teacher, an ensemble) is under-tuned, not a ceiling of "
            f"the method."
        )
    return notes


def _trec_grids(results, results_dir):
    """The `adaptation_grid*` results that speak for comparison `results`: the grid is TREC-6
    with its own test questions, so its majority class and rows say nothing of a comparison on
    another task or test set."""
    return [
        grid
        for grid in _grid_results(results_dir)
        if results.get("task") == "trec"
        and grid["settings"]["test_examples"] == results.get("test_examples")
    ]


def grid_majority(results, results_dir):
    """The test set's majority-class accuracy for comparison `results`: the lab records carry
    none, so it is the one its `adaptation_grid` records give (same task and test set), or None.
    """
    grids = _trec_grids(results, results_dir)
    return grids[0]["majority_class_acc"]["test"] if grids else None


def _grid_rows(grids):
    """Every grid row by (start, method), and each (start, method)'s budget in words."""
    measured = {}  # (start, method) → grid rows of that method on that start
    budgets = {}  # (start, method) → the grid's training budget, in words
    for grid in grids:
        settings = grid["settings"]
        for by_start in grid["studies"].values():
            for start, outcome in by_start.items():
                for row in outcome.get("rows", []):
                    measured.setdefault((start, row["method"]), []).append(row)
                    budgets[start, row["method"]] = (
                        f"{settings['train_examples']:,} questions, {settings['epochs']} epochs"
                    )
    return measured, budgets


def _chosen(grid_rows):
    """The grid row chosen on validation (the grid's own rule: best validation mean)."""
    return max(grid_rows, key=lambda entry: entry["val_mean"])


def _score(row):
    spread = "" if row.get("acc_sd") is None else f" ± {row['acc_sd']:.3f}"
    return f"{row['acc_mean']:.3f}{spread}"


def _rates(row, best):
    """`row`'s rate against `best`'s (the grid's chosen row), in words, and whether they
    differ (False where either is not recorded)."""
    rate, chosen = row.get("learning_rate"), best.get("learning_rate")
    if rate is None or chosen is None:
        return "the two rates cannot be compared (one is not recorded)", False
    if math.isclose(rate, chosen, rel_tol=1e-9):
        return f"this row trains at the chosen setting's rate ({rate:g})", False
    return f"this row trains at {rate:g}, the chosen setting at {chosen:g}", True


def _against_the_chosen(row, best, majority):
    """How `row` stands to the grid's row `best` (chosen on validation) where some setting of
    the grid clears the majority class: the two side by side, and the rate as a possible cause
    only where the rates differ and the chosen setting itself clears the majority class."""
    rates, differ = _rates(row, best)
    text = (
        f": some setting of the grid clears the majority class by {NEAR_MAJORITY:g}; the chosen "
        f"setting scores {_score(best)} on test, this row {_score(row)}; {rates}"
    )
    if differ and best["acc_mean"] > majority + NEAR_MAJORITY:
        return text + ", so its rate may hold it down (rerun it at the chosen setting)."
    return text + "."


def _others(measured, row):
    """The same method on the other starts, each at the setting chosen on validation there."""
    return [
        f"{start} {_chosen(entries)['label']}: {_chosen(entries)['acc_mean']:.3f}"
        for (start, method), entries in sorted(measured.items())
        if method == row["method"] and start != row["start"]
    ]


def _near_majority_note(row, majority, measured, budgets):
    """The note under one comparison row near the majority class."""
    head = (
        f"Note ({row['start']} {row['label']}, test {row['acc_mean']:.3f} against the "
        f"majority class {majority:.3f})"
    )
    grid_rows = measured.get((row["start"], row["method"]))
    if not grid_rows:
        return f"{head}: {UNEXPLAINED} (no `adaptation_grid` study of this method)."
    best = _chosen(grid_rows)
    settings = "; ".join(
        f"{entry['label']}: {entry['acc_mean']:.3f} ± {entry['acc_sd']:.3f}" for entry in grid_rows
    )
    text = (
        f"{head}: `adaptation_grid` measured this method on this start at every setting of "
        f"its grid ({budgets[row['start'], row['method']]}; test mean ± sd over "
        f"{best['seeds']} seeds: {settings}); the setting "
        f"chosen on validation, {best['label']}, scores {best['acc_mean']:.3f}"
    )
    if max(entry["acc_mean"] for entry in grid_rows) <= majority + NEAR_MAJORITY:
        text += (
            f", and no setting of the grid clears the majority class by "
            f"{NEAR_MAJORITY:g}: with {row['trainable_pct']:.2f}% of the weights training, "
            "the method does not adapt this start at this budget."
        )
    else:
        text += _against_the_chosen(row, best, majority)
    others = _others(measured, row)
    if others:
        text += (
            " The same grid on the other start(s), at the setting chosen on validation there "
            f"(test): {', '.join(others)}."
        )
    return text


def near_majority_notes(results, results_dir):
    """Notes under a comparison for each row near TREC-6's majority class: every setting
    `adaptation_grid` measured of that method on that start (so a reader sees whether a rate
    was missed or the method cannot do better here), and the same method on the other starts
    at the setting chosen there on validation.
    """
    grids = _trec_grids(results, results_dir)
    if not grids:
        return []
    majority = grids[0]["majority_class_acc"]["test"]
    measured, budgets = _grid_rows(grids)
    return [
        _near_majority_note(row, majority, measured, budgets)
        for row in results["rows"]
        if row["acc_mean"] <= majority + NEAR_MAJORITY
    ]


def notes(name, results, results_dir):
    """Notes under a comparison's own record (not another run of it, such as
    `lab17_distillation_lab01_6_epochs`): its source's claim against its paired differences
    (`_claims`, read against the test set's majority class where `adaptation_grid` gives it),
    its `full` row's rate and its rows near the majority class, against what `adaptation_grid`
    measured."""
    if name not in STEMS:
        return []
    return (
        claim_paragraph(name, results, majority=grid_majority(results, results_dir))
        + full_rate_notes(results, results_dir, equal_top_rate=name in EQUAL_TOP_RATE)
        + near_majority_notes(results, results_dir)
    )
