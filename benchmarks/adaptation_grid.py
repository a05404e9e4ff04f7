"""Adaptation methods run the way their authors ran them: each one's settings chosen on validation.

A method compared at another method's hyperparameters measures a misconfiguration, not the
method. ULMFiT's discriminative learning rates (Howard & Ruder 2018; NAACL 2019 tutorial
hands-on #5) divide the rate by 2.6 per layer group *below a top rate of their own*: reused with
full fine-tuning's 1e-4, the bottom of an 8-group encoder trains at 1e-4 / 2.6⁷ ≈ 1e-7 and the run
is close to training the head alone. So this benchmark gives every method a small grid and
chooses on validation (545 TREC-6 training questions held out, never seen in training), then
reports test accuracy (TREC_10, 500 questions) of the chosen setting, mean ± sd over 3 seeds:

- **rates** — full fine-tuning at peak rate {3e-5, 1e-4, 3e-4, 1e-3} (warmup + linear decay;
  every top rate of discriminative rates is in its grid) against discriminative rates: top rate
  {1e-4, 3e-4, 1e-3} × factor {1.0, 1.3, 1.6, 2.6}, each layer group on ULMFiT's slanted
  triangular schedule (factor 1.0 is the same optimizer with one rate). Each discriminative row
  carries its seed-paired difference to full fine-tuning at the same top rate: the lesson is
  read at equal top rates, not against full fine-tuning's own chosen rate.
- **anchors** — L2-SP (Li et al. 2018) and EWC (Kirkpatrick et al. 2017; diagonal Fisher of the
  causal LM, normalised to mean 1) at λ ∈ {0.01, 0.1, 1, 10}, at full fine-tuning's chosen rate.
  EWC needs the pretraining head: lab01's causal model only (MiniLM-L6 ships no MLM head).
- **peft** — LoRA (rank 8, α 16), prefix tuning (10 vectors) and prompt tuning (20 tokens), each
  at its own rate grid (`PEFT_RATES`): they train new weights from zero or random values, and
  at a rate too low for 3 epochs their results swing with the draw of those initial values
  (MiniLM-L6's LoRA at 1e-3 in docs/results.md#adaptation_grid_peft: the widest spread over
  seeds of its table), so the rate is chosen on validation over seeds like every other method's;
  `--peft-methods` picks some of them.
- **multitask** — the tutorial's hands-on #6, classification loss 1.0 + causal-LM loss on
  lab01's causal model, against full fine-tuning at the same epochs, in the low-resource regime
  where an auxiliary loss can matter: 100 and 300 labelled questions, trained for at least 120
  steps (`--min-steps`). Both train at each rate of {1e-4, 3e-4} (`--multitask-rates`); the LM
  weight is one of {0.1, 0.5, 1.0} (`--lm-weights`; the tutorial's is 0.5), constant or annealed
  linearly to 0 over the run; each method's setting (rate, weight, annealing) is chosen on
  validation at each size: an auxiliary loss compared at the other method's rate, or at a rate
  too low for either, would measure the rate. Beside it, the tutorial's own comparison at the
  call's labels (`multitask_tutorial`): LM 0.5 for twice the epochs ("6 epochs instead of 3")
  against full fine-tuning at the call's epochs and at twice as many, each rate chosen on
  validation; the tutorial compared with the shorter single-task runs only.
- **adapters** — the tutorial's hands-on #3 at its own settings and around them
  (`benchmarks/adaptation_studies.py`): full fine-tuning's rate grid chosen on validation, then
  adapters at {3, 10, 30}× that rate (`--adapter-multipliers`): the tutorial's trainable set
  (adapters + embeddings + head; its code freezes the LayerNorms) at sizes {32, 64}
  (`--adapter-sizes`), Houlsby's (adapters + LayerNorms + head) and adapters alone at 32;
  feature extraction read as lab15
  found best (`--feature-rates`). Each set's setting chosen on validation; every row paired
  with the chosen full fine-tuning, the source's own row (tutorial set, 32, 10×) marked.

Both starts of the adaptation labs: lab01's causal model (`--lab01-model`; the recorded run uses
`saved_models/lab01_causal`, the model of lab01's recorded run, which labs 3–6, 16 and 17 read)
read at a new classification token, and MiniLM-L6 read by the mean of its tokens (the pooling
its sentence-transformers config names). 1,000 training questions,
3 epochs, batch 32, length 64. Each record's section gives its training time summed over its
runs (lab01's small model trains faster than MiniLM-L6); every run is appended to `<run-dir>/results.jsonl` as it
finishes, so an interrupted call resumes, and `--starts lab01` then `--starts minilm_l6`
split the work over two sessions.

    python -m benchmarks.adaptation_grid --starts lab01 --lab01-model saved_models/lab01_causal \\
        [--record docs/results/adaptation_grid.json]
    python -m benchmarks.adaptation_grid --starts minilm_l6 --studies rates --seeds 1
    python -m benchmarks.adaptation_grid --starts lab01,minilm_l6 --studies peft \\
        --lab01-model saved_models/lab01_causal --record docs/results/adaptation_grid_peft.json
    python -m benchmarks.adaptation_grid --starts lab01 --lab01-model saved_models/lab01_causal \\
        --studies multitask --record docs/results/adaptation_grid_multitask.json
    python -m benchmarks.adaptation_grid --starts minilm_l6 --studies adapters \\
        --run-dir runs/adaptation_grid_adapters --record docs/results/adaptation_grid_adapters.json

The last line of stdout is JSON: per `start/method`, the chosen setting, its validation and test
accuracy, and the majority-class accuracy beside them.
"""

