"""The records of `labs/lab08_tfhub_squad.py`: their section of docs/results.md and README
headline."""

from benchmarks.reports._common import markdown_table
from kbert.metrics.seed_comparison import format_difference

STEMS = ("lab08_tfhub_squad",)

# What the lab's source claims: stated under the record's title, above what it found.
CLAIM = "the NAACL tutorial §5.B fine-tunes a BERT loaded from TF Hub for SQuAD inside Keras; the Hub-loaded encoder should give the numbers kbert's own encoder gives from the same weights, and fine-tune like it (EM and F1 with no difference, paired by seed)"


def _spread(row, metric):
    sd = row.get(f"{metric}_sd")
    return f"{row[metric]:.2f}" + ("" if sd is None else f" ± {sd:.2f}")


def render(results):
    """Table of lab08: SQuAD through the TF Hub path, and kbert's own encoder beside it (mean ±
    sd over seeds, and their seed-paired difference, where the record holds seeds)."""
    rows = [
        [
            "TF Hub BERT format, loaded into Keras 3 (`kbert.hub`)",
            _spread(results, "exact_match"),
            _spread(results, "f1"),
            f"{results['train_seconds']:,.0f}",
        ]
    ]
    own = results.get("kbert_encoder")
    if own:
        rows.append(
            [
                "kbert's own encoder, same checkpoint and recipe",
                _spread(own, "exact_match"),
                _spread(own, "f1"),
                f"{own['train_seconds']:,.0f}",
            ]
        )
    differences = results.get("differences") or {}
    if differences:
        rows.append(
            [
                "Hub − kbert, paired by seed",
                format_difference(differences["exact_match"], scale=1.0),
                format_difference(differences["f1"], scale=1.0),
                "",
            ]
        )
    difference = results.get("max_abs_difference")
    return "\n".join(
        [
            f"SQuAD v1.1 ({results['source']}): {results['train_questions']:,} training "
            f"questions ({results['train_windows']:,} windows), {results['eval_questions']:,} "
            f"held out; {results.get('seeds', 1)} seed(s). Hub preprocessing equals kbert's: {results['same_preprocessing']}; Hub "
            f"variables updated by `fit`: {results['hub_variables_updated']}"
            + (
                f"; encoders' outputs differ by at most {difference:.1e}"
                if difference is not None
                else ""
            )
            + f". Exported to `{results['export']}` with an `answer` signature on raw strings.",
            "",
            markdown_table(["encoder", "EM", "F1", "train s"], rows),
        ]
    )


def headline(results):
    text = (
        f"SQuAD through a TF Hub BERT in Keras 3 ({results['train_questions']:,} questions): "
        f"EM {results['exact_match']:.2f} / F1 {results['f1']:.2f}"
    )
    own = results.get("kbert_encoder")
    if own:
        text += f" vs {own['exact_match']:.2f} / {own['f1']:.2f} on kbert's own encoder"
    differences = results.get("differences") or {}
    if differences:
        text += f" (F1: {differences['f1']['verdict']})"
    return text
