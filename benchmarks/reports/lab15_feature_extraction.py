"""The records of `labs/lab15_feature_extraction.py`: their section of docs/results.md and README
headline."""

import json
from pathlib import Path

from benchmarks.reports._common import markdown_table
from kbert.metrics.seed_comparison import format_difference

STEMS = ("lab15_feature_extraction",)

# What the lab's source claims: stated under the record's title, above what it found.
CLAIM = "the textbook and BERT (Devlin et al. 2019, §5.3): a frozen encoder's features with a small head work well, below fine-tuning the whole encoder, and reading several top layers beats the top one alone"


def render(results):
    """Table of `labs/lab15_feature_extraction.py`: frozen features × head, TREC-6 accuracy."""
    rows = [
        [
            run["pooling"],
            run["layers"],
            run["head"],
            f"{run['validation_accuracy']:.3f}",
            f"{run['test_accuracy']:.3f}"
            + ("" if run.get("test_accuracy_sd") is None else f" ± {run['test_accuracy_sd']:.3f}"),
            f"{run['parameters']:,}",
            run["epochs"],
        ]
        for run in results["runs"]
    ]
    seeds = len(results["runs"][0].get("seeds", [None])) if results["runs"] else 1
    differences = results.get("differences") or []
    compared = (
        [
            "",
            "Seed-paired differences in test accuracy (points):",
            "",
            markdown_table(
                ["compared", "difference"],
                [[row["compared"], format_difference(row["difference"])] for row in differences],
            ),
        ]
        if differences
        else []
    )
    return "\n".join(
        [
            f"{results['checkpoint']} frozen; features extracted once per pooling, a head trained "
            f"on {results['examples']['train']:,} TREC-6 questions (early stopping on "
            f"{results['examples']['validation']:,}), test on {results['examples']['test']:,} "
            f"(training-majority baseline {results['majority_baseline_test_accuracy']:.3f}); "
            f"{seeds} seed(s) per head, mean ± sd:",
            "",
            markdown_table(
                ["pooling", "layers", "head", "validation", "test", "head parameters", "epochs"],
                rows,
            ),
            *compared,
        ]
    )


def headline(results):
    best = max(results["runs"], key=lambda run: run["validation_accuracy"])
    return (
        f"frozen {results['checkpoint']} on TREC-6: best on validation {best['pooling']} / "
        f"{best['layers']} / {best['head']} head, test {best['test_accuracy']:.3f}"
    )


def notes(name, results, results_dir):
    """The claim's other side, from another record: the same checkpoint fine-tuned whole on
    TREC-6 (lab02's part ii: the tutorial's settings, the same 500 test questions)."""
    del name
    path = Path(results_dir) / "lab02_finetuning.json"
    if not path.is_file():
        return ["Fine-tuning the whole encoder on the same task: no lab02_finetuning record yet."]
    lab02 = json.loads(path.read_text(encoding="utf-8"))["results"].get("ii", {})
    if lab02.get("model", results.get("checkpoint")) != results.get("checkpoint"):
        return []
    spread = "" if lab02.get("test_accuracy_sd") is None else f" ± {lab02['test_accuracy_sd']:.3f}"
    seeds = f" over {len(lab02['runs'])} seeds" if "runs" in lab02 else ""
    return [
        f"Fine-tuning the whole encoder on the same task, for the claim's other side: "
        f"{results.get('checkpoint')} in lab02 (part ii, the tutorial's settings: 3 epochs) "
        f"scores {lab02['test_accuracy']:.3f}{spread} test accuracy{seeds} "
        "(docs/results.md#lab02_finetuning)."
    ]
