"""The records of `benchmarks/adaptation_grid.py`: their section of docs/results.md and README
headline."""

from benchmarks.reports._common import markdown_table

STEMS = ("adaptation_grid", "adaptation_grid_peft")
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
    setting = f"lr {row['learning_rate']:g}"
    if "language_model_weight" in options:
        annealed = " → 0" if options.get("language_model_final_weight") == 0 else ""
        setting = f"LM {options['language_model_weight']:g}{annealed}, {setting}"
    if "epochs" in options:
        setting += f", {options['epochs']} ep."
    return setting


def _grid_rows(outcome, groups, prefix=()):
    chosen = set(outcome["chosen"].values())
    rows = []
    for row in outcome["rows"]:
        mark = "**" if row["label"] in chosen else ""
        spread = "" if row["acc_sd"] is None else f" ± {row['acc_sd']:.3f}"
        rows.append(
            [
                *prefix,
                row["method"],
                _setting(row, groups),
                f"{mark}{row['val_mean']:.3f}{mark}",
                f"{mark}{row['acc_mean']:.3f}{spread}{mark}",
                f"{row['train_s']:.0f}",
            ]
        )
    return rows


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
    }
    runs = [
        row
        for by_start in results["studies"].values()
        for outcome in by_start.values()
        for each in (outcome.values() if "rows" not in outcome else [outcome])
        if isinstance(each, dict) and "rows" in each
        for row in each["rows"]
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
            else:
                table = markdown_table(header, _grid_rows(outcome, groups))
            parts += ["", f"**{titles[name]}: {start}** ({groups} layer groups)", "", table]
    return "\n".join(parts)


PEFT_METHODS = ("lora", "prefix_tuning", "prompt_tuning")


def headline(results):
    """The chosen full, discriminative and PEFT settings; a multitask-only record's instead."""
    chosen = results["chosen"]
    shown = [
        key
        for key in chosen
        if key.split("/", 1)[1] in ("discriminative_lr", "full", *PEFT_METHODS)
    ]
    parts = []
    for key in shown:
        row = chosen[key]
        start, method = key.split("/", 1)
        parts.append(
            f"{start} {method} {row['test']:.3f} ({row['chosen'][row['chosen'].find('lr=') :]})"
        )
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