import argparse
import json
import math
import sys
import time
from pathlib import Path

import kbert.quiet  # noqa: F401  (TensorFlow's start-up lines filtered)

from benchmarks.adaptation_studies import (
    ADAPTER_MULTIPLIERS,
    ADAPTER_SIZES,
    FEATURE_RATES,
    Reading,
    adapters_study,
    full_rate_grid,
    full_variants,
    same_top_rate,
)
from kbert.arguments import comma_separated
from kbert.run_records import write_run_record
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

FULL_RATES = (3e-5, 1e-4, 3e-4)  # and every top rate (`full_rate_grid`)
TOP_RATES = (1e-4, 3e-4, 1e-3)
FACTORS = (1.0, 1.3, 1.6, 2.6)
STRENGTHS = (0.01, 0.1, 1.0, 10.0)
MULTITASK_RATES = (1e-4, 3e-4)
LM_WEIGHTS = (0.1, 0.5, 1.0)  # the multitask study's LM-loss weights (the tutorial's: 0.5)
# Peak rates for the methods that train a few new weights from scratch (their papers: LoRA
# 4e-4…5e-4 for 30+ epochs, prefix tuning 5e-5…8e-5 with a reparametrisation, prompt tuning 0.3
# with Adafactor; here 3 epochs with AdamW). The records of 6284ddd and a528d52 chose prefix
# tuning's top rate on both starts and prompt tuning's on MiniLM-L6, each time: both grids go
# one step higher again, and their bottom rates, which no start chose, go.
PEFT_RATES = {
    "lora": (1e-3, 3e-3, 1e-2),
    "prefix_tuning": (5e-3, 2e-2, 5e-2, 1e-1),
    "prompt_tuning": (1e-2, 3e-2, 1e-1, 3e-1),
}
STUDIES = ("rates", "anchors", "multitask", "peft", "adapters")
DEFAULT_STUDIES = ("rates", "anchors", "multitask")  # peft and adapters are asked for by name


def rate_variants(full_rates=FULL_RATES, top_rates=TOP_RATES, factors=FACTORS):
    """Full fine-tuning's rate grid (with every top rate), then discriminative rates' top
    rate × factor grid."""
    full = full_variants(full_rate_grid(full_rates, top_rates))
    discriminative = [
        (
            f"discriminative_lr lr={rate:g} factor={factor:g}",
            "discriminative_lr",
            {"learning_rate": rate, "factor": factor},
        )
        for rate in top_rates
        for factor in factors
    ]
    return full + discriminative


