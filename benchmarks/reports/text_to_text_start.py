"""The records of `benchmarks/text_to_text_start.py`: their section of docs/results.md and README
headline."""

from benchmarks.reports._common import markdown_table

STEMS = ("text_to_text_start",)


def _start_cell(scores):
    return (
        f"{scores['validation_accuracy']:.3f} (top label {scores['most_generated_share']:.0%}, "
        f"source {scores['label_source_gain_nats']:+.2f})"
    )


def render(results):
    """Tables of `benchmarks/text_to_text_start.py`: span corruption and TREC-6 per checkpoint."""
    rates = [str(rate) for rate in results["rates"]]
    span_rows, trec_rows = [], []
    for step, row in results["checkpoints"].items():
        span = row["span_corruption"]
        span_rows.append(
            [
                step,
                f"{span['format_token_accuracy']:.3f}",
                f"{span['content_token_accuracy']:.3f}",
                f"{span['unigram_content_accuracy']:.3f}",
                f"{span['content_loss']:.3f}",
                f"{span['content_loss_other_sources']:.3f}",
                f"{span['source_gain_nats']:+.3f}",
            ]
        )
        trec_rows.append([step] + [_start_cell(row["trec"][rate]) for rate in rates])
    for step, row in results.get("decoder_reset", {}).items():
        trec_rows.append(
            [f"{step}, decoder re-initialised"] + [_start_cell(row["trec"][rate]) for rate in rates]
        )
    return "\n".join(
        [
            f"lab19's span-corruption pretraining ({results['steps']} steps"
            + (f", {results['pretrain_seconds']:,.0f} s" if results.get("pretrain_seconds") else "")
            + "), checkpoints measured; step 0 is the random init. Held-out span corruption "
            "(format = sentinels and the end token; content = the hidden tokens; unigram = "
            f"always writing “{results['most_frequent_content_token']}”; source gain = content "
            "loss with other blocks' encoder inputs minus with their own, in nats):",
            "",
            markdown_table(
                [
                    "step",
                    "format acc",
                    "content acc",
                    "unigram acc",
                    "content loss",
                    "with other sources",
                    "source gain",
                ],
                span_rows,
            ),
            "",
            f"TREC-6 as text to text from each checkpoint ({results['labelled']:,} labels, "
            "lab19's recipe, seed 0): validation accuracy (majority class "
            f"{results['majority_class_validation']:.3f}), the share of the most generated "
            "label, and the fine-tuned model's source gain on the label words (nats):",
            "",
            markdown_table(["step", *[f"rate {rate}" for rate in rates]], trec_rows),
        ]
    )


def headline(results):
    checkpoints = results["checkpoints"]
    first, last = min(checkpoints, key=int), max(checkpoints, key=int)

    def best(step):
        return max(row["validation_accuracy"] for row in checkpoints[step]["trec"].values())

    span = checkpoints[last]["span_corruption"]
    return (
        f"after {last} span-corruption steps: content accuracy {span['content_token_accuracy']:.3f}"
        f" (unigram {span['unigram_content_accuracy']:.3f}), source gain "
        f"{span['source_gain_nats']:+.3f} nats; TREC-6 validation, best rate: step {last} "
        f"{best(last):.3f} vs random init {best(first):.3f}"
    )
