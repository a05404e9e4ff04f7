"""The records of `benchmarks/classification.py`: their section of docs/results.md and README
headline."""

from benchmarks.reports._common import markdown_table

STEMS = ("classification",)


def render(results):
    """Table of `benchmarks/classification.py`: kbert vs keras-hub fine-tuning MiniLM-L6."""
    rows = [
        [
            f"kbert ({results['kbert_dtype']}{', XLA' if results['kbert_jit'] else ''}, "
            f"{results['kbert_pooling']} pooling)",
            f"{results['kbert_acc']:.4f}",
            f"{results['kbert_examples_per_s']:.1f}",
        ]
    ]
    if "peer_acc" in results:
        rows.append(
            [
                "keras-hub BertTextClassifier (float32)",
                f"{results['peer_acc']:.4f}",
                f"{results['peer_examples_per_s']:.1f}",
            ]
        )
    return "\n".join(
        [
            f"MiniLM-L6 fine-tuned on {results['task']} ({results['train_examples']:,} training "
            f"examples × {results['epochs']} epochs, batch {results['batch_size']}, length "
            f"{results['sequence_length']}, peak rate {results['learning_rate']:g}), the same "
            "recipe on both sides; examples/s over the whole `fit`, tracing included.",
            "",
            markdown_table(["implementation", "test accuracy", "training examples/s"], rows),
        ]
    )


def headline(results):
    text = f"MiniLM-L6 on {results['task']}: kbert {results['kbert_acc']:.3f}"
    if "peer_acc" in results:
        text += (
            f" vs keras-hub {results['peer_acc']:.3f}, {results['speedup']:.2f}x its training speed"
        )
    return text
