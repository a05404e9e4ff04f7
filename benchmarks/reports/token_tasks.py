"""The records of `benchmarks/token_tasks.py`: their section of docs/results.md and README
headline."""

from benchmarks.reports._common import markdown_table

STEMS = ("token_tasks",)


def render(results):
    """Table of `benchmarks/token_tasks.py`: kbert vs transformers on CoNLL-2003 NER and SQuAD."""
    versions = results.get("versions", {})
    peer = "transformers" + (
        f" {versions['transformers']} (PyTorch {versions['torch']})" if "torch" in versions else ""
    )

    def cells(task, *metrics, form):
        """kbert's and the peer's values of `metrics` (joined by " / "), "—" where absent."""
        return [
            " / ".join(
                format(results[key], form) if key in results else "—"
                for key in (f"{side}_{task}_{metric}" for metric in metrics)
            )
            for side in ("kbert", "peer")
        ]

    rows, lines = [], []
    for task, score_name, scores, unit in (
        ("ner", "test entity F1", ("f1",), "sentences"),
        ("qa", "EM / F1", ("em", "f1"), "windows"),
    ):
        if f"{task}_epochs" not in results:
            continue
        speeds = [results.get(f"{side}_{task}_train_examples_per_s") for side in ("kbert", "peer")]
        ratio = "—" if None in speeds else f"{speeds[0] / speeds[1]:.2f}×"
        rows += [
            [task.upper(), score_name, *cells(task, *scores, form=".2f"), ""],
            ["", f"training {unit}/s", *cells(task, "train_examples_per_s", form=".1f"), ratio],
        ]
    if "ner_epochs" in results:
        lines.append(
            f"- NER: CoNLL-2003, BIO softmax on each word's first subword, "
            f"{results['ner_train_sentences']:,} training sentences × {results['ner_epochs']} "
            f"epochs at {results['ner_lr']:g}; test on {results['ner_test_sentences']:,} sentences."
        )
    if "qa_epochs" in results:
        lines.append(
            f"- QA: SQuAD v1.1, {results['qa_source']}: {results['qa_train_questions']:,} "
            f"training questions × {results['qa_epochs']} epoch"
            f"{'s' if results['qa_epochs'] != 1 else ''} at {results['qa_lr']:g}; "
            f"evaluated on {results['qa_eval_questions']:,} questions (official normalisation)."
        )
    measured_peer = any(key.startswith("peer_") for key in results)
    kbert = ", ".join(
        f"{name} {versions[name]}" for name in ("tensorflow", "keras") if name in versions
    )
    return "\n".join(
        [
            f"{results['checkpoint']} fine-tuned by kbert ({kbert or 'TensorFlow'})"
            + (f" and by {peer} in one process" if measured_peer else " (the peer was not run)")
            + f", the same recipe (AdamW, 10% warmup then linear decay, clipping 1.0, "
            f"batch {results['batch_size']}, length-grouped batches); throughput over the whole "
            "training run, tracing included. One seed per side.",
            "",
            *lines,
            "",
            markdown_table(["task", "metric", "kbert", peer, "kbert / peer"], rows),
        ]
    )


def headline(results):
    parts = []
    for task in ("ner", "qa"):
        if f"kbert_{task}_f1" not in results:
            continue
        text = f"{task.upper()} F1 kbert {results[f'kbert_{task}_f1']:.2f}"
        if f"peer_{task}_f1" in results:
            speed = (
                results[f"kbert_{task}_train_examples_per_s"]
                / results[f"peer_{task}_train_examples_per_s"]
            )
            text += f" vs transformers {results[f'peer_{task}_f1']:.2f} ({speed:.2f}× its speed)"
        parts.append(text)
    return "; ".join(parts)
