"""The records of `labs/lab07_document_classification.py`: their section of docs/results.md,
README headline, and the note under a row near the majority class."""

import json
from pathlib import Path

from benchmarks.reports._common import NEAR_MAJORITY, UNEXPLAINED, markdown_table
from kbert.metrics.seed_comparison import format_difference

STEMS = ("lab07_document_classification",)
# The lab's run from lab01's checkpoint when MiniLM-L6 was the default start: in the README
# summary beside the lab's own until the course's next recording replaces it (lab01's model is
# the default start now; `benchmarks.course.RETIRED`).
SUMMARY_PARTS = ("lab07_document_classification_lab01",)


NAMES = {
    "lm_fine_tuned": "LM fine-tuned, then classifier",
    "ulmfit": "LM fine-tuned, then classifier",  # the start's name before schedules
    "plain": "classifier only",
}
SCHEDULES = {
    "ulmfit": "ULMFiT's",
    "head_then_all": "head, then all",
}
SOURCE_SCHEDULE = "ulmfit"
HEADER = ["labelled", "schedule", "start", "validation", "test (mean ± sd)", "train s per run"]


def _has_schedules(results):
    """Whether the record ran stage 2 on named schedules (records made since the lab ran the
    paper's beside BERT practice's)."""
    return "schedules" in results


def _by_schedule(key, results):
    """`results[key]` by schedule: `{schedule: {size: …}}`. A record made before the lab ran
    two schedules trained on the head-then-all one only."""
    value = results.get(key) or {}
    return value if _has_schedules(results) else {"head_then_all": value} if value else {}


def _rows(results):
    """`(schedule, size, start, row)` for every row of the record, schedules in its order."""
    return [
        (schedule, size, name, row)
        for schedule, by_size in _by_schedule("results", results).items()
        for size, by_start in by_size.items()
        for name, row in by_start.items()
    ]


def _counts_majority(results):
    """Whether the record counts its runs at the majority class (records made since it does)."""
    return all("runs_at_majority" in row for *_, row in _rows(results))


def _table_row(schedule, size, name, row, counted):
    spread = "" if row["test_sd"] is None else f" ± {row['test_sd']:.3f}"
    cells = [
        f"{int(size):,}",
        SCHEDULES.get(schedule, schedule),
        NAMES.get(name, name),
        f"{row['val_mean']:.3f}",
        f"{row['test_mean']:.3f}{spread} (n={row['seeds']})",
        f"{row['train_s']:.0f}",
    ]
    return cells + [f"{row['runs_at_majority']} of {row['seeds']}"] if counted else cells


def _gains(by_size, digits=2):
    return ", ".join(
        f"{int(size):,}: {format_difference(difference, digits=digits)}"
        for size, difference in by_size.items()
    )


def _schedule_gains(differences, form, digits):
    """Each schedule's gains joined by "; ", `form` filled with the schedule's name, " (the
    paper's)" for ULMFiT's, and its gains by size."""
    return "; ".join(
        form.format(
            SCHEDULES.get(schedule, schedule),
            " (the paper's)" if schedule == SOURCE_SCHEDULE else "",
            _gains(by_size, digits=digits),
        )
        for schedule, by_size in differences.items()
    )


def _mean_gains(results):
    """ "100: +2.1, 500: +3.4": stage 1's gain as the difference of the means (records made
    before the seed-paired difference)."""
    return ", ".join(
        f"{int(size):,}: {gain:+.1f}"
        for by_size in _by_schedule("gain_points", results).values()
        for size, gain in by_size.items()
    )


def _preferred_clause(results):
    """ "validation prefers ULMFiT's at 100, head, then all at 500" (records with schedules)."""
    preferred = results.get("preferred_schedule") or {}
    return ", ".join(
        f"{SCHEDULES.get(schedule, schedule)} at {int(size):,}"
        for size, schedule in preferred.items()
    )


def _gains_line(results):
    """What ULMFiT claims, and stage 1's gain on each schedule the record ran."""
    differences = _by_schedule("difference", results)
    if not differences:
        gains = _mean_gains(results)
        return f"Stage 1's gain in test points, by labelled documents: {gains or 'not measured'}."
    claim = (
        "What ULMFiT claims: fine-tuning the LM on the task's own texts first (stage 1) helps "
        "the classifier, most with few labels. What this record shows, stage 1's gain in test "
        "points, seed by seed, by labelled documents"
    )
    if not _has_schedules(results):
        return f"{claim}: {_gains(differences['head_then_all'])}."
    parts = _schedule_gains(differences, "on {} schedule{}, {}", digits=2)
    preferred = _preferred_clause(results)
    return f"{claim}: {parts}." + (
        f" Validation (both starts' mean) prefers {preferred}." if preferred else ""
    )