def anchor_variants(rate, with_ewc, strengths=STRENGTHS):
    """L2-SP (and EWC when the start has its pretraining head) at each λ, at `rate`."""
    methods = ("l2_sp", "ewc") if with_ewc else ("l2_sp",)
    return [
        # The rate is in the label: a resumed run must not reuse rows made at another rate.
        (
            f"{method} λ={strength:g} lr={rate:g}",
            method,
            {"learning_rate": rate, "strength": strength},
        )
        for method in methods
        for strength in strengths
    ]


def multitask_variants(rates=MULTITASK_RATES, weights=LM_WEIGHTS):
    """Full fine-tuning at every rate of `rates`; classification 1.0 + causal LM at every
    rate × LM weight of `weights` × annealing (none, or linear to 0 over the run)."""
    full = [(f"full lr={rate:g}", "full", {"learning_rate": rate}) for rate in rates]
    multitask = [
        (
            f"multitask clf 1.0 + LM {weight:g}{'→0' if annealed else ''} lr={rate:g}",
            "multitask",
            {"learning_rate": rate, "language_model_weight": weight}
            | ({"language_model_final_weight": 0.0} if annealed else {}),
        )
        for weight in weights
        for annealed in (False, True)
        for rate in rates
    ]
    return full + multitask


def multitask_tutorial_variants(epochs, rates=MULTITASK_RATES):
    """The tutorial's own comparison (hands-on #6): classification 1.0 + LM 0.5 for twice the
    epochs, beside single-task full fine-tuning at `epochs` and at twice as many, each at
    every rate of `rates`."""
    longer = 2 * epochs
    return [
        variant
        for rate in rates
        for variant in (
            (f"full {epochs} ep. lr={rate:g}", "full", {"learning_rate": rate}),
            (
                f"full {longer} ep. lr={rate:g}",
                "full",
                {"learning_rate": rate, "epochs": longer},
            ),
            (
                f"multitask clf 1.0 + LM 0.5, {longer} ep. lr={rate:g}",
                "multitask",
                {"learning_rate": rate, "language_model_weight": 0.5, "epochs": longer},
            ),
        )
    ]


def label_family(row):
    """A grid row's label without its rate: the family a rate is chosen in."""
    return row["label"].split(" lr=")[0]


def peft_variants(methods=tuple(PEFT_RATES)):
    """LoRA, prefix and prompt tuning, each at its rate grid (`PEFT_RATES`)."""
    return [
        (f"{method} lr={rate:g}", method, {"learning_rate": rate})
        for method in methods
        for rate in PEFT_RATES[method]
    ]


def majority_class_accuracy(data, split):
    labels = list(data[split].labels)
    return max(labels.count(label) for label in set(labels)) / len(labels)


def study(variants, start, data, args, reading=None):
    """Runs `variants` from `start`; returns `summarize` rows and the chosen label per family.

    `reading` (`Reading`): the baseline every row is paired with, if any, and the families one
    setting is chosen in (default: none, each method).
    """
    reading = reading or Reading()
    baseline = reading.baseline
    rows = run_comparison(variants, [start], data, args)
    labels = [label for label, _, _ in variants]
    options = {
        label: {key: value for key, value in settings.items() if key != "learning_rate"}
        for label, _, settings in variants
    }
    summaries = sorted(
        summarize([row for row in rows if row["label"] in labels], baseline=baseline),
        key=lambda row: labels.index(row["label"]),
    )
    chosen = choose_on_validation(summaries, reading.family)
    print(f"\n{start.name}:\n{format_summary_table(summaries)}")
    return {
        "rows": [
            {
                key: row[key]
                for key in (
                    "label",
                    "method",
                    "learning_rate",
                    "seeds",
                    "val_mean",
                    "acc_mean",
                    "acc_sd",
                    "trainable_pct",
                    "train_s",
                )
            }
            | {"options": options[row["label"]]}
            | ({"difference": row["difference"]} if baseline is not None else {})
            for row in summaries
        ],
        "chosen": {name: row["label"] for (_, name), row in chosen.items()},
    }


