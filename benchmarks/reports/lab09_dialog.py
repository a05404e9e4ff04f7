"""The records of `labs/lab09_dialog.py`: their section of docs/results.md and README headline."""

import math

from benchmarks.reports._common import chosen_rates, markdown_table
from kbert.metrics.seed_comparison import format_difference

STEMS = ("lab09_dialog",)

# What the lab's source claims: stated under the record's title, above what it found.
CLAIM = "TransferTransfo (Wolf et al. 2019): a pretrained transformer LM fine-tuned on PERSONA-CHAT (LM + next-utterance classification) beats the same model from random weights, in held-out perplexity and Hits@1"


def _spread(mean, sd, digits):
    return f"{mean:,.{digits}f}" + ("" if sd is None else f" ± {sd:,.{digits}f}")


def _rates(results):
    """ "lr 0.0003" (one rate for both starts, records before the choice), or each start's rate
    chosen on validation perplexity with the rates its first seed tried."""
    choices = results.get("rate_choices")
    if not choices:
        return f"lr {results['settings']['learning_rate']:g}"
    rates = chosen_rates(choices, str, lambda row: f"{row['validation_perplexity']:,.1f}")
    return (
        f"peak rate chosen per start on the validation perplexity of "
        f"{results['validation_replies']:,} replies: " + rates
    )


def render(results):
    """Tables of `labs/lab09_dialog.py`: held-out perplexity and Hits@1 per start (mean ± sd
    over seeds, with the first seed's before fine-tuning), the seed-paired difference of the
    starts, samples. Records of one seed (before 3 seeds were the default) render without sd."""
    settings = results["settings"]
    seeds = settings.get("seeds", 1)
    rows = [
        [
            name,
            f"{r['before']['perplexity']:,.1f} → "
            + _spread(r["perplexity"], r.get("perplexity_sd"), 1),
            f"{r['before']['hits_at_1']:.3f} → "
            + _spread(r["hits_at_1"], r.get("hits_at_1_sd"), 3),
            f"{r['train_choice_accuracy']:.3f}",
        ]
        for name, r in results["results"].items()
    ]
    parts = [
        f"PERSONA-CHAT (ConvAI2 validation split by persona): {results['train_replies']:,} "
        f"training replies, {results['held_out_replies']:,} held-out replies of unseen personas; "
        f"{settings['epochs']} epochs, batch {settings['batch_size']}, {_rates(results)}, "
        f"{settings['sequence_length']} tokens, history "
        f"{settings['max_history']}; start `{settings['lab01_model']}`; {seeds} seed(s). Hits@1 "
        f"among {results['candidates']} candidates (chance {1 / results['candidates']:.3f}); "
        "before fine-tuning (first seed) → after (mean ± sd over seeds):",
        "",
        markdown_table(["start", "held-out perplexity", "Hits@1", "train choice accuracy"], rows),
    ]
    differences = results.get("differences") or {}
    if differences:
        ratio = math.exp(differences["log_perplexity_reduction"]["mean"])
        parts += [
            "",
            "Pretrained − random, paired by seed: Hits@1 "
            f"{format_difference(differences['hits_at_1'])}; held-out perplexity divided by "
            f"{ratio:.2f} (log-perplexity reduction "
            f"{format_difference(differences['log_perplexity_reduction'], scale=1.0)}).",
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
    differences = results.get("differences") or {}
    verdict = (
        f" (Hits@1 {differences['hits_at_1']['verdict']}, perplexity "
        f"{differences['log_perplexity_reduction']['verdict']}, over "
        f"{results['settings']['seeds']} seeds)"
        if differences
        else ""
    )
    return f"TransferTransfo on PERSONA-CHAT, held-out personas: {cells}{verdict}"
