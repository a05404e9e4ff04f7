"""The records of `labs/lab18_tokenizers.py`: their section of docs/results.md and README
headline."""

from pathlib import Path

from benchmarks.reports._common import markdown_table

STEMS = ("lab18_tokenizers",)

# What the lab's source claims: stated under the record's title, above what it found.
CLAIM = "the textbook: subword tokenizers trade vocabulary size against sequence length (fertility falls as the vocabulary grows); byte-level BPE never needs an unknown token; unigram and BPE segment rare words differently"


def render(results):
    """Table of `labs/lab18_tokenizers.py`: fertility and unknown share per tokenizer and size."""
    sets = list(next(iter(next(iter(results["results"].values())).values())))
    sets = [name for name in sets if name not in ("train_seconds", "vocabulary")]
    rows = []
    for name, by_size in results["results"].items():
        for size, row in by_size.items():
            rows.append(
                [name, f"{int(size):,}", f"{row['vocabulary']:,}"]
                + [f"{row[s]['fertility']:.3f} / {row[s]['unknown_pct']:.3f}%" for s in sets]
                + [f"{row['train_seconds']:,.0f}"]
            )
    segmented = results["segmented"]
    parts = [
        f"Trained on {results['train_books']} Gutenberg books ({results['train_words']:,} words); "
        "held-out texts: "
        + ", ".join(f"{name} {count:,}" for name, count in results["held_out_texts"].items())
        + ". Cells: fertility (subwords per whitespace word) / unknown tokens.",
        "",
        markdown_table(["tokenizer", "size", "vocabulary"] + sets + ["train s"], rows),
        "",
        f"“{segmented['text']}” at {segmented['vocabulary_size']:,}:",
        "",
    ]
    parts += [
        f"- {name}: `{' '.join(segmented[name])}`"
        for name in ("wordpiece", "bpe", "byte_level_bpe", "unigram")
        if name in segmented
    ]
    if results.get("figure"):
        parts += [
            "",
            f"![fertility by vocabulary size]({Path(results['figure']).relative_to('docs')})",
        ]
    return "\n".join(parts)


def headline(results):
    largest = max(int(size) for size in next(iter(results["results"].values())))
    cells = ", ".join(
        f"{name} {by_size[str(largest)][s]['fertility']:.2f}"
        for name, by_size in results["results"].items()
        for s in ["wikitext"]
        if s in by_size[str(largest)]
    )
    return f"subwords per word on WikiText at {largest:,} tokens: {cells}"
