"""The records of `labs/lab12_pairs.py`: their section of docs/results.md and README headline."""

import json
from pathlib import Path

from benchmarks.reports._common import markdown_table, paired_by_seed
from kbert.metrics.seed_comparison import format_difference, verdict

# `lab12_pairs_rte_cls_pooling` (the same seeds read at [CLS]) renders as the lab's own, with a
# note comparing it seed by seed with the default run (`notes`).
STEMS = ("lab12_pairs",)
CLS_RECORD = "lab12_pairs_rte_cls_pooling"


def render(results):
    """Table of `labs/lab12_pairs.py`: test accuracy (and F1) per task beside the majority class."""
    rows, seeds, settings = [], 1, ""
    for name, row in results.items():
        seeds = row.get("seeds", 1)
        if row.get("settings"):
            settings = " (" + ", ".join(f"{k} {v}" for k, v in row["settings"].items()) + ")"
        spread = f" ± {row['test_accuracy_sd']:.3f}" if row.get("test_accuracy_sd") else ""
        f1 = "-" if row["test_f1"] is None else f"{row['test_f1']:.3f}"
        if row.get("test_f1_sd"):
            f1 += f" ± {row['test_f1_sd']:.3f}"
        if row.get("majority_f1") is not None:
            f1 += f" (always the positive class: {row['majority_f1']:.3f})"
        runs = row.get("runs") or [row]
        rows.append(
            [
                name,
                f"{row['train']:,}",
                f"{row['test']:,}",
                "; ".join(
                    " ".join(f"{v:.3f}" for v in run["val_accuracy_per_epoch"]) for run in runs
                ),
                f"{row['test_accuracy']:.3f}{spread}",
                f1,
                f"{row['majority_accuracy']:.3f}",
                _runs_at_majority(row, seeds),
            ]
        )
    return "\n".join(
        [
            f"MiniLM-L6 fine-tuned on each task's training pairs, {seeds} seed(s){settings}; the "
            "epoch with the best held-out accuracy (10% of the training file) is kept and scored "
            "on the GLUE dev set (mean ± sd over seeds):",
            "",
            markdown_table(
                [
                    "task",
                    "train",
                    "test",
                    "held-out acc by epoch (per seed)",
                    "test acc",
                    "test F1",
                    "majority",
                    "runs at the majority class",
                ],
                rows,
            ),
            "",
            majority_lines(results),
        ]
    )


def majority_lines(results):
    """The lab's claim read from its record: each task's test accuracy against always answering
    its majority class, beyond the seeds' spread or not (the majority is one number, so the
    spread of the per-seed differences is the spread of the accuracies)."""
    findings = []
    for name, row in results.items():
        gap, sd = row["test_accuracy"] - row["majority_accuracy"], row.get("test_accuracy_sd")
        if sd is None:
            reading = "one seed: no spread to read it against"
        elif verdict(gap, sd) == "better":
            reading = "above the majority class beyond the seeds' spread"
        else:
            reading = "not above the majority class beyond the seeds' spread"
        spread = "" if sd is None else f" ± {100 * sd:.2f}"
        findings.append(f"{name} {100 * gap:+.2f}{spread} points, {reading}")
    return (
        "What the lab claims (J&M §11.4.2, the tutorial's pair tasks): a fine-tuned encoder "
        "does well above the majority class on sentence pairs. What this record shows, test "
        f"accuracy minus the majority class's: {'; '.join(findings)}."
    )


def _runs_at_majority(row, seeds):
    """`kbert.metrics.majority_class`'s count; older records counted runs at or below it."""
    if "runs_at_majority" in row:
        return f"{row['runs_at_majority']} of {seeds}"
    failed = row.get("runs_at_or_below_majority")
    if failed is None:
        failed = int(row["test_accuracy"] <= row["majority_accuracy"])
    return f"{failed} of {seeds} (at or below)"


