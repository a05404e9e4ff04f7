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


NAMES = {"ulmfit": "LM fine-tuned, then classifier", "plain": "classifier only"}
HEADER = ["labelled", "start", "validation", "test (mean ± sd)", "train s per run"]


def _counts_majority(results):
    """Whether the record counts its runs at the majority class (records made since it does)."""
    return all(
        "runs_at_majority" in row
        for by_variant in results["results"].values()
        for row in by_variant.values()
    )


def _table_row(size, name, row, counted):
    spread = "" if row["test_sd"] is None else f" ± {row['test_sd']:.3f}"
    cells = [
        f"{int(size):,}",
        NAMES.get(name, name),
        f"{row['val_mean']:.3f}",
        f"{row['test_mean']:.3f}{spread} (n={row['seeds']})",
        f"{row['train_s']:.0f}",
    ]
    return cells + [f"{row['runs_at_majority']} of {row['seeds']}"] if counted else cells


def render(results):
    """Table of `labs/lab07_document_classification.py`: ULMFiT stage 1 or not, by labels, with
    the runs at the majority class where the record counts them."""
    settings, language_model = results["settings"], results["language_model"]
    counted = _counts_majority(results)
    rows = [
        _table_row(size, name, row, counted)
        for size, by_variant in results["results"].items()
        for name, row in by_variant.items()
    ]
    # Records made since the seed-paired difference was added carry it; older ones, the
    # difference of the means only.
    if results.get("difference"):
        gains = ", ".join(
            f"{int(size):,}: {format_difference(difference)}"
            for size, difference in results["difference"].items()
        )
        gains_line = (
            "What ULMFiT claims: fine-tuning the LM on the task's own texts first (stage 1) "
            "helps the classifier, most with few labels. What this record shows, stage 1's "
            f"gain in test points, seed by seed, by labelled documents: {gains}."
        )
    else:
        gains = ", ".join(
            f"{int(size):,}: {gain:+.1f}" for size, gain in results["gain_points"].items()
        )
        gains_line = (
            f"Stage 1's gain in test points, by labelled documents: {gains or 'not measured'}."
        )
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
            gains_line,
        ]
    )


def headline(results):
    """Stage 1's gain by labelled size: seed-paired with its verdict where the record has it
    (records made before it: the difference of the means), and any runs at the majority class."""
    start = Path(results["model"]).name
    head = f"ULMFiT stage 1 on {results['task']} from {start}, test points gained by labels"
    if results.get("difference"):
        gains = ", ".join(
            f"{int(size):,}: {format_difference(difference, digits=1)}"
            for size, difference in results["difference"].items()
        )
        return f"{head}, paired by seed: {gains}" + _majority_clause(results)
    gains = ", ".join(
        f"{int(size):,}: {gain:+.1f}" for size, gain in results["gain_points"].items()
    )
    return f"{head}: {gains or 'not measured'}" + _majority_clause(results)


def _majority_clause(results):
    """The rows with any run at the majority class, as "; runs at the majority class: 100
    plain 2 of 3"; empty when none has one or the record does not count them."""
    if not _counts_majority(results):
        return ""
    counts = [
        f"{int(size):,} {name} {row['runs_at_majority']} of {row['seeds']}"
        for size, by_variant in results["results"].items()
        for name, row in by_variant.items()
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
        f"{int(size):,} labelled, {variant} {row['test_mean']:.3f}"
        for size, by_variant in results["results"].items()
        for variant, row in by_variant.items()
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
            f"{int(size):,} labelled: "
            + ", ".join(f"{variant} {row['test_mean']:.3f}" for variant, row in by_variant.items())
            for size, by_variant in each["results"].items()
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
