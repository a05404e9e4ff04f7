"""What the adaptation labs and benchmarks share to compare methods on TREC-6, over seeds.

Each of them compares some adaptation recipes (`kbert.train.adaptation_recipes`) on TREC-6
from lab01's tutorial-style causal model and/or MiniLM-L6; this module holds the harness
(`compare_methods` over starts and seeds, `summarize`, `format_summary_table`,
`choose_on_validation`) and their common arguments, data loading, resumable result file and
printed table, so a lab's cells show its technique and end with one comparison call:

    parser = comparison_parser("Adapters on TREC-6")
    args = parser.parse_args()
    starts, data = starting_points(parser, args), trec_data(args)
    compare_and_print([("full", recipes.full_fine_tuning, {}),
                       ("adapters", recipes.adapters, {"bottleneck_dim": 32})], starts, data, args)
"""

import argparse
import gc
import json
import re
import subprocess
import sys
import time
from pathlib import Path

from kbert.data.classification_tasks import load_classification_task
from kbert.models.classifier_ensemble import ClassifierEnsemble
from kbert.run_records import add_record_argument, code_version, record_if_requested
from kbert.train.adaptation_recipes import (
    DEFAULT_LEARNING_RATES,
    adapt_classifier,
    method_name,
    pretrained_starting_point,
)
from kbert.train.adaptation_run import ensemble_result
from kbert.train.chosen_on_validation import chosen_rates
from kbert.train.comparison_summary import (  # noqa: F401  (re-exported: the harness's API)
    choose_on_validation,
    format_summary_table,
    summarize,
)

STARTS = {"lab01": "saved_models/lab01_causal", "minilm_l6": "minilm_l6"}
# Peak rates per start, where they differ from `DEFAULT_LEARNING_RATES` (BERT's 1e-4 for methods
# that train the encoder's weights), used until the grid's record holds a choice:
# `starting_points` reads full fine-tuning's and discriminative rates' rates chosen on validation
# from docs/results/adaptation_grid.json (lab01) and adaptation_grid_minilm.json (MiniLM-L6)
# (`kbert.train.chosen_on_validation.chosen_rates`), and gives every other method that trains
# the same weights with one rate (top-2, gradual unfreezing, chain-thaw, L2-SP, EWC, multitask,
# sequential, and distillation's students, which train the teacher's blocks) full's rate, so
# each lab compares them with full fine-tuning at one rate, as ULMFiT and the tutorial do.
_ENCODER_RATES = {
    "full": 3e-4,
    "discriminative_lr": 1e-3,
    "l2_sp": 3e-4,
    "ewc": 3e-4,
    "top_2": 3e-4,
    "gradual_unfreezing": 3e-4,
    "chain_thaw": 3e-4,
    "multitask": 3e-4,
    "sequential": 3e-4,
    "distillation": 3e-4,
}
START_LEARNING_RATES = {"lab01": _ENCODER_RATES, "minilm_l6": _ENCODER_RATES}
# How feature extraction reads each start (`adaptation_recipes.feature_extraction`'s `layers`),
# by the start's own pooling: MiniLM-L6 by the mean of its last four layers, the reading
# labs/lab15_feature_extraction.py found best for a linear head on its mean-pooled features
# (docs/results.md#lab15_feature_extraction); a start not named, by its top layer
# (`StartingPoint.feature_layers`, set by `starting_points`).
FEATURE_EXTRACTION_LAYERS = {"minilm_l6": "last4"}
# The fallbacks of the settings the grids choose on validation, used until a grid's record holds
# a choice for the start (`kbert.train.chosen_on_validation`): the adapters' trainable set, size
# and rate multiplier over full fine-tuning's rate (`benchmarks/adaptation_grid.py --studies
# adapters`; the Houlsby set at 10×, the setting issue #36 measured on MiniLM-L6), and
# discriminative rates' factor (`--studies rates`; 1: no decay).
FALLBACK_ADAPTERS = {"trainable": "houlsby", "bottleneck_dim": 32, "rate_multiplier": 10.0}
FALLBACK_FACTOR = 1.0


