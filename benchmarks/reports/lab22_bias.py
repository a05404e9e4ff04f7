"""The records of `labs/lab22_bias.py`: their section of docs/results.md and README headline."""

from benchmarks.reports._common import markdown_table

STEMS = ("lab22_bias",)

# What the lab's source claims: stated under the record's title, above what it found.
CLAIM = "SEAT (May et al. 2019) and WEAT (Caliskan et al. 2017): pretrained representations carry human-like association biases (weaker and less consistent in sentence encoders); counterfactual data augmentation during adaptation reduces the gender measures"

# A SEAT effect counted as present in the headline (May et al. report p-values at this level).
SIGNIFICANCE = 0.01


def _mean_sd(pair):
    mean, sd = pair
    return f"{mean:.4f}" if sd is None else f"{mean:.4f} ± {sd:.4f}"


def _difference(difference):
    spread = "" if difference["sd"] is None else f" ± {difference['sd']:.4f}"
    reading = difference.get("change", difference["verdict"])
    return f"{difference['mean']:+.4f}{spread} ({reading})"


def _seat_cell(result):
    return f"{result['effect_size']:+.3f} (p {result['p_value']:.4f})"


def render(results):
    """SEAT before and after fine-tuning, and CDA's change of each measure over the seeds."""
    seat, summary = results["seat"], results["summary"]
    seat_rows = []
    for name, (x, y, a, b) in results["tests"].items():
        tuned = summary.get(f"abs d {name}")
        seat_rows.append(
            [
                name,
                f"{x} vs {y}",
                f"{a} vs {b}",
                _seat_cell(seat["pretrained"][name]),
                _seat_cell(seat["random_weights"][name]),
                _mean_sd(tuned["fine_tuned"]) if tuned else "–",
                _mean_sd(tuned["cda"]) if tuned else "–",
            ]
        )
    rows = [
        [name, _mean_sd(row["fine_tuned"]), _mean_sd(row["cda"]), _difference(row["difference"])]
        for name, row in summary.items()
    ]
    added = results["augmented_examples"] - results["train_examples"]
    groups = "; ".join(
        f"{name}: {group['first']} minus {group['second']}"
        for name, group in results["groups"].items()
    )
    return "\n".join(
        [
            f"SEAT effect sizes d (one-sided permutation p) on {results['model']}'s "
            f"{results['pooling']}-pooled top layer, beside an encoder of the same shape with "
            "random weights; after fine-tuning, the absolute d as mean ± sd over the seeds:",
            "",
            markdown_table(
                [
                    "test",
                    "targets X vs Y",
                    "attributes A vs B",
                    "pretrained",
                    "random weights",
                    "fine-tuned abs d",
                    "with CDA abs d",
                ],
                seat_rows,
            ),
            "",
            f"SST-2 fine-tuning on {results['train_examples']:,} sentences, {results['seeds']} "
            f"seed(s), accuracy on GLUE dev ({results['test_examples']:,}); CDA added "
            f"{added:,} gender-swapped copies ({added / results['train_examples']:.1%} of the "
            f"training sentences hold a gendered word). Gaps are P(positive) over "
            f"{len(results['templates'])} templates, {groups}; the last column is the "
            "seed-paired difference (for a bias measure: smaller, larger, or no difference when "
            "inside the spread):",
            "",
            markdown_table(["measure", "fine-tuned", "with CDA", "CDA − fine-tuned"], rows),
        ]
    )


def headline(results):
    pretrained, control = results["seat"]["pretrained"], results["seat"]["random_weights"]
    found = sum(r["p_value"] < SIGNIFICANCE for r in pretrained.values())
    found_control = sum(r["p_value"] < SIGNIFICANCE for r in control.values())
    accuracy = results["summary"]["accuracy"]["difference"]
    terms = results["summary"].get("abs gap gender_terms")
    gap = f"; gender-term abs gap {_difference(terms['difference'])}" if terms else ""
    return (
        f"SEAT p < {SIGNIFICANCE} on {found} of {len(pretrained)} tests for {results['model']} "
        f"({found_control} with random weights); CDA's accuracy cost "
        f"{_difference(accuracy)}{gap}"
    )