def parse_arguments(argv=None):
    parser = comparison_parser(__doc__.split("\n\n")[0], seeds=3, run_dir="runs/adaptation_grid")
    parser.add_argument(
        "--studies",
        default=",".join(DEFAULT_STUDIES),
        help=f"comma-separated among {STUDIES}",
    )
    parser.add_argument(
        "--multitask-sizes",
        type=comma_separated(int, minimum=1),
        default=[100, 300],
        help="comma-separated labelled-question counts for the multitask study",
    )
    parser.add_argument(
        "--peft-methods",
        type=comma_separated(str),
        default=list(PEFT_RATES),
        help=f"comma-separated among {tuple(PEFT_RATES)}, for the peft study",
    )
    parser.add_argument(
        "--min-steps",
        type=int,
        default=120,
        help="the multitask study trains at least this many steps (more epochs on few labels)",
    )
    for name, default, meaning in (
        ("--full-rates", FULL_RATES, "full fine-tuning's peak rates"),
        ("--top-rates", TOP_RATES, "discriminative rates' top rates"),
        ("--factors", FACTORS, "discriminative rates' factors between layer groups"),
        ("--strengths", STRENGTHS, "L2-SP and EWC λ values"),
        ("--multitask-rates", MULTITASK_RATES, "the multitask study's peak rates"),
        ("--lm-weights", LM_WEIGHTS, "the multitask study's LM-loss weights"),
        (
            "--adapter-multipliers",
            ADAPTER_MULTIPLIERS,
            "the adapters study's rates as multiples of full fine-tuning's chosen rate",
        ),
        ("--feature-rates", FEATURE_RATES, "the adapters study's feature-extraction rates"),
    ):
        parser.add_argument(
            name,
            type=comma_separated(float, minimum=0, strictly_greater=True),
            default=list(default),
            help=f"{meaning}, comma-separated",
        )
    parser.add_argument(
        "--adapter-sizes",
        type=comma_separated(int, minimum=1),
        default=list(ADAPTER_SIZES),
        help="the adapters study's bottleneck sizes (the tutorial set at each; the others at 32, "
        "or the first), comma-separated",
    )
    args = parser.parse_args(argv)
    if args.methods != "all":
        parser.error("--methods does not apply here: choose the grids with --studies")
    studies = [name.strip() for name in args.studies.split(",") if name.strip()]
    if not studies or any(name not in STUDIES for name in studies):
        parser.error(f"--studies must name some of {STUDIES}; received {args.studies!r}")
    if args.min_steps < 1:
        parser.error(f"--min-steps must be a positive integer; received {args.min_steps}")
    unknown = [m for m in args.peft_methods if m not in PEFT_RATES]
    if unknown:
        parser.error(f"--peft-methods must name some of {tuple(PEFT_RATES)}; received {unknown}")
    args.studies = studies
    return parser, args


def settled(outcome, args):
    """Whether a choice made on `outcome` (a study's summaries) is final, so the studies that
    train at it may run: always in the parent; in a child of `--process-per-seed` only once
    every seed's rows exist. A child chooses over the seeds finished so far, and a study run
    at that choice would be run again by the parent if the three seeds choose otherwise."""
    return args.only_seed is None or all(row["seeds"] == args.seeds for row in outcome["rows"])


def set_aside(path):
    """Renames `path` (if it exists) with the time as its suffix, so no run reuses its rows."""
    if path.exists():
        path.rename(path.with_suffix(f".{time.strftime('%Y%m%d-%H%M%S')}"))