def headline(results):
    return "; ".join(
        f"{name.upper()} accuracy {row['test_accuracy']:.3f} (majority {row['majority_accuracy']:.3f})"
        + (f", F1 {row['test_f1']:.3f}" if row["test_f1"] is not None else "")
        + (
            f", {row['runs_at_majority']} of {row['seeds']} runs at the majority class"
            if "runs_at_majority" in row
            else ""
        )
        for name, row in results.items()
    )


def notes(name, results, results_dir):
    """Under the [CLS] run (`lab12_pairs_rte_cls_pooling`): its seed-paired difference to the
    default run (`lab12_pairs`, the checkpoint's own pooling) on RTE (`pooling_note`)."""
    if name != CLS_RECORD:
        return []
    path = Path(results_dir) / "lab12_pairs.json"
    if not path.is_file():
        return ["[CLS] against mean pooling on RTE: no lab12_pairs record to compare with yet."]
    return [pooling_note(results, json.loads(path.read_text(encoding="utf-8"))["results"])]


def pooling_note(cls_results, mean_results):
    """[CLS] − mean on RTE test accuracy, paired by seed, with each reading's runs at the
    majority class; or why the two records cannot be compared.

    Args:
        cls_results: dict, the `results` of the `--pooling cls` record.
        mean_results: dict, the `results` of the default `lab12_pairs` record.
    """
    head = f"[CLS] against mean pooling on RTE (`{CLS_RECORD}` − `lab12_pairs`)"
    cls_row, mean_row = cls_results.get("rte"), mean_results.get("rte")
    problem = _not_comparable(cls_row, mean_row)
    if problem:
        return f"{head}: not compared, {problem}."
    cls_runs = {run["seed"]: run["test_accuracy"] for run in cls_row["runs"]}
    mean_runs = {run["seed"]: run["test_accuracy"] for run in mean_row["runs"]}
    difference, seeds = paired_by_seed(cls_runs, mean_runs)
    if difference is None:
        return f"{head}: not compared, the two records share no seed."
    others = _other_differences(cls_row, mean_row)
    return (
        f"{head}: test accuracy, paired by seed (seeds {', '.join(map(str, seeds))}), "
        f"{format_difference(difference)} points. Runs at the majority class: [CLS] "
        f"{_runs_at_majority(cls_row, cls_row.get('seeds', 1))}, mean "
        f"{_runs_at_majority(mean_row, mean_row.get('seeds', 1))}."
        + (f" The two records also differ in {others}." if others else "")
    )


def _not_comparable(cls_row, mean_row):
    """Why the two RTE rows cannot be paired (None when they can)."""
    if cls_row is None or mean_row is None:
        return "one of the two records has no RTE row"
    for record, row, expected in (
        (CLS_RECORD, cls_row, "cls"),
        ("lab12_pairs", mean_row, "mean"),
    ):
        pooling = (row.get("settings") or {}).get("pooling")
        if pooling != expected:
            recorded = "does not record its pooling" if pooling is None else f"reads {pooling}"
            return f"`{record}` {recorded} (expected {expected})"
        if not all("seed" in run for run in row.get("runs") or [{}]):
            return f"`{record}` does not record its runs by seed"
    return None


def _other_differences(cls_row, mean_row):
    """What else than the pooling the two RTE rows differ in: settings and split sizes."""
    cls_settings, mean_settings = cls_row["settings"], mean_row["settings"]
    keys = [key for key in cls_settings if key != "pooling" and key in mean_settings]
    differ = [
        f"{key} ({cls_settings[key]} vs {mean_settings[key]})"
        for key in keys
        if cls_settings[key] != mean_settings[key]
    ]
    differ += [
        f"{split} pairs ({cls_row[split]:,} vs {mean_row[split]:,})"
        for split in ("train", "test")
        if cls_row.get(split) != mean_row.get(split)
    ]
    return ", ".join(differ)