def comparison_parser(description, seeds=3, run_dir="runs/adaptation", process_per_seed=False):
    """An `argparse.ArgumentParser` with the arguments every comparison takes.

    Args:
        description: str. The program's description.
        seeds: int, default 3. Default number of seeds (mean ± sd and a paired difference
            need several; the course's rule is three).
        run_dir: str, default "runs/adaptation". Where `results.jsonl` goes.
        process_per_seed: bool, default False. The default of `--process-per-seed` (on for
            comparisons of dozens of runs: see `run_comparison`).

    Returns:
        `argparse.ArgumentParser`; add the program's own arguments, then `parse_args()`.
    """
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--starts",
        default="lab01,minilm_l6",
        help="comma-separated: lab01 (its causal model), minilm_l6, or paths",
    )
    parser.add_argument(
        "--lab01-model",
        default=STARTS["lab01"],
        help="lab01's causal encoder directory (encoder.keras + vocab.txt)",
    )
    parser.add_argument("--methods", default="all", help="comma-separated labels, or all")
    parser.add_argument("--seeds", type=int, default=seeds)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--sequence-length", type=int, default=64)
    parser.add_argument(
        "--train-examples",
        type=int,
        default=1000,
        help="a seeded slice of TREC-6 train; 0 for all 4,907",
    )
    parser.add_argument(
        "--eval-examples",
        type=int,
        default=0,
        help="the first N of validation and of test (smoke runs); 0 for all (545 and 500)",
    )
    parser.add_argument("--data-dir", default=None, help="default: KBERT_DATA_DIR, ../shared/data")
    parser.add_argument("--run-dir", default=run_dir)
    parser.add_argument("--fresh", action="store_true", help="ignore earlier results")
    parser.add_argument("--verbose", type=int, default=0)
    parser.add_argument(
        "--process-per-seed",
        action=argparse.BooleanOptionalAction,
        default=process_per_seed,
        help="run each start and seed in a child process of its own (TensorFlow keeps about "
        "0.5 GB of every MiniLM-L6 fit until the process ends)",
    )
    # Set by `run_comparison` for its child processes: run this start's seed only, no record.
    parser.add_argument("--only-seed", type=int, default=None, help=argparse.SUPPRESS)
    add_record_argument(parser)
    return parser


def selected_variants(parser, args, variants):
    """The `(label, method, options)` variants `--methods` names (all for "all"); a name also
    selects the rows `chosen_on_validation.chosen_variants` split by start ("adapters" selects
    "adapters (chosen: lab01)" and "adapters (fallback: minilm_l6)")."""
    if args.methods == "all":
        return list(variants)
    wanted = [label.strip() for label in args.methods.split(",") if label.strip()]
    labels = [label for label, _, _ in variants]
    bases = {label: re.sub(r" \((chosen|fallback): .*\)$", "", label) for label in labels}
    unknown = [name for name in wanted if name not in labels and name not in bases.values()]
    if unknown or not wanted:
        parser.error(f"--methods must name labels among {labels}; received {args.methods!r}")
    return [variant for variant in variants if {variant[0], bases[variant[0]]} & set(wanted)]


def starting_points(parser, args):
    """`StartingPoint`s for `--starts` (lab01 must have been run first), each with the peak
    rates its grid chose on validation (`chosen_rates`: printed with their record)."""
    starts = []
    for name in [name.strip() for name in args.starts.split(",") if name.strip()]:
        path = args.lab01_model if name == "lab01" else STARTS.get(name, name)
        if name == "lab01" and not (Path(path) / "encoder.keras").is_file():
            parser.error(
                f"lab01's causal model is not at {path}: run "
                "`python labs/lab01_pretraining.py` first, pass --lab01-model, or "
                "choose --starts minilm_l6"
            )
        rates = None
        if name in START_LEARNING_RATES:
            chosen = chosen_rates(name, START_LEARNING_RATES[name])
            print(f"peak rates for {name}: {chosen.source}")
            rates = chosen.value
        start = pretrained_starting_point(
            path, args.sequence_length, name=name, learning_rates=rates
        )
        start.feature_layers = FEATURE_EXTRACTION_LAYERS.get(name, "top")
        starts.append(start)
    if not starts:
        parser.error("--starts names no starting point")
    return starts


