"""The flags every seeded MiniLM-L6 lab shares (its rate, dtype, seeds, data, run folder,
record), and how such a lab ends (`finish_lab`).

Labs 21 and 23–25 fine-tune MiniLM-L6 several times per row and compare rows seed by seed;
each reads the same settings the same way, so a student meets one set of flags across them.
Labs 12, 20 and 22 take only the rate (`add_chosen_rate_argument`).
"""

import json
from pathlib import Path

from kbert.arguments import comma_separated
from kbert.files import atomic_write_text
from kbert.run_records import add_record_argument, record_if_requested
from kbert.train.adaptation_comparison import START_LEARNING_RATES
from kbert.train.chosen_on_validation import chosen_rates
from kbert.train.precision import DTYPES
from kbert.train.rate_on_validation import rates_around


def add_chosen_rate_argument(parser, method="full", what="peak rate"):
    """Adds `--learning-rate`, defaulting to `method`'s rate that `benchmarks/adaptation_grid.py`
    chose on validation for MiniLM-L6, read from its record
    (`kbert.train.chosen_on_validation.chosen_rates`; full fine-tuning's for every method that
    trains all weights at one rate); `--help` names the record it came from, after `what`."""
    rates = chosen_rates("minilm_l6", START_LEARNING_RATES["minilm_l6"])
    parser.add_argument(
        "--learning-rate",
        type=float,
        default=rates.value[method],
        help=f"{what} (default: {rates.source})",
    )


def add_learning_rates_argument(parser, what="arm", default=None, default_help=None):
    """Adds `--learning-rates`: the peak rates each `what`'s first seed tries, validation
    choosing one (`kbert.train.rate_on_validation`). By default `--learning-rate` ÷ 3, itself
    and × 3 (`resolve_learning_rates` fills it after parsing); a lab without `--learning-rate`
    gives its own `default` list and says where it comes from (`default_help`)."""
    if default is None:
        default_help = "--learning-rate ÷ 3, itself and × 3"
    parser.add_argument(
        "--learning-rates",
        type=comma_separated(float, minimum=0, strictly_greater=True),
        default=default,
        help=f"peak rates each {what}'s first seed tries, validation choosing one per {what} "
        f"(default: {default_help}; one rate: no choice)",
    )


def resolve_learning_rates(parser, args):
    """`args.learning_rates` as the run uses them: the given list, or `rates_around` the
    (checked) `args.learning_rate`; a parser error when a rate repeats."""
    if args.learning_rates is None:
        args.learning_rates = rates_around(args.learning_rate)
    if len(set(args.learning_rates)) != len(args.learning_rates):
        parser.error(f"--learning-rates must not repeat a rate; received {args.learning_rates}")


def add_lab_run_arguments(
    parser, run_dir, method="full", seeds_help="runs per row", seed_help="the data's seed"
):
    """Adds `--learning-rate`, `--dtype`, `--seeds`, `--seed`, `--data-dir`, `--run-dir`,
    `--verbose` and `--record` to `parser`.

    The rate's default is the one `benchmarks/adaptation_grid.py` chose on validation for
    MiniLM-L6, read from its record (`kbert.train.chosen_on_validation.chosen_rates`; `method`'s
    rate, which is full fine-tuning's for every method that trains all weights at one rate);
    `--help` names the record it came from.

    Args:
        parser: `argparse.ArgumentParser`.
        run_dir: str. The default `--run-dir`.
        method: str, default "full". A key of `START_LEARNING_RATES["minilm_l6"]`.
        seeds_help: str. What one seed runs.
        seed_help: str. What `--seed` seeds.
    """
    add_chosen_rate_argument(parser, method)
    parser.add_argument(
        "--dtype",
        default="auto",
        choices=DTYPES,
        help="auto: mixed_bfloat16 where the CPU/GPU computes bfloat16 and it trains faster here "
        "(timed once per machine), else float32",
    )
    parser.add_argument("--seeds", type=int, default=3, help=seeds_help)
    parser.add_argument("--seed", type=int, default=0, help=f"{seed_help}, first run's seed")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--run-dir", default=run_dir)
    parser.add_argument("--verbose", type=int, default=0)
    add_record_argument(parser)


def finish_lab(args, report):
    """Ends a lab run: `report` as `<--run-dir>/results.json`, as the record `--record` asks
    for, and as the last line of stdout (JSON)."""
    run_dir = Path(args.run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_text(run_dir / "results.json", json.dumps(report, indent=1))
    record_if_requested(args, report)
    print(json.dumps(report))
