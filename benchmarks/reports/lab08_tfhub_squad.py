"""The records of `labs/lab08_tfhub_squad.py`: their section of docs/results.md and README
headline."""

from benchmarks.reports._common import markdown_table

STEMS = ("lab08_tfhub_squad",)


def render(results):
    """Table of lab08: SQuAD through the TF Hub path, and kbert's own encoder beside it."""
    rows = [
        [
            "TF Hub BERT format, loaded into Keras 3 (`kbert.hub`)",
            f"{results['exact_match']:.2f}",
            f"{results['f1']:.2f}",
            f"{results['train_seconds']:,.0f}",
        ]
    ]
    own = results.get("kbert_encoder")
    if own:
        rows.append(
            [
                "kbert's own encoder, same checkpoint and recipe",
                f"{own['exact_match']:.2f}",
                f"{own['f1']:.2f}",
                f"{own['train_seconds']:,.0f}",
            ]
        )
    difference = results.get("max_abs_difference")
    return "\n".join(
        [
            f"SQuAD v1.1 ({results['source']}): {results['train_questions']:,} training "
            f"questions ({results['train_windows']:,} windows), {results['eval_questions']:,} "
            f"held out. Hub preprocessing equals kbert's: {results['same_preprocessing']}; Hub "
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
    return text
