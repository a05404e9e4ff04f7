"""Distillation's temperature T and soft weight α chosen on validation; a student from an ensemble.

Hinton et al. (2015) and DistilBERT (Sanh et al. 2019) train a student on its teacher's soft
targets at a temperature T > 1 (the loss on them scaled by T²) mixed with the hard-label loss,
`α · T² · KL + (1 − α) · CE` (`kbert.models.Distiller`); the tutorial's §4.3.C adds ensembles,
and distilling an ensemble into one model. Neither fixes T or α for a task: a student compared
at one untuned setting measures that setting. Per start, on TREC-6 (1,000 training questions,
3 epochs, 3 seeds):

- **teacher** — full fine-tuning at the start's chosen rate (`START_LEARNING_RATES`); every
  student trains at that rate too (they train the teacher's blocks);
- **student on labels only** — the same half-depth student (the teacher's embeddings and every
  other block, DistilBERT's initialisation) with α = 0: the baseline a distilled student must
  beat, and every row's seed-paired difference is to it;
- **the grid** — distillation at T ∈ {1, 2, 4} × α ∈ {0.1, 0.5, 0.9}; the setting with the best
  mean validation accuracy (545 held-out questions) is chosen, and the source's setting
  (`SOURCE`: T 2, α 0.9) is marked beside it (added to the grid when a custom grid leaves it
  out);
- **the ensemble** of the seeds' teachers (mean probabilities), and **students distilled from
  it** at the chosen and at the source's setting: each seed's student starts from its own
  teacher's blocks and learns the ensemble's soft targets (`ClassifierEnsemble.tempered_logits`).

The grid runs first (`--process-per-seed` by default: dozens of runs); the ensemble rows then
retrain the seeds' teachers in this process (seeded as before) and distil. Every run is appended
to `<run-dir>/results.jsonl` as it finishes, so an interrupted call resumes.

    python -m benchmarks.distillation_grid --starts minilm_l6 \\
        [--record docs/results/distillation_grid.json]
    python -m benchmarks.distillation_grid --starts lab01,minilm_l6 \\
        --lab01-model saved_models/lab01_causal --record docs/results/distillation_grid.json
    python -m benchmarks.distillation_grid --starts minilm_l6 --seeds 1 \\
        --temperatures 2 --soft-weights 0.5  # quick

The last line of stdout is JSON: per start, the chosen setting and the test accuracy of the
labels-only student, the source's and the chosen distilled students and the ensemble's student.
"""

import json
import time
from pathlib import Path

import kbert.quiet  # noqa: F401  (TensorFlow's start-up lines filtered)

from kbert.arguments import comma_separated
from kbert.run_records import record_if_requested
from kbert.train.adaptation_comparison import (
    choose_on_validation,
    comparison_parser,
    comparison_settings,
    format_summary_table,
    run_comparison,
    starting_points,
    summarize,
    trec_data,
)

TEMPERATURES = (1.0, 2.0, 4.0)
SOFT_WEIGHTS = (0.1, 0.5, 0.9)
# The sources' setting: DistilBERT's temperature (2), and most of the weight on the soft targets
# (Hinton et al. 2015: "a considerably lower weight on the second objective", the hard labels;
# DistilBERT weighs its distillation loss 5 to the MLM's 2). lab17 ran T 2, α 0.5 before.
SOURCE = (2.0, 0.9)
BASELINE = "student_labels_only"
ROW_FIELDS = ("label", "seeds", "val_mean", "acc_mean", "acc_sd", "trainable_pct", "train_s")


def setting_label(prefix, temperature, soft_weight):
    """A row label naming its setting, e.g. "distillation T=2 α=0.5"."""
    return f"{prefix} T={temperature:g} α={soft_weight:g}"


def grid_settings(temperatures=TEMPERATURES, soft_weights=SOFT_WEIGHTS):
    """Every `(T, α)` of the grid, then the source's setting if the grid leaves it out."""
    settings = [(float(t), float(a)) for t in temperatures for a in soft_weights]
    return settings if SOURCE in settings else [*settings, SOURCE]


def grid_variants(settings):
    """The teacher, the labels-only student and a distilled student at each `(T, α)`."""
    return [
        ("full", "full", {}),
        (BASELINE, "distillation", {"soft_weight": 0.0}),
        *(
            (
                setting_label("distillation", t, a),
                "distillation",
                {"temperature": t, "soft_weight": a},
            )
            for t, a in settings
        ),
    ]


def ensemble_variants(settings):
    """The seeds' teachers' ensemble, and a student distilled from it at each `(T, α)`."""
    return [
        ("ensemble", "ensemble", {}),
        *(
            (
                setting_label("distillation_from_ensemble", t, a),
                "distillation",
                {"temperature": t, "soft_weight": a, "teacher": "ensemble"},
            )
            for t, a in settings
        ),
    ]


def _teacher_accuracy(rows, label):
    """The mean teacher accuracy of `label`'s rows (None for rows without a teacher)."""
    values = [row.get("teacher_accuracy") for row in rows if row["label"] == label]
    values = [value for value in values if value is not None]
    return sum(values) / len(values) if values else None


