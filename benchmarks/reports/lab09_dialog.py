"""The records of `labs/lab09_dialog.py`: their section of docs/results.md and README headline."""

from benchmarks.reports._common import markdown_table

STEMS = ("lab09_dialog",)


def render(results):
    """Tables of `labs/lab09_dialog.py`: held-out perplexity and Hits@1 per start, samples."""
    settings = results["settings"]
    rows = [
        [
            name,
            f"{r['before']['perplexity']:,.1f} → {r['perplexity']:,.1f}",
            f"{r['before']['hits_at_1']:.3f} → {r['hits_at_1']:.3f}",
            f"{r['train_choice_accuracy']:.3f}",
        ]
        for name, r in results["results"].items()
    ]
    parts = [
        f"PERSONA-CHAT (ConvAI2 validation split by persona): {results['train_replies']:,} "
        f"training replies, {results['held_out_replies']:,} held-out replies of unseen personas; "
        f"{settings['epochs']} epochs, batch {settings['batch_size']}, lr "
        f"{settings['learning_rate']:g}, {settings['sequence_length']} tokens, history "
        f"{settings['max_history']}; start `{settings['lab01_model']}`. Hits@1 among "
        f"{results['candidates']} candidates (chance {1 / results['candidates']:.3f}); "
        "before → after fine-tuning:",
        "",
        markdown_table(["start", "held-out perplexity", "Hits@1", "train choice accuracy"], rows),
    ]
    for sample in results.get("samples", []):
        replies = "; ".join(
            f"{name}: “{sample[name]}”" for name in results["results"] if name in sample
        )
        parts += [
            "",
            f"- persona “{' '.join(sample['persona'])}”, partner “{sample['partner']}” → {replies}",
        ]
    return "\n".join(parts)


def headline(results):
    cells = ", ".join(
        f"{name} Hits@1 {results['hits_at_1'][name]:.3f} / perplexity "
        f"{results['perplexity'][name]:,.1f}"
        for name in results["hits_at_1"]
    )
    return f"TransferTransfo on PERSONA-CHAT, held-out personas: {cells}"
