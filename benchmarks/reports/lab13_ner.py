"""The records of `labs/lab13_ner.py`: their section of docs/results.md and README headline."""

from benchmarks.reports._common import markdown_table
from kbert.metrics.seed_comparison import format_difference

# Other runs render as the lab's own: `lab13_ner_3000_lr3e-4` and `lab13_ner_3000_lr1e-3` (why
# span-based NER trails BIO tagging: both on 3,000 sentences, at the lab's rate and at 1e-3),
# `lab13_ner_3000_span_prior*` (the span classifier whose bias starts at the NULL prior, its
# default since).
STEMS = ("lab13_ner",)

# What the lab's source claims: stated under the record's title, above what it found.
CLAIM = "J&M §11.5: a BIO tagger on a fine-tuned encoder; a CRF over its emissions makes every tag sequence valid; span-based NER classifies spans instead of tokens; BERT-base reaches 92.4 F1 on CoNLL-2003 (Devlin et al. 2019)"


def render(results):
    """Table of `labs/lab13_ner.py`: CoNLL-2003 entity F1 per method (BIO softmax, CRF, span),
    mean ± sd over seeds and the seed-paired difference to softmax (a record of one seed, made
    before three were the default, renders without them)."""
    rows = []
    # Records made before the lab counted the invalid BIO tags it repaired, and records of span
    # NER alone (no BIO tags to count), render as before.
    repaired = any(run.get("repaired_tags") is not None for run in results["methods"].values())
    for name, run in results["methods"].items():
        accuracy = run.get("test_token_accuracy")
        types = run.get("per_type_f1") or {}
        rows.append(
            [
                name,
                f"{run['train_sentences']:,}",
                f"{run['train_seconds']:.0f}",
                f"{run['validation_f1']:.2f}",
                f"{run['test_f1']:.2f}"
                + ("" if run.get("test_f1_sd") is None else f" ± {run['test_f1_sd']:.2f}"),
                format_difference((results.get("differences") or {}).get(name), scale=1.0),
                " / ".join(
                    f"{run[key]:.1f}" if key in run else "-"
                    for key in ("test_precision", "test_recall")
                ),
                "-" if accuracy is None or accuracy != accuracy else f"{accuracy:.2f}",
                " / ".join(f"{types[t]:.1f}" for t in ("PER", "LOC", "ORG", "MISC") if t in types),
            ]
            + ([_repaired(run)] if repaired else [])
        )
    seeds = (results.get("settings") or {}).get("seeds", 1)
    return "\n".join(
        [
            "CoNLL-2003 (entity-level F1, conlleval's rules; BIO decoded from each word's first "
            f"subword; span = every span up to a width, classified); {seeds} seed(s), mean ± sd, "
            "and each method's seed-paired difference to the BIO softmax tagger in F1 points"
            + (
                "; invalid tags: predicted test tags `I-X` that continue no entity of type X, "
                "read as `B-X` (conlleval's rule):"
                if repaired
                else ":"
            ),
            "",
            markdown_table(
                [
                    "method",
                    "train sentences",
                    "train s",
                    "validation F1",
                    "test F1",
                    "Δ to softmax",
                    "test P / R",
                    "test token acc",
                    "test F1 PER / LOC / ORG / MISC",
                ]
                + (["invalid test tags repaired (all seeds)"] if repaired else []),
                rows,
            ),
        ]
    )


def _repaired(run):
    """The invalid BIO tags a method predicted on test (an `I-X` that continues no entity of
    type X, read as `B-X`), summed over seeds, each seed's after it; "-" where the method
    decodes no BIO tags (span)."""
    if run.get("repaired_tags") is None:
        return "-"
    seeds = [each["repaired_tags"] for each in run.get("runs") or []]
    if len(seeds) < 2 or None in seeds:
        return f"{run['repaired_tags']:,}"
    return f"{run['repaired_tags']:,} ({' / '.join(f'{count:,}' for count in seeds)})"


def headline(results):
    scores = ", ".join(f"{name} {run['test_f1']:.2f}" for name, run in results["methods"].items())
    differences = results.get("differences") or {}
    verdicts = "; ".join(
        f"{name} − softmax: {difference['verdict']}" for name, difference in differences.items()
    )
    return f"CoNLL-2003 test entity F1: {scores}" + (f" ({verdicts})" if verdicts else "")
