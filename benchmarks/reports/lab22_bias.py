"""The records of `labs/lab22_bias.py`: their section of docs/results.md and README headline."""

from benchmarks.reports._common import chosen_rates, markdown_table

STEMS = ("lab22_bias",)

# What the lab's source claims: stated under the record's title, above what it found.
CLAIM = "SEAT (May et al. 2019) and WEAT (Caliskan et al. 2017): pretrained representations carry human-like association biases (weaker and less consistent in sentence encoders); counterfactual data augmentation during adaptation reduces the gender measures"

# A SEAT effect counted as present in the headline (May et al. report p-values at this level).
SIGNIFICANCE = 0.01

ARM_NAMES = {"fine_tuned": "fine-tuned", "cda": "with CDA"}


def _mean_sd(pair):
    mean, sd = pair
    return f"{mean:.4f}" if sd is None else f"{mean:.4f} ± {sd:.4f}"


def _difference(difference):
    spread = "" if difference["sd"] is None else f" ± {difference['sd']:.4f}"
    reading = difference.get("change", difference["verdict"])
    return f"{difference['mean']:+.4f}{spread} ({reading})"


def _seat_cell(result):
    return f"{result['effect_size']:+.3f} (p {result['p_value']:.4f})"


def _control_counts(control):
    """Per random draw: how many tests reach p < SIGNIFICANCE."""
    return [sum(r["p_value"] < SIGNIFICANCE for r in draw.values()) for draw in control["draws"]]


def _control_cell(control, name):
    """d as mean ± sd over the random draws, and how many draws reach the level."""
    mean, sd = control["effect_size"][name]
    spread = "" if sd is None else f" ± {sd:.3f}"
    found = sum(draw[name]["p_value"] < SIGNIFICANCE for draw in control["draws"])
    return f"{mean:+.3f}{spread} (p < {SIGNIFICANCE} in {found} of {len(control['draws'])})"


# How the pretrained d reads against the random draws' spread.
AGAINST_RANDOM = {"better": "above", "worse": "below", "no difference": "no difference"}


def _against_cell(seat, name):
    """The pretrained d minus the random draws' mean, with its verdict against their sd ("–" in
    records made before the lab compared them)."""
    row = seat.get("pretrained_vs_random", {}).get(name)
    if row is None:
        return "–"
    return f"{row['difference']:+.3f} ({AGAINST_RANDOM[row['verdict']]})"


def _seat_rows(results):
    seat, summary = results["seat"], results["summary"]
    rows = []
    for name, (x, y, a, b) in results["tests"].items():
        tuned = summary.get(f"abs d {name}")
        rows.append(
            [
                name,
                f"{x} vs {y}",
                f"{a} vs {b}",
                _seat_cell(seat["pretrained"][name]),
                _control_cell(seat["random_weights"], name),
                _against_cell(seat, name),
                _mean_sd(tuned["fine_tuned"]) if tuned else "–",
                _mean_sd(tuned["cda"]) if tuned else "–",
            ]
        )
    return rows


def gap_null_sentence(results):
    """Each behavioural gap's two-sided permutation p per run (re-splits of its fillers), per
    arm; "" for records made before the lab computed them."""
    parts = []
    for arm, runs in results["runs"].items():
        if (
            not runs
            or "gaps" not in runs[0]
            or "p_value" not in next(iter(runs[0]["gaps"].values()))
        ):
            return ""
        for group in runs[0]["gaps"]:
            values = ", ".join(f"{run['gaps'][group]['p_value']:.4f}" for run in runs)
            parts.append(f"{ARM_NAMES[arm]} {group} p {values}")
    permutations = results["settings"].get("permutations")
    return (
        f"Each run's gap against {permutations:,} random re-splits of its fillers into groups of "
        "the same sizes (two-sided p per seed; a small p: the classifier scores these groups "
        "apart beyond what any split of the same fillers gives): " + "; ".join(parts) + "."
    )


