"""The records of `benchmarks/parity.py` (kbert against keras-hub and Hugging Face `tokenizers`
on a real checkpoint): their section of docs/results.md and README headline."""

from benchmarks.reports._common import markdown_table

STEMS = ("parity",)


def render(results):
    """Tokenizer agreement, and the encoder's largest difference with each GELU."""
    table = markdown_table(
        ["kbert against", "on", "max abs difference", "min cosine of mean-pooled embeddings"],
        [
            [
                "keras-hub `BertBackbone`, both with tanh GELU",
                f"{results['sentences']:,} sentences",
                f"{results['encoder_max_abs_diff']:.3g}",
                f"{results['embedding_min_cosine']:.10f}",
            ],
            [
                "keras-hub (tanh GELU); kbert with the checkpoint's exact GELU",
                f"{results['sentences']:,} sentences",
                f"{results['exact_gelu_max_abs_diff']:.3g}",
                f"{results['exact_gelu_embedding_min_cosine']:.10f}",
            ],
        ],
    )
    return (
        f"Tokenizer: {results['tokenizer_agreement']:.2%} of {results['tokenizer_texts']:,} "
        f"texts give token ids identical to Hugging Face `tokenizers` reading the checkpoint's "
        f"tokenizer.json.\n\n{table}\n\nThe encoder's difference is taken over real (not "
        "padding) tokens; the second row is the activation's own effect, since keras-hub "
        "always computes BERT's GELU with the tanh approximation."
    )


def headline(results):
    return (
        f"tokenizer ids {results['tokenizer_agreement']:.2%} identical to HF tokenizers; "
        f"encoder max |Δ| {results['encoder_max_abs_diff']:.3g} against keras-hub"
    )
