"""The records of `labs/lab02_finetuning.py`: their section of docs/results.md and README
headline."""

from benchmarks.reports._common import markdown_table
from kbert.metrics.seed_comparison import format_difference, mean_sd

STEMS = ("lab02_finetuning",)
PARTS = {"i": "lab01's causal model + [CLF] token", "ii": "{model}, a real pretrained BERT"}


def _parts(results):
    """`part → row`, whether the record is at several seeds or (older records) one."""
    return {part: results[part] for part in PARTS if part in results}


def _spread(row, key, digits=3):
    value = row.get(key)
    if value is None:
        return "–"
    sd = row.get(f"{key}_sd")
    seeds = f" (n={len(row['runs'])})" if "runs" in row else " (n=1)"
    return f"{value:.{digits}f}" + ("" if sd is None else f" ± {sd:.{digits}f}") + seeds


def _final_validation(row):
    if "final_val_accuracy" in row:
        return _spread(row, "final_val_accuracy")
    return f"{row['val_accuracy_per_epoch'][-1]:.3f} (n=1)"


def _settings(results):
    """`(part, row, note)` for every setting the record ran: each part's rows by peak rate
    (the tutorial's first; "chosen" marks validation's pick), or the one row of older
    records."""
    if "by_rate" not in results:
        return [(part, row, "") for part, row in _parts(results).items()]
    chosen = _chosen_rows(results)
    settings = []
    for part, rows in results["by_rate"].items():
        for row in rows:
            notes = ["tutorial"] if row is rows[0] else []
            notes += ["chosen on validation"] if row is chosen[part] else []
            settings.append((part, row, ", ".join(notes)))
    return settings


def _choice_lines(results):
    """Each part's chosen rate against the tutorial's, and the real checkpoint's lead at the
    chosen rates ([] for records without a rate choice)."""
    if "chosen" not in results:
        return []
    lines = []
    for part, chosen in results["chosen"].items():
        model = "lab01's model" if part == "i" else results[part].get("model", "minilm_l6")
        edge = (
            " (at the edge of the rates tried: the best rate may lie beyond it)"
            if chosen["at_edge"]
            else ""
        )
        tutorial = results["by_rate"][part][0]["learning_rate"]
        if chosen["learning_rate"] == tutorial:
            lines += ["", f"({part}) {model}: validation chose the tutorial's rate{edge}."]
            continue
        lines += [
            "",
            f"({part}) {model}: validation chose peak rate {chosen['learning_rate']:g}{edge}; "
            f"test accuracy against the tutorial's {tutorial:g}, paired by seed (points): "
            f"{format_difference(chosen['difference_to_tutorial'])}.",
        ]
    if "difference_chosen" in results:
        lines += [
            "",
            f"{results['ii'].get('model', 'minilm_l6')} − lab01's model at each part's chosen "
            f"rate, paired by seed (points): {format_difference(results['difference_chosen'])}.",
        ]
    return lines


def render(results):
    """Each setting's validation and test scores over seeds, the rate chosen on validation,
    and the real checkpoint's lead."""
    rows = [
        [
            f"({part}) {PARTS[part].format(model=row.get('model', 'minilm_l6'))}",
            f"{row['pooling']} pooling",
            f"{row.get('learning_rate', 6.5e-5):g}" + (f" ({note})" if note else ""),
            f"{row['parameters'] / 1e6:.1f}M",
            _final_validation(row),
            _spread(row, "test_accuracy"),
            _spread(row, "test_macro_f1"),
            f"{row['train_s']:,.0f}",
        ]
        for part, row, note in _settings(results)
    ]
    lines = [
        "TREC-6 with the tutorial's fine-tuning settings (rate 6.5e-5 after 10 warmup steps, "
        "linear decay, 3 epochs, batch 32), then at the peak rate validation chooses for each "
        "part (the best mean final validation accuracy), all else unchanged; validation "
        "accuracy after the last epoch, test accuracy and macro-F1, mean ± sd over seeds.",
        "",
        markdown_table(
            [
                "part",
                "read by",
                "peak rate",
                "parameters",
                "final validation accuracy",
                "test accuracy",
                "test macro-F1",
                "train s (all seeds)",
            ],
            rows,
        ),
    ]
    if "majority_accuracy" in results:
        lines += ["", f"Majority class on test: {results['majority_accuracy']:.3f}."]
    if "difference" in results:
        lines += [
            "",
            f"{results['ii'].get('model', 'minilm_l6')} − lab01's model at the tutorial's rate, "
            "test accuracy paired by seed (points): "
            f"{format_difference(results['difference'])}.",
        ]
    lines += _choice_lines(results)
    claim = first_epoch_line(results)
    if claim:
        lines += ["", claim]
    return "\n".join(lines)


def first_epoch_line(results):
    """The tutorial's claim read from the record: each part's validation accuracy after the
    first epoch, mean ± sd over its runs ("" for a record without per-seed runs)."""
    findings = []
    for part, row in _parts(results).items():
        if "runs" not in row:
            return ""
        mean, sd = mean_sd([run["val_accuracy_per_epoch"][0] for run in row["runs"]])
        spread = "" if sd is None else f" ± {sd:.3f}"
        model = "lab01's model" if part == "i" else row.get("model", "minilm_l6")
        findings.append(f"({part}) {model} {mean:.3f}{spread}")
    return (
        "What the tutorial claims (hands-on #2, its 50M-parameter model pretrained on "
        "WikiText-103): “after one epoch we already have > 90% accuracy” on TREC-6. What this "
        f"record shows, validation accuracy after the first epoch: {'; '.join(findings)}."
    )


def _chosen_rows(results):
    """`part → the row at the rate validation chose` ({} for records without a choice)."""
    return {
        part: next(
            row
            for row in results["by_rate"][part]
            if row["learning_rate"] == chosen["learning_rate"]
        )
        for part, chosen in results.get("chosen", {}).items()
    }


def headline(results):
    parts = _parts(results)
    text = "TREC-6 test accuracy at the tutorial's rate, " + ", ".join(
        f"{'lab01 causal' if part == 'i' else row.get('model', 'minilm_l6')} "
        f"{_spread(row, 'test_accuracy')}"
        for part, row in parts.items()
    )
    if "difference" in results:
        text += (
            f"; {results['ii'].get('model', 'minilm_l6')} "
            f"{format_difference(results['difference'], digits=1)} points"
        )
    chosen = _chosen_rows(results)
    if chosen:
        text += "; at the rates chosen on validation, " + ", ".join(
            f"{'lab01 causal' if part == 'i' else row.get('model', 'minilm_l6')} "
            f"{_spread(row, 'test_accuracy')} (rate {row['learning_rate']:g})"
            for part, row in chosen.items()
        )
    return text
