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
# Each reading's caption, and its short name in the headline.
POOLINGS = {
    "cls": "Read at [CLS], as the sources fine-tune (only NSP and SOP train the [CLS] output "
    "while pretraining)",
    "mean": "Read by mean pooling over the tokens (every objective trains them alike)",
    "pooler": "Read by BERT's pooler on [CLS] (trained only by NSP and SOP)",
}
SHORT = {"cls": "[CLS]", "mean": "mean", "pooler": "pooler"}


def _accuracy(row):
    spread = "" if row["sd"] is None else f" ± {row['sd']:.3f}"
    return f"{row['mean']:.3f}{spread} (n={len(row['runs'])})"


def _setting(value):
    """A setting as the lab's flag takes it: a list comma-separated."""
    return ",".join(str(item) for item in value) if isinstance(value, list) else value


def _poolings(results):
    """The readings the record holds, in the order the lab ran them."""
    return list(dict.fromkeys(p for study in results["tasks"].values() for p in study["poolings"]))


def _intrinsic_rows(results):
    rows = []
    for objective, row in results["pretraining"]["intrinsic"].items():
        head = SECOND_HEADS.get(objective)
        rows.append(
            [
                OBJECTIVES.get(objective, objective),
                f"{row['mlm_loss']:.3f}",
                f"{row['mlm_accuracy']:.3f}",
                f"{head} {row[f'{head}_accuracy']:.3f}" if head else "–",
            ]
        )
    return rows


def _pooling_section(results, pooling):
    """One reading's table: test accuracy per task and objective, paired to MLM alone within
    the reading, with the runs at the majority class."""
    rows = []
    chosen = any("rate_choices" in study for study in results["tasks"].values())
    for task, study in results["tasks"].items():
        reading = study["poolings"].get(pooling, {})
        rates = study.get("rate_choices", {}).get(pooling, {})

        def rate(objective, rates=rates):
            """The objective's peak rate chosen on validation, as a cell ([] without it)."""
            if not chosen:
                return []
            return [f"{rates[objective]['chosen']:g}" if objective in rates else "–"]

        for objective, row in reading.get("objectives", {}).items():
            rows.append(
                [
                    task,
                    OBJECTIVES.get(objective, objective),
                    *rate(objective),
                    _accuracy(row),
                    format_difference(row.get("vs_masked")),
                    f"{row['runs_at_majority']} of {len(row['runs'])}",
                    f"{study['majority_accuracy']:.3f}",
                ]
            )
        # MRPC's F1 of "paraphrase" (GLUE's metric), beside the F1 of always answering it.
        for objective, row in reading.get("f1_objectives", {}).items():
            rows.append(
                [
                    f"{task} F1",
                    OBJECTIVES.get(objective, objective),
                    *rate(objective),
                    _accuracy(row),
                    format_difference(row.get("vs_masked")),
                    "–",
                    f"always 'paraphrase' {study['majority_f1']:.3f}",
                ]
            )
    header = ["task", "objective", *(["peak rate"] if chosen else []), "test score"]
    header += ["vs MLM alone", "at majority", "majority"]
    return ["", f"{POOLINGS.get(pooling, pooling)}:", "", markdown_table(header, rows)]


def render(results):
    """The intrinsic table (common held-out MLM set, each second head), then, per pooling, test
    accuracy per task and objective with the seed-paired difference to MLM alone and the runs
    at the majority class."""
    settings = results.get("settings", {})
    described = ", ".join(f"{key} {_setting(value)}" for key, value in settings.items())
    sections = [line for p in _poolings(results) for line in _pooling_section(results, p)]
    return "\n".join(
        [
            f"Each objective pretrained from scratch at equal steps ({described}). Held-out "
            "measures of each encoder: its MLM head on one common masked set of other authors' "
            "books, and its second head on its own held-out batches:",
            "",
            markdown_table(
                ["objective", "held-out MLM loss", "MLM accuracy", "second head's accuracy"],
                _intrinsic_rows(results),
            ),
            "",
            "Fine-tuned on each task under each reading of the encoder: test accuracy, mean ± sd "
            "over seeds; differences in points to MLM alone read the same way, paired by seed "
            "('no difference' when the mean is inside the sd); runs at the majority class (all "
            "one class, or accuracy within a point of it) against the test set's majority "
            "class accuracy.",
        ]
        + sections
    )


def _task_headline(task, study, poolings):
    """One task's differences to MLM alone, each objective's readings side by side, and how
    many of the task's runs landed at the majority class."""
    readings = [study["poolings"][p]["objectives"] for p in poolings if p in study["poolings"]]
    differences = [
        f"{objective} "
        + " / ".join(format_difference(r[objective].get("vs_masked"), digits=1) for r in readings)
        for objective in readings[0]
        if "vs_masked" in readings[0][objective]
    ]
    rows = [row for reading in readings for row in reading.values()]
    landed = sum(row["runs_at_majority"] for row in rows)
    names = " / ".join(SHORT.get(p, p) for p in poolings if p in study["poolings"])
    runs = sum(len(row["runs"]) for row in rows)
    return (
        f"{task.upper()} vs MLM alone, points at {names}: {', '.join(differences)} ({landed} of "
        f"{runs} runs at the majority class)"
    )


def headline(results):
    poolings = _poolings(results)
    return "; ".join(
        _task_headline(task, study, poolings) for task, study in results["tasks"].items()
    )