def record_rows(summaries, rows, variants, marks):
    """The record's rows: `summarize`'s numbers with each row's role, T, α, teacher accuracy
    (mean over seeds; the ensemble's for its students) and marks ("source", "chosen")."""
    options = {label: settings for label, _, settings in variants}
    out = []
    for summary in summaries:
        label, settings = summary["label"], options[summary["label"]]
        if summary["method"] in ("full", "ensemble"):
            role = "teacher" if summary["method"] == "full" else "ensemble"
        elif label == BASELINE:
            role = "baseline"
        else:
            role = "ensemble_student" if settings.get("teacher") else "grid"
        out.append(
            {key: summary[key] for key in ROW_FIELDS}
            | {
                "role": role,
                "temperature": None if role == "baseline" else settings.get("temperature"),
                "soft_weight": settings.get("soft_weight"),
                "teacher_acc_mean": _teacher_accuracy(
                    [row for row in rows if row["start"] == summary["start"]], label
                ),
                "difference": summary.get("difference"),
                "marks": marks.get(label, []),
            }
        )
    return out


def study(start, data, args):
    """The grid, the choice on validation, then the ensemble rows, for one start."""
    settings = grid_settings(args.temperatures, args.soft_weights)
    grid = grid_variants(settings)
    rows = run_comparison(grid, [start], data, args)
    by_label = {setting_label("distillation", *setting): setting for setting in settings}
    candidates = [summary for summary in summarize(rows) if summary["label"] in by_label]
    chosen = choose_on_validation(candidates, family=lambda row: "grid")[(start.name, "grid")]
    chosen_setting = by_label[chosen["label"]]
    ensemble_settings = list(dict.fromkeys([chosen_setting, SOURCE]))
    ensemble = ensemble_variants(ensemble_settings)
    rows = rows + run_comparison(ensemble, [start], data, args)
    variants = grid + ensemble
    order = [label for label, _, _ in variants]
    summaries = sorted(
        summarize(rows, baseline=BASELINE), key=lambda row: order.index(row["label"])
    )
    print(f"\n{start.name}:\n{format_summary_table(summaries)}")
    marks = {}
    for setting, mark in ((SOURCE, "source"), (chosen_setting, "chosen")):
        for prefix in ("distillation", "distillation_from_ensemble"):
            marks.setdefault(setting_label(prefix, *setting), []).append(mark)
    return {
        "rows": record_rows(summaries, rows, variants, marks),
        "chosen": {"temperature": chosen_setting[0], "soft_weight": chosen_setting[1]},
    }


def parse_arguments(argv=None):
    parser = comparison_parser(
        __doc__.split("\n\n")[0], run_dir="runs/distillation_grid", process_per_seed=True
    )
    parser.add_argument(
        "--temperatures",
        type=comma_separated(float, minimum=0, strictly_greater=True),
        default=list(TEMPERATURES),
        help="the grid's temperatures T, comma-separated",
    )
    parser.add_argument(
        "--soft-weights",
        type=comma_separated(float, minimum=0, strictly_greater=True),
        default=list(SOFT_WEIGHTS),
        help="the grid's soft-target weights α in (0, 1], comma-separated (α = 0 is the "
        "labels-only student, always run)",
    )
    args = parser.parse_args(argv)
    if args.methods != "all":
        parser.error(
            "--methods does not apply here: choose the grid with --temperatures and --soft-weights"
        )
    if any(weight > 1 for weight in args.soft_weights):
        parser.error(f"--soft-weights must be numbers in (0, 1]; received {args.soft_weights}")
    if args.seeds < 1:
        parser.error(f"--seeds must be a positive integer; received {args.seeds}")
    return parser, args


def headline_numbers(outcome):
    """The chosen setting and the test accuracy of the rows a reader compares first."""
    rows = {row["label"]: row for row in outcome["rows"]}
    chosen = (outcome["chosen"]["temperature"], outcome["chosen"]["soft_weight"])
    picks = {
        "teacher": "full",
        "labels_only": BASELINE,
        "source": setting_label("distillation", *SOURCE),
        "chosen_student": setting_label("distillation", *chosen),
        "ensemble": "ensemble",
        "from_ensemble_chosen": setting_label("distillation_from_ensemble", *chosen),
    }
    return {"chosen": outcome["chosen"]} | {
        name: round(rows[label]["acc_mean"], 4) for name, label in picks.items()
    }


def main(argv=None):
    parser, args = parse_arguments(argv)
    starts = starting_points(parser, args)
    data = trec_data(args)
    if args.only_seed is not None:  # a child of `--process-per-seed`: the grid's runs only
        settings = grid_settings(args.temperatures, args.soft_weights)
        run_comparison(grid_variants(settings), starts, data, args)
        return None
    if args.fresh:  # once for the whole call: its later comparisons reuse its own rows
        path = Path(args.run_dir) / "results.jsonl"
        if path.exists():
            path.rename(path.with_suffix(f".{time.strftime('%Y%m%d-%H%M%S')}"))
        args.fresh = False
    results = {
        "settings": comparison_settings(data, args) | {"lab01_model": args.lab01_model},
        "grid": {
            "temperatures": args.temperatures,
            "soft_weights": args.soft_weights,
            "source": {"temperature": SOURCE[0], "soft_weight": SOURCE[1]},
        },
        "baseline": BASELINE,
        "starts": {start.name: study(start, data, args) for start in starts},
    }
    results["headline"] = {
        name: headline_numbers(outcome) for name, outcome in results["starts"].items()
    }
    record_if_requested(args, results)
    print(json.dumps(results["headline"]))
    return results


if __name__ == "__main__":
    main()