def _steps_sentence(results):
    """How long each arm trained: the planned passes, and the optimizer steps the runs took."""
    arms = results["settings"]["arms"]
    passes = "; ".join(
        f"{ARM_NAMES[arm]} {plan['epochs']} pass(es) of {plan['batches_per_epoch']:,} batches"
        for arm, plan in arms.items()
    )
    taken = sorted({run["steps"] for runs in results["runs"].values() for run in runs})
    if len(taken) == 1:
        took = f"every run took {taken[0]:,} optimizer steps"
    else:
        took = f"the runs took {', '.join(map(str, taken))} optimizer steps (not equal)"
    return (
        f"Both arms train for the plain arm's optimizer steps ({passes}; the CDA arm's schedule "
        f"spans the same steps and it stops there): {took}."
    )


def rates_sentence(results):
    """Each arm's peak rate chosen on validation, and the rates its first seed tried ("" for
    records made before the choice)."""
    choices = results.get("rate_choices")
    if not choices:
        return ""
    rates = chosen_rates(
        choices, ARM_NAMES, lambda row: f"{row['validation_accuracy']:.3f} / {row['accuracy']:.3f}"
    )
    return (
        "Each arm's peak rate, chosen on validation accuracy at the first seed "
        f"({results['validation_examples']:,} held-out training sentences; per rate tried: "
        "validation / test accuracy, test never used to choose): " + rates + "."
    )


def render(results):
    """SEAT before and after fine-tuning, and CDA's change of each measure over the seeds."""
    summary = results["summary"]
    rows = [
        [name, _mean_sd(row["fine_tuned"]), _mean_sd(row["cda"]), _difference(row["difference"])]
        for name, row in summary.items()
    ]
    draws = len(results["seat"]["random_weights"]["draws"])
    null, rates = gap_null_sentence(results), rates_sentence(results)
    added = results["augmented_examples"] - results["train_examples"]
    groups = "; ".join(
        f"{name}: {group['first']} minus {group['second']}"
        for name, group in results["groups"].items()
    )
    return "\n".join(
        [
            f"SEAT effect sizes d (one-sided permutation p) on {results['model']}'s "
            f"{results['pooling']}-pooled top layer, beside {draws} encoder(s) of the same shape "
            f"with random weights (d as mean ± sd over the draws, and in how many draws p < "
            f"{SIGNIFICANCE}), the pretrained d minus the draws' mean (above or below: outside "
            "their sd); after fine-tuning, the absolute d as mean ± sd over the seeds:",
            "",
            markdown_table(
                [
                    "test",
                    "targets X vs Y",
                    "attributes A vs B",
                    "pretrained",
                    "random weights",
                    "pretrained − random",
                    "fine-tuned abs d",
                    "with CDA abs d",
                ],
                _seat_rows(results),
            ),
            "",
            f"SST-2 fine-tuning on {results['train_examples']:,} sentences, {results['seeds']} "
            f"seed(s), accuracy on GLUE dev ({results['test_examples']:,}); CDA added "
            f"{added:,} gender-swapped copies ({added / results['train_examples']:.1%} of the "
            f"training sentences hold a gendered word). {_steps_sentence(results)} Gaps are "
            f"P(positive) over {len(results['templates'])} templates, {groups}; the last column "
            "is the seed-paired difference (for a bias's size: smaller, larger, or no "
            "difference when inside the spread; a signed gap: higher or lower):",
            "",
            markdown_table(["measure", "fine-tuned", "with CDA", "CDA − fine-tuned"], rows),
        ]
        + (["", null] if null else [])
        + (["", rates] if rates else [])
    )


def headline(results):
    pretrained, control = results["seat"]["pretrained"], results["seat"]["random_weights"]
    found = sum(r["p_value"] < SIGNIFICANCE for r in pretrained.values())
    counts = ", ".join(map(str, _control_counts(control)))
    accuracy = results["summary"]["accuracy"]["difference"]
    terms = results["summary"].get("abs gap gender_terms")
    gap = f"; gender-term abs gap {_difference(terms['difference'])}" if terms else ""
    return (
        f"SEAT p < {SIGNIFICANCE} on {found} of {len(pretrained)} tests for {results['model']} "
        f"(random weights: {counts} in {len(control['draws'])} draw(s)); CDA's accuracy cost "
        f"at equal steps {_difference(accuracy)}{gap}"
    )
