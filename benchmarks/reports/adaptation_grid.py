"""The records of `benchmarks/adaptation_grid.py`: their section of docs/results.md and README
headline."""

from benchmarks.reports._common import markdown_table
from kbert.metrics.seed_comparison import format_difference

STEMS = ("adaptation_grid", "adaptation_grid_peft", "adaptation_grid_adapters")
# Parts of the grid's run at its defaults, split over runs by `--studies` and `--starts`: each in
# the README summary beside `adaptation_grid` itself.
SUMMARY_PARTS = ("adaptation_grid_peft", "adaptation_grid_minilm", "adaptation_grid_multitask")


def _setting(row, groups):
    """A grid row's setting in words; discriminative rows name their lowest group's rate."""
    options = row.get("options", {})
    if "factor" in options:
        bottom = row["learning_rate"] / options["factor"] ** (groups - 1)
        return f"top {row['learning_rate']:g}, factor {options['factor']:g} (lowest {bottom:.1e})"
    if "strength" in options:
        return f"λ {options['strength']:g}, lr {row['learning_rate']:g}"
    if "trainable" in options:
        return f"{options['trainable']} set, size {options['bottleneck_dim']}, lr {row['learning_rate']:g}"
    if "layers" in options:
        return f"layers {options['layers']}, lr {row['learning_rate']:g}"
    setting = f"lr {row['learning_rate']:g}"
    if "language_model_weight" in options:
        annealed = " → 0" if options.get("language_model_final_weight") == 0 else ""
        setting = f"LM {options['language_model_weight']:g}{annealed}, {setting}"
    if "epochs" in options:
        setting += f", {options['epochs']} ep."
    return setting


def _grid_rows(outcome, groups, prefix=()):
    """Table rows of a study's outcome: the chosen in bold, the source's own row named, and
    each row's paired difference (when the study pairs them) in a last column."""
    chosen = set(outcome["chosen"].values())
    paired = any("difference" in row for row in outcome["rows"])
    rows = []
    for row in outcome["rows"]:
        mark = "**" if row["label"] in chosen else ""
        spread = "" if row["acc_sd"] is None else f" ± {row['acc_sd']:.3f}"
        source = " (the tutorial's)" if row["label"] == outcome.get("source") else ""
        rows.append(
            [
                *prefix,
                row["method"],
                _setting(row, groups) + source,
                f"{mark}{row['val_mean']:.3f}{mark}",
                f"{mark}{row['acc_mean']:.3f}{spread}{mark}",
                f"{row['train_s']:.0f}",
                *([format_difference(row.get("difference"))] if paired else []),
            ]
        )
    return rows


# The settings a grid varies whose best may lie beyond the values tried, read off a row. (The
# discriminative factor is not among them: below 1 it would turn the decay upside down.)
_OPEN_ENDED = {
    "rate": lambda row: row["learning_rate"],
    "λ": lambda row: row.get("options", {}).get("strength"),
    "LM weight": lambda row: row.get("options", {}).get("language_model_weight"),
}


def _edge_line(outcome):
    """Which chosen settings sit at the lowest or highest value their grid tried ("" when none
    does): there, the best setting may lie beyond the grid."""
    rows = {row["label"]: row for row in outcome["rows"]}
    edges = []
    for method, label in outcome["chosen"].items():
        chosen = rows[label]
        group = [
            row
            for row in outcome["rows"]
            if row["method"] == chosen["method"]
            and row.get("options", {}).get("epochs") == chosen.get("options", {}).get("epochs")
        ]
        for name, value_of in _OPEN_ENDED.items():
            values = {value_of(row) for row in group} - {None}
            value = value_of(chosen)
            if len(values) > 1 and value in (min(values), max(values)):
                end = "lowest" if value == min(values) else "highest"
                edges.append(f"{method}'s {name} {value:g} (the {end} tried)")
    if not edges:
        return ""
    return "At the edge of the grid (the best setting may lie beyond it): " + "; ".join(edges) + "."


def _anchor_limit_line(anchors, rates):
    """Where validation chose an anchor's weakest λ, what lies below it: λ 0 is full
    fine-tuning at the same rate, a row of the rates study ("" when no choice is there, or the
    rates study has no full row at the anchors' rate)."""
    strength = _OPEN_ENDED["λ"]
    lowest = min((strength(row) for row in anchors["rows"]), default=None)
    rows = {row["label"]: row for row in anchors["rows"]}
    weakest = [
        method
        for method, label in anchors["chosen"].items()
        if lowest is not None and strength(rows[label]) == lowest
    ]
    full = next(
        (
            row
            for row in (rates or {}).get("rows", [])
            if row["method"] == "full" and row["learning_rate"] == anchors.get("learning_rate")
        ),
        None,
    )
    if not weakest or full is None:
        return ""
    spread = "" if full["acc_sd"] is None else f" ± {full['acc_sd']:.3f}"
    return (
        f"Below λ {lowest:g}, where validation chose {' and '.join(weakest)}, lies λ 0: full "
        f"fine-tuning at the same rate, the rates study's '{full['label']}' (validation "
        f"{full['val_mean']:.3f}, test {full['acc_mean']:.3f}{spread})."
    )


def _by_top_rate(outcome):
    """The rates study with each discriminative row under full fine-tuning at its top rate."""
    rows = sorted(outcome["rows"], key=lambda row: (row["learning_rate"], row["method"] != "full"))
    return {**outcome, "rows": rows}