def trec_data(args):
    """TREC-6 as `Examples`: train (`--train-examples` of it), validation, test (TREC_10).

    Validation is the 10% of TREC-6's training file that `load_classification_task` holds
    out (545 questions, never in train); settings are chosen on it, never on test.
    `--eval-examples` (smoke runs) keeps the first N of each.
    """
    limit = args.train_examples or None
    evaluation = getattr(args, "eval_examples", 0) or None
    return {
        "train": load_classification_task(
            "trec", "train", data_dir=args.data_dir, max_examples=limit
        ),
        "validation": load_classification_task(
            "trec", "validation", data_dir=args.data_dir, max_examples=evaluation
        ),
        "test": load_classification_task(
            "trec", "test", data_dir=args.data_dir, max_examples=evaluation
        ),
    }


def variant_key(method, options, start=None):
    """What a variant's rows depend on besides start and settings: its method, the rate it
    trains at (its own, or the default at the time: `start`'s rate for the method when a
    `StartingPoint` is given, else `DEFAULT_LEARNING_RATES`) and its other options."""
    name = method_name(method)  # a recipe function or its name
    default = DEFAULT_LEARNING_RATES.get(name) if start is None else start.learning_rate(name)
    rate = options.get("learning_rate") or default
    rest = {key: value for key, value in options.items() if key != "learning_rate"}
    return {"method": name, "learning_rate": rate, "options": json.dumps(rest, default=repr)}


def reusable(row, recipes, sources, settings, seeds, code=None):
    """Whether a saved row answers for a variant now: the same start (same weights), label,
    recipe (method, rate, options) and settings, and a seed still asked for. Rows saved before
    the recipe was recorded are never reused (their rate and options are unknown).

    With `code` (`kbert.run_records.code_version()`), the row must also have been made by that
    commit (and with uncommitted changes then only if there are some now: a record made from
    a clean checkout, as `benchmarks.record_labs` makes them, reuses only clean rows of its
    commit). A recipe's key cannot tell what it depends on beyond its own options (a distilled
    student, on its teacher's rate; any method, on the library's code), so a record re-made
    at a new commit reruns every row.
    """
    if code is not None and (not code["commit"] or row.get("code") != code):
        return False
    return (
        row.get("settings") == settings
        and row["label"] in recipes
        and row.get("recipe") == recipes[row["label"]]
        and row["start"] in sources
        and row.get("source") == sources[row["start"]]
        and (row["seed"] is None or row["seed"] < seeds)
    )


