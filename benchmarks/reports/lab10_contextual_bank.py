"""The records of `labs/lab10_contextual_bank.py`: their README headline (docs/results.md lists
their numbers)."""

STEMS = ("lab10_contextual_bank",)


def headline(results):
    return (
        f"“bank” ({results['layers']}): same-sense cosine {results['same_sense_cosine']:.3f} vs "
        f"different-sense {results['different_sense_cosine']:.3f} (a static embedding: "
        f"{results['static_cosine']:.3f})"
    )
