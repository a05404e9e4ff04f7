"""The records of `benchmarks/anchor_strength.py`: their section of docs/results.md (no README
headline)."""

from benchmarks.reports._common import markdown_table
from kbert.metrics.seed_comparison import format_difference

STEMS = ("anchor_strength",)

# A record made before the benchmark ran several seeds: a row within this of the control's test
# accuracy reads as the control (one run each: no spread to read it against).
ONE_SEED_MARGIN = 0.02


def _number(value, form):
    return "—" if value is None else format(value, form)


def _accuracy(row, name):
    spread = row.get(f"{name}_sd")
    return f"{row[name]:.3f}" + ("" if spread is None else f" ± {spread:.3f}")


def _clip(row):
    return "none" if row["clipnorm"] is None else f"{row['clipnorm']:g}"


def _table_row(row):
    return [
        "— (encoder frozen)" if row["strength"] is None else f"{row['strength']:g}",
        _clip(row),
        _accuracy(row, "validation_accuracy"),
        _accuracy(row, "test_accuracy"),
        format_difference(row.get("vs_frozen")),
        f"{row['final_loss']:.3f} ({row['final_penalty']:.3f})",
        " → ".join(f"{value:.1e}" for value in row["displacement_by_epoch"]),
        f"{row['step_rms_last_epoch']:.1e}",
        _number(row["path_over_displacement"], ".1f"),
        _number(row.get("head_displacement_rms"), ".1e"),
    ]


def _reads_as_control(row, control):
    """Whether an anchored row scores as the encoder-frozen control: its seed-paired difference
    is inside the spread, or (a one-seed record) its accuracy within `ONE_SEED_MARGIN`."""
    if "vs_frozen" in row:
        return row["vs_frozen"]["n"] > 1 and row["vs_frozen"]["verdict"] == "no difference"
    return abs(row["test_accuracy"] - control["test_accuracy"]) <= ONE_SEED_MARGIN


def _findings(results):
    rows = results["rows"]
    control = next((row for row in rows if row["strength"] is None), None)
    if control is None:
        return []
    findings = []
    for row in rows:
        if row["strength"] is None or not _reads_as_control(row, control):
            continue
        paired = (
            f", paired by seed {format_difference(row['vs_frozen'])} points"
            if "vs_frozen" in row
            else ""
        )
        findings.append(
            f"- λ {row['strength']:g} (clip {_clip(row)}) scores as the encoder-frozen control "
            f"({row['test_accuracy']:.3f} against {control['test_accuracy']:.3f}{paired}; final "
            f"loss {row['final_loss']:.3f} against {control['final_loss']:.3f}): at this "
            f"λ only the head trains, at the rate chosen for the whole model "
            f"({results['learning_rate']:g})."
        )
    return findings


def _runs(results):
    seeds = results.get("seeds", 1)
    if seeds == 1:
        return f"seed {results['seed']}"
    return f"{seeds} seeds from {results['seed']} (mean ± sd; the path measures are means)"


def render(results):
    """Table of `benchmarks/anchor_strength.py`: L2-SP's λ × clipping, with the weights' paths."""
    source = results.get("learning_rate_source")
    findings = _findings(results)
    return "\n".join(
        [
            f"L2-SP on `{results['start']}`: TREC-6, {results['train_examples']:,} training "
            f"questions, {results['epochs']} epochs, batch {results['batch_size']}, peak rate "
            f"{results['learning_rate']:g}" + (f" ({source})" if source else "") + ", "
            f"{_runs(results)}; validation "
            f"{results['validation_examples']}, test {results['test_examples']} (majority class "
            f"{results['test_majority']:.3f}). RMS(w − w₀) is over the encoder's anchored "
            "weights at the end of each epoch; the step is the RMS change of those weights per "
            "update, averaged over the last epoch; path ÷ displacement is the last epoch's "
            "summed steps over the final RMS(w − w₀) (large: the weights go back and forth); "
            "the head's RMS change is from its initial weights (it carries no anchor). The "
            "encoder-frozen row is the control: no anchor, the same rate and clipping"
            + (
                "; each anchored row's test difference to it is paired by seed, in points."
                if any("vs_frozen" in row for row in results["rows"])
                else "."
            ),
            "",
            markdown_table(
                [
                    "λ",
                    "clip",
                    "validation",
                    "test",
                    "vs frozen",
                    "final loss (penalty)",
                    "RMS(w − w₀) by epoch",
                    "RMS step",
                    "path ÷ displacement",
                    "head RMS change",
                ],
                [_table_row(row) for row in results["rows"]],
            ),
            *([""] + findings if findings else []),
        ]
    )