def main(argv=None):
    started = time.perf_counter()
    parser, args = parse_arguments(argv)
    if args.fresh and args.only_seed is None:
        # Earlier calls' rows set aside once: this call's studies still share their own runs
        # (the rates and adapters studies' full fine-tuning, each study's chosen row).
        set_aside(Path(args.run_dir) / "results.jsonl")
        args.fresh = False
    starts = starting_points(parser, args)
    data = trec_data(args)
    results = {
        "settings": comparison_settings(data, args) | {"lab01_model": args.lab01_model},
        "majority_class_acc": {
            split: round(majority_class_accuracy(data, split), 4)
            for split in ("validation", "test")
        },
        "grids": {
            "full_rates": full_rate_grid(args.full_rates, args.top_rates),
            "top_rates": args.top_rates,
            "factors": args.factors,
            "strengths": args.strengths,
            "multitask_rates": args.multitask_rates,
            "lm_weights": args.lm_weights,
            "peft_rates": {m: list(PEFT_RATES[m]) for m in args.peft_methods},
            "adapter_sizes": args.adapter_sizes,
            "adapter_multipliers": args.adapter_multipliers,
            "feature_rates": args.feature_rates,
        },
        "studies": {name: {} for name in args.studies}
        | ({"multitask_tutorial": {}} if "multitask" in args.studies else {}),
        "layer_groups": {},
    }
    for start in starts:
        encoder, _ = start.load()
        # embeddings, each block, and the groups above the last block (one depth).
        results["layer_groups"][start.name] = encoder.config.num_layers + 2
        del encoder
        full_rate, rates_settled = None, True
        if "rates" in args.studies:
            variants = rate_variants(args.full_rates, args.top_rates, args.factors)
            outcome = study(variants, start, data, args, Reading(baseline=same_top_rate))
            results["studies"]["rates"][start.name] = outcome
            full_rate = next(
                row["learning_rate"]
                for row in outcome["rows"]
                if row["label"] == outcome["chosen"]["full"]
            )
            rates_settled = settled(outcome, args)
        if "anchors" in args.studies and rates_settled:
            rate = full_rate or 1e-4
            variants = anchor_variants(rate, start.objective is not None, args.strengths)
            outcome = study(variants, start, data, args)
            outcome["learning_rate"] = rate
            results["studies"]["anchors"][start.name] = outcome
        if "peft" in args.studies:
            variants = peft_variants(args.peft_methods)
            results["studies"]["peft"][start.name] = study(variants, start, data, args)
        if "adapters" in args.studies:
            outcome = adapters_study(start, data, args, study, settled)
            if outcome is not None:
                results["studies"]["adapters"][start.name] = outcome
        if "multitask" in args.studies and start.objective == "causal":
            by_size = {}
            for size in args.multitask_sizes:
                small = argparse.Namespace(**vars(args))
                small.train_examples = size
                steps_per_epoch = math.ceil(min(size, len(data["train"])) / args.batch_size)
                small.epochs = max(args.epochs, math.ceil(args.min_steps / steps_per_epoch))
                variants = multitask_variants(args.multitask_rates, args.lm_weights)
                outcome = study(variants, start, trec_data(small), small)
                outcome["epochs"] = small.epochs
                by_size[str(size)] = outcome
            results["studies"]["multitask"][start.name] = by_size
            # The tutorial's own comparison, at this call's labels and epochs.
            variants = multitask_tutorial_variants(args.epochs, args.multitask_rates)
            outcome = study(variants, start, data, args, Reading(family=label_family))
            results["studies"]["multitask_tutorial"][start.name] = outcome
    headline = {}
    for name, by_start in results["studies"].items():
        for start_name, outcome in by_start.items():
            outcomes = outcome.items() if name == "multitask" else [("", outcome)]
            for size, each in outcomes:
                rows = {row["label"]: row for row in each["rows"]}
                for method, label in each["chosen"].items():
                    row = rows[label]
                    key = f"{start_name}/{method}" + (f"@{size}" if size else "")
                    headline[key] = {
                        "chosen": label,
                        "val": round(row["val_mean"], 4),
                        "test": round(row["acc_mean"], 4),
                        "test_sd": None if row["acc_sd"] is None else round(row["acc_sd"], 4),
                    }
    results["chosen"] = headline
    seconds = time.perf_counter() - started
    print(f"{seconds:.0f} s this call", file=sys.stderr)
    if args.record:
        write_run_record(args.record, results, seconds)
    print(json.dumps({"chosen": headline, "majority_class_acc": results["majority_class_acc"]}))
    return results


if __name__ == "__main__":
    main()