def run_comparison(variants, starts, data, args):
    """Runs `compare_methods`, appending each row to `<run-dir>/results.jsonl` as it comes.

    Rows of an earlier run of the same commit (a clean checkout) with the same start, settings
    and recipe (method, rate, options; `reusable`) are reused, so an interrupted run resumes;
    a changed default rate or option, or new code, reruns its rows. `--fresh` ignores them all.
    Progress lines go to stderr.

    With `--process-per-seed`, each start's seeds first run in child processes, one per start
    and seed (this program's own command line with `--starts` and `--only-seed` added), and
    this process then runs only what needs every seed (the ensembles, whose members it
    retrains). TensorFlow keeps memory of every `fit` until its process ends (about 0.5 GB
    per MiniLM-L6 run, even after `keras.backend.clear_session()`; keras-team/keras#20552):
    72 runs in one process outgrow 24 GB, one seed's 18 runs do not.

    Returns:
        list of row dicts (resumed rows included).

    Raises:
        RuntimeError: a child process failed (its output names the run); the rows it saved
            stay in `results.jsonl` for the next call.
    """
    run_dir = Path(args.run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    results_path = run_dir / "results.jsonl"
    settings = {
        "train_examples": len(data["train"]),
        "validation_examples": len(data["validation"]),
        "test_examples": len(data["test"]),
        "epochs": args.epochs,
        "batch_size": args.batch_size,
        "sequence_length": args.sequence_length,
    }
    sources = {start.name: start.source for start in starts}
    recipes = {
        start.name: {
            label: variant_key(method, options, start) for label, method, options in variants
        }
        for start in starts
    }
    code = code_version()

    def saved_rows():
        if not results_path.exists():
            return []
        return [
            row
            for row in map(json.loads, results_path.read_text().splitlines())
            if reusable(row, recipes.get(row["start"], {}), sources, settings, args.seeds, code)
        ]

    only_seed = getattr(args, "only_seed", None)
    done = [] if args.fresh and only_seed is None else saved_rows()
    if getattr(args, "process_per_seed", False) and only_seed is None:
        if args.fresh and results_path.exists():  # the children must not reuse them either
            results_path.rename(results_path.with_suffix(f".{time.strftime('%Y%m%d-%H%M%S')}"))
        for start in starts:
            for seed in range(args.seeds):
                if not missing_runs(variants, start, seed, done):
                    continue
                command = seed_process_command(start.name, seed)
                print(f"[{time.strftime('%H:%M:%S')}] {' '.join(command)}", file=sys.stderr)
                if subprocess.run(command).returncode != 0:
                    raise RuntimeError(
                        f"the child process for start {start.name!r}, seed {seed} failed "
                        f"(its output is above); its finished rows are in {results_path}: "
                        f"run the same command again to resume"
                    )
        done = saved_rows()

    def save(row):
        with results_path.open("a") as stream:
            line = {
                **row,
                "source": sources[row["start"]],
                "settings": settings,
                "recipe": recipes[row["start"]][row["label"]],
                "code": code,
            }
            stream.write(json.dumps(line) + "\n")
        print(
            f"[{time.strftime('%H:%M:%S')}] {row['start']} {row['label']} seed {row['seed']}: "
            f"acc {row['accuracy']:.4f}, {row['trainable_pct']:.2f}% trainable, "
            f"{row['train_s']:.1f} s",
            file=sys.stderr,
            flush=True,
        )

    if only_seed is not None:  # a child: one seed; ensembles need every seed's model
        variants = [
            variant
            for variant in variants
            if not needs_every_seed(method_name(variant[1]), variant[2])
        ]
    rows = compare_methods(
        variants,
        starts,
        data,
        seeds=range(args.seeds) if only_seed is None else [only_seed],
        epochs=args.epochs,
        batch_size=args.batch_size,
        done=done,
        on_result=save,
        verbose=args.verbose,
    )
    return rows


def missing_runs(variants, start, seed, rows):
    """The labels of `variants` that `compare_methods` would still run for `start` and `seed`
    (its one-seed runs: not ensembles or students distilled from one, not EWC where the start
    has no pretraining head)."""
    finished = {row["label"] for row in rows if row["start"] == start.name and row["seed"] == seed}
    return [
        label
        for label, method, options in variants
        if runs_per_seed(method_name(method), start, options) and label not in finished
    ]


def seed_process_command(start_name, seed, argv=None):
    """The command that reruns this program for one start and seed (`--process-per-seed`).

    `argv` (default `sys.orig_argv`: the interpreter and its own arguments, so `python -m
    benchmarks.adaptation` stays a module run) without `--record` (the parent records), with
    `--starts` and `--only-seed` appended; argparse keeps the last value of an option given
    twice.
    """
    argv = list(sys.orig_argv if argv is None else argv)
    kept = []
    for index, argument in enumerate(argv):
        if argument.startswith("--record=") or argument == "--record":
            continue
        if index and argv[index - 1] == "--record":
            continue
        kept.append(argument)
    return [*kept, "--starts", start_name, "--only-seed", str(seed)]


def print_comparison(rows, data, args, baseline="full"):
    """Prints the summary table, then (last line) JSON `start/label` → its numbers.

    Each row is compared with the `baseline` label's runs of its start, seed by seed (when
    the comparison has that label): the table's Δ column and the JSON's `difference`.
    """
    labels = {row["label"] for row in rows}
    if isinstance(baseline, str) and baseline not in labels:
        baseline = None
    summaries = summarize(rows, baseline=baseline)
    print(
        f"TREC-6: {len(data['train'])} training questions, {len(data['validation'])} "
        f"validation, {len(data['test'])} test "
        f"(TREC_10), {args.epochs} epochs, batch {args.batch_size}, {args.seeds} seed(s)"
    )
    print(format_summary_table(summaries))
    if isinstance(baseline, dict):
        pairs = ", ".join(f"{label} to {base}" for label, base in baseline.items())
        print(f"Δ, paired by seed: {pairs}")
    print(
        json.dumps(
            {
                f"{row['start']}/{row['label']}": {
                    "trainable_pct": round(row["trainable_pct"], 3),
                    "acc_mean": round(row["acc_mean"], 4),
                    "acc_sd": None if row["acc_sd"] is None else round(row["acc_sd"], 4),
                    "val_mean": None if row["val_mean"] is None else round(row["val_mean"], 4),
                    "train_s": round(row["train_s"], 1),
                }
                | ({"difference": row["difference"]} if row.get("difference") else {})
                for row in summaries
            }
        )
    )
    return summaries


def comparison_settings(data, args):
    """The settings a comparison's numbers depend on, for its run record."""
    return {
        "train_examples": len(data["train"]),
        "validation_examples": len(data["validation"]),
        "test_examples": len(data["test"]),
        "epochs": args.epochs,
        "batch_size": args.batch_size,
        "sequence_length": args.sequence_length,
        "seeds": args.seeds,
    }


def compare_and_print(variants, starts, data, args, baseline="full"):
    """`run_comparison`, then the table in the order of `starts` and `variants`; returns rows.

    Every row's test accuracy is compared, seed by seed, with the `baseline` label's
    (`summarize`), when the variants include it; a dict `{label: its baseline's label}` gives
    rows different baselines (lab04's ULMFiT-regime rows are compared with full fine-tuning
    in that regime).

    Rows resumed from an earlier call are included; the last printed line is the JSON of
    `print_comparison`. With `--record`, the settings and the summaries are also written as a
    run record (`kbert.run_records.write_run_record`) that `benchmarks/reports/adaptation.py`
    renders.
    """
    rows = run_comparison(variants, starts, data, args)
    if getattr(args, "only_seed", None) is not None:
        return rows  # a child of `--process-per-seed`: its parent prints and records
    labels = [label for label, _, _ in variants]
    names = [start.name for start in starts]
    rows = sorted(
        rows,
        key=lambda row: (
            names.index(row["start"]),
            labels.index(row["label"]),
            -1 if row["seed"] is None else row["seed"],
        ),
    )
    summaries = print_comparison(rows, data, args, baseline)
    if args.record:  # the table and its settings, as a run record
        results = {
            "task": "trec",
            **comparison_settings(data, args),
            "starts": {start.name: start.source for start in starts},
            "rows": summaries,
        }
        record_if_requested(args, results)
    return rows


# === Comparing methods over starts and seeds, and choosing settings on validation ===


def distils_an_ensemble(method, options):
    """Whether a variant is a student distilled from the ensemble of every seed's "full"
    model (`"distillation"` with the option `teacher="ensemble"`)."""
    return method == "distillation" and options.get("teacher") == "ensemble"


def needs_every_seed(method, options):
    """Whether a variant (its method's name and options) needs every seed's "full" model: an
    ensemble, or a student distilled from one. `compare_methods` runs them last."""
    return method == "ensemble" or distils_an_ensemble(method, options)


def runs_per_seed(method, start, options=None):
    """Whether `compare_methods` runs `method` (a name) once per seed from `start` on its own:
    not an ensemble (it combines the seeds' models) or a student distilled from one (it needs
    every seed's model first), nor EWC from a start with no pretraining head to estimate the
    Fisher with."""
    if needs_every_seed(method, options or {}):
        return False
    return not (method == "ewc" and start.objective is None)


class _FullModels:
    """Each seed's fully fine-tuned model from one start (teachers, ensemble members), trained
    when first asked for unless a "full" variant already made it."""

    def __init__(self, start, data, settings):
        self.start, self.data, self.settings = start, data, settings
        self.models, self.seconds = {}, {}

    def keep(self, seed, model, seconds):
        self.models[seed], self.seconds[seed] = model, seconds

    def model(self, seed):
        if seed not in self.models:
            epochs, batch_size, verbose = self.settings
            result, model = adapt_classifier(
                "full", self.start, self.data, seed, epochs, batch_size, verbose=verbose
            )
            self.keep(seed, model, result["train_s"])
        return self.models[seed]


def compare_methods(
    variants, starts, data, seeds=(0,), epochs=3, batch_size=32, done=(), on_result=None, verbose=0
):
    """Runs every variant from every starting point with every seed; returns the result rows.

    Within one start and seed, a "distillation" variant's teacher is that seed's "full" model
    (trained first if no "full" variant ran), and an "ensemble" variant combines the start's
    "full" models of all seeds (one row, seed None). A "distillation" variant with the option
    `teacher="ensemble"` distils that ensemble (`ClassifierEnsemble`, mean probabilities)
    into each seed's student, initialised from the seed's own "full" model; its row's
    `teacher_accuracy` is the ensemble's and `teacher_members` its size. Both run after the
    per-seed variants, so list them last.

    Args:
        variants: list of `(label, method, options)`: a row label, a recipe of
            `adaptation_recipes` (or its `ADAPTATION_METHODS` name; `ensemble_result` for an
            ensemble) and that recipe's options dict (see `adapt_classifier`; a
            "learning_rate" key sets the method's peak rate, an "epochs" key its epochs).
        starts: list of `StartingPoint`.
        data: dict with "train" and "test" `Examples`, and optionally "validation".
        seeds: sequence of int, default (0,).
        epochs: int, default 3.
        batch_size: int, default 32.
        done: rows from an earlier, interrupted call (with `label`, `start`, `seed`): those
            runs are not repeated (a teacher or ensemble member is retrained if needed but
            not reported again).
        on_result: callable or None. Called with each new row as soon as it exists (to save
            progress).
        verbose: int, default 0.

    Returns:
        list of row dicts (`label`, `method`, `start`, `seed`, and `adapt_classifier`'s
        result), `done` rows included.
    """
    variants = [(label, method_name(method), options) for label, method, options in variants]
    rows = list(done)
    finished = {(row["label"], row["start"], row["seed"]) for row in rows}

    def report(row):
        rows.append(row)
        if on_result is not None:
            on_result(row)

    for start in starts:
        teachers = _FullModels(start, data, (epochs, batch_size, verbose))
        for seed in seeds:
            for label, method, options in variants:
                if (
                    not runs_per_seed(method, start, options)
                    or (label, start.name, seed) in finished
                ):
                    continue
                if method == "distillation":
                    options = {**options, "teacher": teachers.model(seed)}
                # A variant may train for epochs of its own (the tutorial's multitask: 6, not 3).
                run_options = dict(options)
                run_epochs = run_options.pop("epochs", epochs)
                result, model = adapt_classifier(
                    method,
                    start,
                    data,
                    seed,
                    run_epochs,
                    batch_size,
                    verbose=verbose,
                    **run_options,
                )
                if method == "full" and not options:
                    teachers.keep(seed, model, result["train_s"])
                report({"label": label, **result})
                del model
                gc.collect()  # each run's model and traced graphs; the process runs dozens
        for variant in variants:
            _run_on_every_seed(variant, teachers, list(seeds), finished, report)
    return rows


def _run_on_every_seed(variant, teachers, seeds, finished, report):
    """An "ensemble" variant's row, or each seed's student distilled from the ensemble."""
    label, method, options = variant
    start = teachers.start
    if method == "ensemble" and (label, start.name, None) not in finished:
        members = [teachers.model(seed) for seed in seeds]
        _, preprocessor = start.load()
        seconds = sum(teachers.seconds[seed] for seed in seeds)
        result = ensemble_result(members, preprocessor, teachers.data, seconds, **options)
        report({"label": label, "start": start.name, "seed": None, **result})
    missing = [seed for seed in seeds if (label, start.name, seed) not in finished]
    if not distils_an_ensemble(method, options) or not missing:
        return
    ensemble = ClassifierEnsemble([teachers.model(seed) for seed in seeds])
    epochs, batch_size, verbose = teachers.settings
    for seed in missing:
        settings = {**options, "teacher": ensemble, "student_from": teachers.model(seed)}
        result, model = adapt_classifier(
            method, start, teachers.data, seed, epochs, batch_size, verbose=verbose, **settings
        )
        report({"label": label, **result, "teacher_members": len(seeds)})
        del model
        gc.collect()
