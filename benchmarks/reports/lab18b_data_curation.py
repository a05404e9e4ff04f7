"""The records of `labs/lab18b_data_curation.py`: their section of docs/results.md and README
headline."""

from benchmarks.reports._common import markdown_table

STEMS = ("lab18b_data_curation",)

# What the lab's source claims: stated under the record's title, above what it found.
CLAIM = "the textbook's data curation: deduplication finds the repeats, quality rules and a perplexity filter remove junk, and a curated corpus pretrains a better model for the same tokens"


def render(results):
    """Tables of `labs/lab18b_data_curation.py`: each filter's removals, recall, the two corpora."""
    documents = results["documents"]
    filter_rows = [
        [
            step,
            row["removed"],
            ", ".join(f"{reason} {count}" for reason, count in row["by_reason"].items()) or "-",
            ", ".join(f"{kind} {count}" for kind, count in row["planted_removed"].items()) or "-",
            row["originals_removed"],
        ]
        for step, row in results["filters"].items()
    ]
    median = results.get("median_perplexity", {})
    recall_rows = [
        [kind, f"{value:.1%}", median.get(kind, "")] for kind, value in results["recall"].items()
    ]
    corpus_rows = [
        [
            name,
            f"{p['documents']:,}",
            f"{p['held_out_perplexity']:.1f}",
            f"{results['trec'][name]['mean']:.3f} ± {results['trec'][name]['sd']:.3f}",
        ]
        for name, p in results["pretraining"].items()
    ]
    return "\n".join(
        [
            f"{documents['originals']:,} documents (~200 words) from the training books, plus "
            f"{documents['copies']:,} planted copies and {documents['noise']:,} planted noise "
            "documents; the filters run in this order, each on what the previous kept:",
            "",
            markdown_table(
                ["filter", "removed", "by reason", "planted removed", "originals removed"],
                filter_rows,
            ),
            "",
            "Recall per planted kind (share removed by some filter), and the reference LM's "
            "median word-level perplexity for the kinds that reached the perplexity filter "
            f"(originals: {median.get('None', '-')}):",
            "",
            markdown_table(["planted kind", "recall", "median perplexity"], recall_rows),
            "",
            f"The same causal model pretrained for {results['steps']} steps "
            f"({results['tokens_per_corpus']:,} tokens) on each corpus; held-out perplexity "
            "(sub-word) on books by other authors, TREC-6 test accuracy after fine-tuning on "
            f"{results['labelled']:,} questions (mean ± sd of {results['seeds']} seeds):",
            "",
            markdown_table(["corpus", "documents", "held-out perplexity", "TREC-6"], corpus_rows),
        ]
    )


def headline(results):
    recall = results["recall"]
    perplexity, trec = results["held_out_perplexity"], results["trec_acc"]
    return (
        f"planted copies and noise found: recall {min(recall.values()):.0%}–"
        f"{max(recall.values()):.0%} per kind; equal tokens: held-out perplexity "
        f"{perplexity['curated']:.1f} curated vs {perplexity['planted']:.1f} planted, TREC-6 "
        f"{trec['curated']:.3f} vs {trec['planted']:.3f}"
    )
