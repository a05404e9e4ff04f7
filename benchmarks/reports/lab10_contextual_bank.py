"""The records of `labs/lab10_contextual_bank.py`: their section of docs/results.md and README
headline."""

from benchmarks.reports._common import markdown_table

STEMS = ("lab10_contextual_bank",)

# What the lab's source claims: stated under the record's title, above what it found.
CLAIM = "J&M §11.3: a contextual embedding gives each occurrence of a word its own vector, closer within a sense than across senses, where a static embedding gives the word one vector"


def render(results):
    """Mean cosine between the vectors of "bank" within a sense, across senses, and statically."""
    gap = results["same_sense_cosine"] - results["different_sense_cosine"]
    table = markdown_table(
        ['pairs of "bank" vectors', "mean cosine"],
        [
            [
                f"contextual ({results['layers']}), same sense",
                f"{results['same_sense_cosine']:.4f}",
            ],
            [
                f"contextual ({results['layers']}), different senses",
                f"{results['different_sense_cosine']:.4f}",
            ],
            ["static (the input embedding), any two", f"{results['static_cosine']:.4f}"],
        ],
    )
    verdict = "above" if gap > 0 else "no higher than"
    return (
        f"{table}\n\nSame-sense pairs sit {verdict} different-sense ones ({gap:+.4f}), while the "
        "static embedding cannot tell the contexts apart."
    )


def headline(results):
    return (
        f"“bank” ({results['layers']}): same-sense cosine {results['same_sense_cosine']:.3f} vs "
        f"different-sense {results['different_sense_cosine']:.3f} (a static embedding: "
        f"{results['static_cosine']:.3f})"
    )
