"""The anchor strength λ of L2-SP and EWC that the grids chose on validation, read from their
records.

`benchmarks/adaptation_grid.py --studies rates,anchors` sweeps λ for L2-SP and EWC at full
fine-tuning's chosen rate and records each start's choice (`studies.anchors.<start>.chosen`, in
`adaptation_grid.json` for lab01 and `adaptation_grid_minilm.json` for MiniLM-L6). lab05 runs
the source's λ for every start and, beside it, each start's own choice. The reader sits beside
`kbert.train.chosen_on_validation` (same records, same `Chosen`) rather than in it because the
grids import that module: a change there would make their records stale.
"""

from kbert.train.chosen_on_validation import RATES_RECORDS, Chosen, read_record

ANCHORED_METHODS = ("l2_sp", "ewc")


def chosen_strength(start, method, fallback, results_dir=None):
    """λ validation chose for `method` on `start` in the grid's anchors study.

    Args:
        start: str. A start's name (`lab01`, `minilm_l6`).
        method: str. `"l2_sp"` or `"ewc"`.
        fallback: float. Used where the record holds no choice (the source's λ).
        results_dir: path, default `chosen_on_validation.records_dir()`.

    Returns:
        `Chosen`: `value` has `strength`; `source` names the record, its commit, the chosen
        row and the rate the study trained at (the λ was chosen at that rate).

    Raises:
        ValueError: `method` is not an anchored method, or the chosen row names no strength.
    """
    if method not in ANCHORED_METHODS:
        raise ValueError(f"method must be one of {ANCHORED_METHODS}; received {method!r}")
    name = RATES_RECORDS.get(start, "adaptation_grid")
    record = (read_record(name, results_dir) if start in RATES_RECORDS else None) or {}
    studies = (record.get("results") or {}).get("studies") or {}
    outcome = (studies.get("anchors") or {}).get(start) or {}
    label = (outcome.get("chosen") or {}).get(method)
    if label is None:
        why = "not recorded" if not outcome else f"its anchors study has no {method} row"
        source = f"no {method} choice for {start!r} in {name}.json ({why})"
        return Chosen({"strength": fallback}, source, False)
    row = next(row for row in outcome["rows"] if row["label"] == label)
    strength = (row.get("options") or {}).get("strength")
    if strength is None:
        raise ValueError(f"{name}.json: the chosen row {label!r} names no 'strength' option")
    commit = (record.get("commit") or "commit unknown")[:10]
    rate = outcome.get("learning_rate", row.get("learning_rate"))
    at_rate = "" if rate is None else f" (chosen at peak rate {rate:g})"
    return Chosen({"strength": strength}, f"{name}.json ({commit}): '{label}'{at_rate}", True)
