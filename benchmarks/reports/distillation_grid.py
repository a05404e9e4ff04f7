"""The records of `benchmarks/distillation_grid.py`: their section of docs/results.md and README
headline."""

from benchmarks.reports._common import markdown_table
from kbert.metrics.seed_comparison import format_difference

STEMS = ("distillation_grid",)

_ROLES = {
    "teacher": "teacher (full fine-tuning)",
    "baseline": "student, labels only (α 0)",
    "grid": "student distilled",
    "ensemble": "ensemble of the seeds' teachers",
    "ensemble_student": "student distilled from the ensemble",
}


def _number(value, digits=3):
    return "–" if value is None else f"{value:.{digits}f}"


def _table_rows(rows):
    lines = []
    for row in rows:
        marks = row.get("marks", [])
        bold = "**" if "chosen" in marks else ""
        spread = "" if row["acc_sd"] is None else f" ± {row['acc_sd']:.3f}"
        setting = (
            "–"
            if row["temperature"] is None
            else f"T {row['temperature']:g}, α {row['soft_weight']:g}"
        )
        note = f" ({', '.join(marks)})" if marks else ""
        lines.append(
            [
                f"{_ROLES[row['role']]}{note}",
                setting,
                f"{bold}{_number(row['val_mean'])}{bold}",
                f"{bold}{_number(row['acc_mean'])}{spread} (n={row['seeds']}){bold}",
                format_difference(row.get("difference")),
                _number(row.get("teacher_acc_mean")),
                f"{row['train_s']:.0f}",
            ]
        )
    return lines


def render(results):
    """One table per start: every row's setting, validation and test accuracy, its seed-paired
    difference to the labels-only student, and its teacher's test accuracy; the setting chosen
    on validation in bold, the source's marked."""
    settings, source = results["settings"], results["grid"]["source"]
    header = [
        "row",
        "setting",
        "validation",
        "test (mean ± sd)",
        "Δ to labels only, paired (points)",
        "teacher test",
        "train s",
    ]
    parts = [
        f"TREC-6, {settings['train_examples']:,} training questions, {settings['epochs']} "
        f"epochs, batch {settings['batch_size']}, {settings['seeds']} seeds. Students have half "
        "their teacher's blocks (DistilBERT's initialisation) and learn "
        "α · T² · KL(teacher ‖ student at T) + (1 − α) · cross-entropy; T × α over "
        f"{results['grid']['temperatures']} × {results['grid']['soft_weights']}, chosen (bold) "
        f"on the {settings['validation_examples']} held-out validation questions; the source's "
        f"setting is T {source['temperature']:g}, α {source['soft_weight']:g} (Hinton et al. "
        "2015; DistilBERT). Δ: each row's test accuracy minus the labels-only student's, seed "
        "by seed ('no difference' when the mean is inside the spread). The ensemble's students "
        "start from their own seed's teacher and learn the mean of the teachers' softened "
        "distributions; their teacher column is the ensemble's.",
    ]
    for start, outcome in results["starts"].items():
        parts += [
            "",
            f"**{start}**",
            "",
            markdown_table(header, _table_rows(outcome["rows"])),
        ]
    return "\n".join(parts)


def headline(results):
    """Per start: the chosen setting's student against the labels-only one and the source's."""
    parts = []
    for start, numbers in results["headline"].items():
        chosen = numbers["chosen"]
        parts.append(
            f"{start} T {chosen['temperature']:g} α {chosen['soft_weight']:g}: "
            f"{numbers['chosen_student']:.3f} vs labels only {numbers['labels_only']:.3f}, source's "
            f"{numbers['source']:.3f}, from the ensemble {numbers['from_ensemble_chosen']:.3f}"
        )
    return "TREC-6 test, distilled students (T, α chosen on validation): " + "; ".join(parts)
