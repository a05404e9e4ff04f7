"""The records of `benchmarks/anchor_strength.py`: their section of docs/results.md (no README
headline)."""

from benchmarks.reports._common import markdown_table

STEMS = ("anchor_strength",)


def render(results):
    """Table of `benchmarks/anchor_strength.py`: L2-SP's λ × clipping, with the weights' paths."""

    def number(value, form):
        return "—" if value is None else format(value, form)

    rows = [
        [
            "— (encoder frozen)" if row["strength"] is None else f"{row['strength']:g}",
            "none" if row["clipnorm"] is None else f"{row['clipnorm']:g}",
            f"{row['validation_accuracy']:.3f}",
            f"{row['test_accuracy']:.3f}",
            f"{row['final_loss']:.3f} ({row['final_penalty']:.3f})",
            " → ".join(f"{value:.1e}" for value in row["displacement_by_epoch"]),
            f"{row['step_rms_last_epoch']:.1e}",
            number(row["path_over_displacement"], ".1f"),
            number(row.get("head_displacement_rms"), ".1e"),
        ]
        for row in results["rows"]
    ]
    control = next((row for row in results["rows"] if row["strength"] is None), None)
    findings = []
    for row in results["rows"]:
        if (
            control is not None
            and row["strength"] is not None
            and abs(row["test_accuracy"] - control["test_accuracy"]) <= 0.02
        ):
            clip = "none" if row["clipnorm"] is None else f"{row['clipnorm']:g}"
            findings.append(
                f"- λ {row['strength']:g} (clip {clip}) scores as the encoder-frozen control "
                f"({row['test_accuracy']:.3f} against {control['test_accuracy']:.3f}, final "
                f"loss {row['final_loss']:.3f} against {control['final_loss']:.3f}): at this "
                f"λ only the head trains, at the rate chosen for the whole model "
                f"({results['learning_rate']:g})."
            )
    return "\n".join(
        [
            f"L2-SP on `{results['start']}`: TREC-6, {results['train_examples']:,} training "
            f"questions, {results['epochs']} epochs, batch {results['batch_size']}, peak rate "
            f"{results['learning_rate']:g}, seed {results['seed']}; validation "
            f"{results['validation_examples']}, test {results['test_examples']} (majority class "
            f"{results['test_majority']:.3f}). RMS(w − w₀) is over the encoder's anchored "
            "weights at the end of each epoch; the step is the RMS change of those weights per "
            "update, averaged over the last epoch; path ÷ displacement is the last epoch's "
            "summed steps over the final RMS(w − w₀) (large: the weights go back and forth); "
            "the head's RMS change is from its initial weights (it carries no anchor). The "
            "encoder-frozen row is the control: no anchor, the same rate and clipping.",
            "",
            markdown_table(
                [
                    "λ",
                    "clip",
                    "validation",
                    "test",
                    "final loss (penalty)",
                    "RMS(w − w₀) by epoch",
                    "RMS step",
                    "path ÷ displacement",
                    "head RMS change",
                ],
                rows,
            ),
            *([""] + findings if findings else []),
        ]
    )
