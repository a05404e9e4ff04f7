"""The records of `labs/lab18b_data_curation.py`: their section of docs/results.md and README
headline."""

from benchmarks.reports._common import markdown_table
from kbert.metrics.seed_comparison import format_difference

STEMS = ("lab18b_data_curation",)

# What the lab's source claims: stated under the record's title, above what it found.
CLAIM = "the textbook's data curation: deduplication finds the repeats, quality rules and a perplexity filter remove junk, and a curated corpus pretrains a better model for the same tokens"


def _spread(sd, digits):
    """ " ± sd", or nothing where the record has no sd (one run, or a record made before it)."""
    return "" if sd is None else f" ± {sd:.{digits}f}"


def _pretraining_seeds(results):
    """Pretrainings per corpus: 1 in records made before `--pretraining-seeds`."""
    return results.get("pretraining_seeds", 1)


def _corpus_rows(results):
    trec = results["trec"]
    return [
        [
            name,
            f"{p['documents']:,}",
            f"{p['held_out_perplexity']:.1f}{_spread(p.get('held_out_perplexity_sd'), 1)}",
            f"{trec[name]['mean']:.3f}{_spread(trec[name]['sd'], 3)}",
        ]
        for name, p in results["pretraining"].items()
    ]


def _runs_described(results):
    """What the table's mean ± sd is over."""
    pretrainings = _pretraining_seeds(results)
    if pretrainings == 1:
        return f"mean ± sd of {results['seeds']} seeds"
    return (
        f"perplexity over {pretrainings} pretraining seeds per corpus, TREC-6 over "
        f"{pretrainings} × {results['seeds']} (pretraining seed, fine-tuning seed) runs; "
        "mean ± sd"
    )


def _perplexity_line(results):
    """The perplexity gap's spread: unmeasured with one pretraining per corpus ("" in records
    made before `--pretraining-seeds`, rendered as they always were)."""
    if "pretraining_seeds" not in results:
        return ""
    pretrainings = _pretraining_seeds(results)
    if pretrainings == 1:
        return (
            "Each corpus was pretrained once: the perplexity gap is one pretraining per corpus, "
            "and its spread over pretraining seeds is unmeasured."
        )
    return (
        "Held-out perplexity, planted minus curated (positive: curating lowered it), paired by "
        f"pretraining seed over {pretrainings} seeds: "
        f"{format_difference(results['perplexity_reduction'], scale=1.0, digits=1)} "
        "('no difference' when the mean is inside the sd of the paired differences)."
    )


def _trec_line(results):
    """TREC-6 curated minus planted, paired by seed ("" in records made before it)."""
    difference = results["trec"].get("curated", {}).get("vs_planted")
    if difference is None:
        return ""
    pairing = "(pretraining seed, fine-tuning seed)" if _pretraining_seeds(results) > 1 else "seed"
    return (
        f"TREC-6 test accuracy, curated minus planted in points, paired by {pairing} over "
        f"{difference['n']} pairs of runs: {format_difference(difference)} ('no difference' "
        "when the mean is inside the sd of the paired differences)."
    )


def render(results):
    """Tables of `labs/lab18b_data_curation.py`: each filter's removals, recall, the two corpora,
    and the corpora's seed-paired differences where the record holds them."""
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
    comparisons = [line for line in (_perplexity_line(results), _trec_line(results)) if line]
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
            f"{results['labelled']:,} questions ({_runs_described(results)}):",
            "",
            markdown_table(
                ["corpus", "documents", "held-out perplexity", "TREC-6"], _corpus_rows(results)
            ),
        ]
        + [part for line in comparisons for part in ("", line)]
    )


def headline(results):
    recall = results["recall"]
    perplexity, trec = results["held_out_perplexity"], results["trec_acc"]
    return (
        f"planted copies and noise found: recall {min(recall.values()):.0%}–"
        f"{max(recall.values()):.0%} per kind; equal tokens: held-out perplexity "
        f"{perplexity['curated']:.1f} curated vs {perplexity['planted']:.1f} planted"
        f"{_headline_reduction(results)}, TREC-6 {trec['curated']:.3f} vs {trec['planted']:.3f}"
        f"{_headline_trec(results)}"
    )


def _headline_reduction(results):
    """The paired perplexity reduction, where more than one pretraining per corpus measured it."""
    if _pretraining_seeds(results) == 1:
        return ""
    reduction = format_difference(results["perplexity_reduction"], scale=1.0, digits=1)
    return f" (planted − curated, paired by pretraining seed: {reduction})"


def _headline_trec(results):
    """The paired TREC-6 difference in points ("" in records made before it)."""
    difference = results["trec"].get("curated", {}).get("vs_planted")
    if difference is None:
        return ""
    return f" (curated − planted, points: {format_difference(difference, digits=1)})"
