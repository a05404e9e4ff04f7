"""The adapters study of `benchmarks/adaptation_grid.py`, and the equal-top-rate pairing of its
rates study: which variants run, how they are chosen on validation and what they are paired with.

The adapters study (`--studies adapters`) follows the NAACL 2019 tutorial's hands-on #3 and
Houlsby et al. (2019): full fine-tuning's rate grid first (the rates study's labels, so
`--studies rates,adapters` runs them once), chosen on validation; then adapters at multiples of
that chosen rate, for each trainable set (`adaptation_recipes.ADAPTER_TRAINABLE`): "tutorial"
(adapters + embeddings + head; its code freezes the LayerNorms) at each size × multiplier,
"houlsby" (adapters + LayerNorms + head) and "adapters_only" at the source's size 32 × each
multiplier; and feature
extraction read the start's best way (`StartingPoint.feature_layers`) at a
small rate grid. Each family's setting is chosen on validation, and every row carries its
seed-paired difference to the chosen full fine-tuning row. The source's own row (tutorial set,
size 32, 10× full's rate) is named in the outcome.
"""

import dataclasses

ADAPTER_SIZES = (32, 64)
ADAPTER_MULTIPLIERS = (3.0, 10.0, 30.0)
FEATURE_RATES = (1e-3, 5e-3, 2e-2)
# The tutorial's hands-on #3: the tutorial set, adapters of size 32, 10× the fine-tuning rate.
SOURCE_ADAPTERS = ("tutorial", 32, 10.0)


@dataclasses.dataclass(frozen=True)
class Reading:
    """How a study's rows are read.

    Args:
        baseline: str, callable or None. Every row's seed-paired difference to this label
            (`summarize`'s `baseline`: a callable gives each row's own).
        family: callable or None. The rows one setting is chosen among
            (`choose_on_validation`'s; default each method).
    """

    baseline: object = None
    family: object = None


def full_rate_grid(full_rates, top_rates=()):
    """Full fine-tuning's rates: `full_rates` and every top rate of discriminative rates, so
    each discriminative row has full fine-tuning at its own top rate to be read against."""
    return sorted(set(full_rates) | set(top_rates))


def full_variants(rates):
    """Full fine-tuning at each rate, labelled as the rates study labels them."""
    return [(f"full lr={rate:g}", "full", {"learning_rate": rate}) for rate in rates]


def same_top_rate(row):
    """A discriminative row's baseline: full fine-tuning at its top rate (None for others)."""
    if row["method"] != "discriminative_lr":
        return None
    return f"full lr={row['learning_rate']:g}"


def adapter_label(trainable, size, multiplier, rate):
    return f"adapters {trainable} d={size} ×{multiplier:g} lr={rate:g}"


def adapter_variants(full_rate, sizes=ADAPTER_SIZES, multipliers=ADAPTER_MULTIPLIERS):
    """Adapters at each multiplier of `full_rate`: the tutorial set at each size, the Houlsby
    and adapters-only sets at the source's size 32 (the first of `sizes` without it)."""
    size = 32 if 32 in sizes else sizes[0]
    grid = [("tutorial", each) for each in sizes] + [
        (trainable, size) for trainable in ("houlsby", "adapters_only")
    ]
    return [
        (
            adapter_label(trainable, each, multiplier, multiplier * full_rate),
            "adapters",
            {
                "learning_rate": multiplier * full_rate,
                "bottleneck_dim": each,
                "trainable": trainable,
            },
        )
        for trainable, each in grid
        for multiplier in multipliers
    ]


def feature_variants(layers, rates=FEATURE_RATES):
    """Feature extraction read by `layers` (`FeatureClassifier`'s), at each rate of `rates`."""
    return [
        (
            f"feature_extraction {layers} lr={rate:g}",
            "feature_extraction",
            {"learning_rate": rate, "layers": layers},
        )
        for rate in rates
    ]


def adapter_family(row):
    """The family a row is chosen in: each adapters trainable set apart, else its method."""
    if row["method"] == "adapters":
        return " ".join(row["label"].split()[:2])  # "adapters tutorial"
    return row["method"]


def source_label(full_rate, sizes, multipliers):
    """The label of the tutorial's own setting, or None when the grids leave it out."""
    trainable, size, multiplier = SOURCE_ADAPTERS
    if size not in sizes or multiplier not in multipliers:
        return None
    return adapter_label(trainable, size, multiplier, multiplier * full_rate)


def adapters_study(start, data, args, study, settled=None):
    """Runs the adapters study from `start`; returns its outcome for the record.

    Args:
        start: `StartingPoint`.
        data: TREC-6 splits (`trec_data`).
        args: the grid's arguments (`full_rates`, `top_rates`, `adapter_sizes`,
            `adapter_multipliers`, `feature_rates`).
        study: `benchmarks.adaptation_grid.study`: runs variants, summarizes and chooses.
        settled: callable (outcome, args) → bool, default None (always settled). Whether full
            fine-tuning's choice is final; the adapters, trained at multiples of its rate, wait
            until it is (`benchmarks.adaptation_grid.settled`).

    Returns:
        dict: `full_rates` (full fine-tuning's rate grid, its own outcome), `rows` and
        `chosen` (the chosen full row, adapters and feature extraction, each family's choice),
        `baseline` (the chosen full label every row is paired with), `source` (the tutorial's
        own row's label, or None), `full_rate` and `feature_layers`; None when full
        fine-tuning's choice is not settled yet.
    """
    grid = study(full_variants(full_rate_grid(args.full_rates, args.top_rates)), start, data, args)
    if settled is not None and not settled(grid, args):
        return None
    baseline = grid["chosen"]["full"]
    rate = next(row["learning_rate"] for row in grid["rows"] if row["label"] == baseline)
    layers = start.feature_layers
    variants = [
        (baseline, "full", {"learning_rate": rate}),
        *adapter_variants(rate, args.adapter_sizes, args.adapter_multipliers),
        *feature_variants(layers, args.feature_rates),
    ]
    outcome = study(variants, start, data, args, Reading(baseline, adapter_family))
    return {
        "full_rates": grid,
        **outcome,
        "baseline": baseline,
        "source": source_label(rate, args.adapter_sizes, args.adapter_multipliers),
        "full_rate": rate,
        "feature_layers": layers,
    }
