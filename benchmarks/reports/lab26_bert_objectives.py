"""The records of `labs/lab26_bert_objectives.py`: their section and README headline."""

from benchmarks.reports._common import markdown_table
from kbert.metrics.seed_comparison import format_difference

STEMS = ("lab26_bert_objectives",)

# What the lab's source claims: stated under the record's title, above what it found.
CLAIM = "BERT (Devlin et al. 2019): NSP helps pair tasks; RoBERTa (Liu et al. 2019): it does not; ALBERT (Lan et al. 2020): SOP is harder and more useful than NSP; SpanBERT (Joshi et al. 2020): span masking with the span boundary objective helps span tasks"

OBJECTIVES = {
    "masked": "MLM alone (RoBERTa)",
    "masked+nsp": "MLM + NSP (BERT)",
    "masked+sop": "MLM + SOP (ALBERT)",
    "span+sbo": "span masking, MLM + SBO (SpanBERT)",
}
SECOND_HEADS = {"masked+nsp": "nsp", "masked+sop": "sop", "span+sbo": "sbo"}


def _accuracy(row):
    spread = "" if row["sd"] is None else f" ± {row['sd']:.3f}"
    return f"{row['mean']:.3f}{spread} (n={len(row['runs'])})"


def render(results):
    """The intrinsic table (common held-out MLM set, each second head), then test accuracy per
    task and objective with the seed-paired difference to MLM alone."""
    settings = results.get("settings", {})
    described = ", ".join(f"{key} {value}" for key, value in settings.items())
    intrinsic = []
    for objective, row in results["pretraining"]["intrinsic"].items():
        head = SECOND_HEADS.get(objective)
        intrinsic.append(
            [
                OBJECTIVES.get(objective, objective),
                f"{row['mlm_loss']:.3f}",
                f"{row['mlm_accuracy']:.3f}",
                f"{head} {row[f'{head}_accuracy']:.3f}" if head else "–",
            ]
        )
    rows = []
    for task, study in results["tasks"].items():
        for objective, row in study["objectives"].items():
            rows.append(
                [
                    task,
                    OBJECTIVES.get(objective, objective),
                    _accuracy(row),
                    format_difference(row.get("vs_masked")),
                    f"{study['majority_accuracy']:.3f}",
                ]
            )
    return "\n".join(
        [
            f"Each objective pretrained from scratch at equal steps ({described}). Held-out "
            "measures of each encoder: its MLM head on one common masked set of other authors' "
            "books, and its second head on its own held-out batches:",
            "",
            markdown_table(
                ["objective", "held-out MLM loss", "MLM accuracy", "second head's accuracy"],
                intrinsic,
            ),
            "",
            "Fine-tuned on each task: test accuracy, mean ± sd over seeds; differences in points, "
            "paired by seed ('no difference' when the mean is inside the sd):",
            "",
            markdown_table(
                ["task", "objective", "test accuracy", "vs MLM alone", "majority"], rows
            ),
        ]
    )


def headline(results):
    parts = []
    for task, study in results["tasks"].items():
        for objective, row in study["objectives"].items():
            if "vs_masked" in row:
                parts.append(
                    f"{task.upper()} {objective} vs MLM alone "
                    f"{format_difference(row['vs_masked'], digits=1)} points"
                )
    return "; ".join(parts)
