"""Adaptation comparisons in which each starting point runs its own choices.

A lab compares methods on several starts (lab01's causal model, MiniLM-L6). Some of its rows
are settings chosen on validation, and the starts choose differently (lab01 an adapter size of
64 at 3e-3, MiniLM-L6 32 at 9e-3, say). `compare_and_print` runs every row on every start, so
each start would also run the other's choice: rows that answer no question the lab asks,
cost as much as the lab's own, and invite reading one start's choice as the other's. Here the
rows every start shares and each start's own rows are run start by start, and the table is
the one `compare_and_print` prints and records.

    own, sources = own_choices("adapters", recipes.adapters, starts, choose)
    rows = each_start(starts, [("full", recipes.full_fine_tuning, {})], own)
    compare_each_start(select_each_start(parser, args, rows), starts, data, args)
"""

from kbert.run_records import record_if_requested
from kbert.train.adaptation_comparison import (
    comparison_settings,
    print_comparison,
    run_comparison,
    selected_variants,
)
from kbert.train.chosen_on_validation import chosen_variants


def own_choices(label, recipe, starts, choose, extra=None):
    """Each start's chosen row: `({start name: [(label, recipe, options)]}, {start name:
    source})`.

    The row is labelled `label` where the start's grid holds a choice, and `"label (fallback:
    name)"` where it does not (`chosen_variants` for that start alone), so a row never reads as
    chosen when it is not.
    """
    own, sources = {}, {}
    for start in starts:
        variants, source = chosen_variants(label, recipe, [start], choose, extra)
        own[start.name] = variants
        sources.update(source)
    return own, sources


def each_start(starts, shared, *owns):
    """`{start name: variants}`: `shared` (every start runs them), then each of `owns`
    (`own_choices`'s first items: `{start name: variants}`) in order."""
    rows = {start.name: list(shared) for start in starts}
    for own in owns:
        for name, variants in own.items():
            rows[name].extend(variants)
    return rows


def select_each_start(parser, args, by_start):
    """`by_start` cut to the rows `--methods` names (`selected_variants`), judged on every
    start's labels together: one start may have a row another lacks."""
    every = {variant[0]: variant for variants in by_start.values() for variant in variants}
    kept = {label for label, _, _ in selected_variants(parser, args, list(every.values()))}
    return {name: [v for v in variants if v[0] in kept] for name, variants in by_start.items()}


def compare_each_start(by_start, starts, data, args, baseline="full"):
    """`compare_and_print` with each start running its own rows, `by_start[start.name]`.

    Args:
        by_start: dict start name → list of `(label, recipe, options)` (`each_start`).
        starts: list of `StartingPoint`.
        data: dict of `Examples` (`trec_data`).
        args: the comparison's parsed flags (`comparison_parser`).
        baseline: str or dict, as `compare_and_print`'s.

    Returns:
        list of row dicts, every start's (resumed rows included).
    """
    rows = []
    for start in starts:
        rows.extend(run_comparison(by_start[start.name], [start], data, args))
    if getattr(args, "only_seed", None) is not None:
        return rows  # a child of `--process-per-seed`: its parent prints and records
    names = [start.name for start in starts]
    labels = list(dict.fromkeys(label for start in starts for label, _, _ in by_start[start.name]))
    rows = sorted(
        rows,
        key=lambda row: (
            names.index(row["start"]),
            labels.index(row["label"]),
            -1 if row["seed"] is None else row["seed"],
        ),
    )
    summaries = print_comparison(rows, data, args, baseline)
    if args.record:  # the table and its settings, as `compare_and_print` records them
        results = {
            "task": "trec",
            **comparison_settings(data, args),
            "starts": {start.name: start.source for start in starts},
            "rows": summaries,
        }
        record_if_requested(args, results)
    return rows


__all__ = ["compare_each_start", "each_start", "own_choices", "select_each_start"]