def render(results):
    """Tables of `benchmarks/adaptation_grid.py`: every grid, the chosen settings in bold."""
    settings, majority = results["settings"], results["majority_class_acc"]
    header = ["method", "setting", "validation", "test (mean ± sd)", "train s"]
    parts = [
        f"TREC-6, {settings['train_examples']:,} training questions (the multitask study: "
        f"fewer), {settings['epochs']} epochs, batch {settings['batch_size']}, "
        f"{settings['seeds']} seeds; each method's setting (bold) chosen on the "
        f"{settings['validation_examples']} held-out validation questions, test = TREC_10. "
        f"Majority class: validation {majority['validation']:.3f}, test {majority['test']:.3f}.",
    ]
    titles = {
        "rates": "Full fine-tuning's rate against discriminative rates (top rate × factor; "
        "the lowest layer group's peak rate in brackets)",
        "anchors": "L2-SP and EWC λ, at full fine-tuning's chosen rate",
        "multitask": "Classification 1.0 + causal LM (weight, annealing to 0 or none, and rate "
        "chosen on validation) against full fine-tuning at the same epochs, few labels"
        if "lm_weights" in results.get("grids", {})
        else "Classification 1.0 + causal-LM 0.5 against full fine-tuning, few labels",
        "multitask_tutorial": "The tutorial's comparison: classification 1.0 + LM 0.5 for "
        "twice the epochs, against full fine-tuning at the record's epochs and at twice as many",
        "peft": "LoRA, prefix and prompt tuning, each at its own rates",
        "adapters": "Adapters (each trainable set at multiples of full fine-tuning's chosen rate) "
        "and feature extraction, against full fine-tuning at its chosen rate",
    }
    differences = {
        "rates": "Δ to full at the same top rate, paired (points)",
        "adapters": "Δ to the chosen full fine-tuning, paired (points)",
    }
    runs = [
        row
        for by_start in results["studies"].values()
        for outcome in by_start.values()
        for each in (outcome.values() if "rows" not in outcome else [outcome])
        if isinstance(each, dict) and "rows" in each
        for row in each["rows"]
    ]
    # The adapters study's full fine-tuning grid (its chosen row is in its table already).
    runs += [
        row
        for outcome in results["studies"].get("adapters", {}).values()
        for row in outcome["full_rates"]["rows"]
        if row["label"] != outcome["baseline"]
    ]
    total = sum(row["train_s"] * row["seeds"] for row in runs)
    parts += [
        "",
        f"Training time summed over the {sum(row['seeds'] for row in runs)} runs: "
        f"{total / 60:,.0f} min (the wall time above counts only the recording call; rows "
        "resumed from an earlier, interrupted call are reused, not rerun).",
    ]
    for name, by_start in results["studies"].items():
        for start, outcome in by_start.items():
            groups = results["layer_groups"][start]
            if name == "multitask":
                rows = [
                    row
                    for size, each in outcome.items()
                    for row in _grid_rows(each, groups, (f"{int(size):,} ({each['epochs']} ep.)",))
                ]
                table = markdown_table(["labels"] + header, rows)
                edges = [
                    f"{int(size):,} labels: {line[0].lower()}{line[1:]}"
                    for size, each in outcome.items()
                    if (line := _edge_line(each))
                ]
            else:
                shown = _by_top_rate(outcome) if name == "rates" else outcome
                rows = _grid_rows(shown, groups)
                paired = [differences[name]] if rows and len(rows[0]) > len(header) else []
                table = markdown_table(header + paired, rows)
                edges = [line] if (line := _edge_line(outcome)) else []
                if name == "anchors":
                    rates = results["studies"].get("rates", {}).get(start)
                    edges += [line] if (line := _anchor_limit_line(outcome, rates)) else []
            if name == "adapters":
                full = markdown_table(header, _grid_rows(outcome["full_rates"], groups))
                parts += ["", f"**Full fine-tuning's rates, chosen first: {start}**", "", full]
            parts += ["", f"**{titles[name]}: {start}** ({groups} layer groups)", "", table]
            parts += [text for line in edges for text in ("", line)]
    return "\n".join(parts)


PEFT_METHODS = ("lora", "prefix_tuning", "prompt_tuning")


def headline(results):
    """The chosen full, discriminative and PEFT settings; a multitask-only record's instead."""
    chosen = results["chosen"]
    shown = [
        key
        for key in chosen
        if key.split("/", 1)[1]
        in ("discriminative_lr", "full", "feature_extraction", *PEFT_METHODS)
        or key.split("/", 1)[1].startswith("adapters")
    ]
    parts = []
    for key in shown:
        row = chosen[key]
        start, family = key.split("/", 1)
        setting = row["chosen"].removeprefix(f"{family} ")  # "lr=…", "d=32 ×10 lr=…"
        parts.append(f"{start} {family} {row['test']:.3f} ({setting})")
    if not shown:  # a multitask study alone: each labelled size's two methods side by side
        for key, row in chosen.items():
            start, method_at_size = key.split("/", 1)
            method, _, size = method_at_size.partition("@")
            full = chosen.get(f"{start}/full@{size}")
            if method == "multitask" and full:
                parts.append(
                    f"{start}, {size} labels: multitask {row['test']:.3f} vs full {full['test']:.3f}"
                )
    return "TREC-6 test, chosen on validation: " + "; ".join(parts)