def render(results):
    """Table of `labs/lab07_document_classification.py`: ULMFiT stage 1 or not, by schedule and
    labels, with the runs at the majority class where the record counts them."""
    settings, language_model = results["settings"], results["language_model"]
    counted = _counts_majority(results)
    rows = [_table_row(*row, counted) for row in _rows(results)]
    majority = results.get("majority_test_accuracy")
    return "\n".join(
        [
            f"{results['model']} on {results['task']}, {settings['sequence_length']} tokens; stage 1 "
            f"on {language_model['lm_examples']:,} unlabelled training texts, held-out LM loss "
            f"{language_model['lm_loss_before']:.3f} → {language_model['lm_loss_after']:.3f}; "
            f"scored on {settings['validation_examples']:,} validation and "
            f"{settings['test_examples']:,} test documents"
            + ("." if majority is None else f" (majority class {majority:.3f})."),
            "",
            markdown_table(HEADER + ["at majority"] if counted else HEADER, rows),
            "",
            _gains_line(results),
        ]
    )


def headline(results):
    """Stage 1's gain by labelled size: seed-paired with its verdict where the record has it
    (records made before it: the difference of the means), on the paper's schedule first, and
    any runs at the majority class."""
    start = Path(results["model"]).name
    head = f"ULMFiT stage 1 on {results['task']} from {start}, test points gained by labels"
    differences = _by_schedule("difference", results)
    if not differences:
        gains = _mean_gains(results)
        return f"{head}: {gains or 'not measured'}" + _majority_clause(results)
    if not _has_schedules(results):
        gains = _gains(differences["head_then_all"], digits=1)
        return f"{head}, paired by seed: {gains}" + _majority_clause(results)
    parts = _schedule_gains(differences, "{} schedule{} {}", digits=1)
    preferred = _preferred_clause(results)
    return (
        f"{head}, paired by seed: {parts}"
        + (f"; validation prefers {preferred}" if preferred else "")
        + _majority_clause(results)
    )


def _row_label(results, schedule, size, name, unit=" labelled,"):
    """ "100 labelled, plain" (with " on the ulmfit schedule" where the record names schedules)."""
    where = f" on the {schedule} schedule" if _has_schedules(results) else ""
    return f"{int(size):,}{unit} {name}{where}"


def _majority_clause(results):
    """The rows with any run at the majority class, as "; runs at the majority class: 100
    plain 2 of 3"; empty when none has one or the record does not count them."""
    if not _counts_majority(results):
        return ""
    counts = [
        f"{_row_label(results, schedule, size, name, unit='')} "
        f"{row['runs_at_majority']} of {row['seeds']}"
        for schedule, size, name, row in _rows(results)
        if row["runs_at_majority"]
    ]
    return f"; runs at the majority class: {', '.join(counts)}" if counts else ""


def document_classification_notes(name, results_dir):
    """A note under a lab07 record with a row near the majority class: what the other runs of
    the lab (other starts or stage-1 sizes, same labelled subsets and seeds) measured."""
    records = {
        path.stem: json.loads(path.read_text(encoding="utf-8"))["results"]
        for path in sorted(Path(results_dir).glob("lab07_document_classification*.json"))
    }
    results = records[name]
    if results["task"] != "imdb":
        return []
    # The test subset's own majority when the record holds it; else IMDb's balanced split
    # (12,500 positive and 12,500 negative reviews).
    majority = results.get("majority_test_accuracy", 0.5)
    low = [
        f"{_row_label(results, schedule, size, name)} {row['test_mean']:.3f}"
        for schedule, size, name, row in _rows(results)
        if row["test_mean"] <= majority + NEAR_MAJORITY
    ]
    if not low:
        return []
    head = f"Note ({'; '.join(low)}; majority class of the test documents {majority})"
    others = []
    for other, each in records.items():
        if other == name or each["task"] != results["task"]:
            continue
        scores = "; ".join(
            f"{_row_label(each, schedule, size, name)} {row['test_mean']:.3f}"
            for schedule, size, name, row in _rows(each)
        )
        others.append(
            f"`{other}` ({each['model']}, {each['settings']['sequence_length']} tokens, stage 1 "
            f"on {each['language_model']['lm_examples']:,} texts): {scores}"
        )
    if not others:
        return [f"{head}: {UNEXPLAINED} (no other run of this lab on {results['task']})."]
    return [
        f"{head}: the other runs of this lab, on the same labelled subsets and seeds: "
        + "; ".join(others)
        + ". Where another start clears the majority class by far on the same labelled "
        "documents, the start (its pretraining, size, length and rates), not the labels, holds "
        "these rows down."
    ]


def notes(name, results, results_dir):
    """The note under any run of lab07 (see `document_classification_notes`)."""
    del results  # the note compares the run's record with the lab's other records
    return document_classification_notes(name, results_dir)
