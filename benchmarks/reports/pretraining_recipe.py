"""The records of `benchmarks/pretraining_recipe.py`: their section and README headline."""

from benchmarks.reports._common import markdown_table


def _spread(value):
    return "" if value is None else f" ± {value:.3f}"


STEMS = ("pretraining_recipe",)


def render(results):
    """One row per arm: what it sets back, steps, the held-out objective, the fine-tuned TREC-6
    accuracy and its paired difference to the arm's baseline, with the verdict."""
    rows = []
    for name, arm in results["arms"].items():
        objective = ", ".join(f"{key} {value:.3f}" for key, value in arm["objective"].items())
        rows.append(
            [
                name,
                arm["reverts"],
                ", ".join(f"{steps:,}" for steps in arm["steps"]),
                objective,
                f"{arm['validation']:.3f}{_spread(arm['validation_sd'])}",
                f"{arm['test']:.3f}{_spread(arm['test_sd'])}",
                "–"
                if name == "recipe"
                else f"{100 * arm['test_minus_baseline']:+.1f} vs {arm['baseline']}",
                arm.get("verdict", "(the yardstick)"),
            ]
        )
    controls = "; ".join(
        f"{norm}-LN {scores['validation']:.3f} / {scores['test']:.3f}"
        for norm, scores in results["random_controls"].items()
    )
    recipe = results["arms"]["recipe"]
    control = results["random_controls"].get("pre")
    against_control = (
        f" The recipe against random weights of its own architecture (pre-LN), on validation: "
        f"{recipe['validation'] - control['validation']:+.3f}, "
        f"{_control_verdict(recipe, control, results)}."
        if control
        else ""
    )
    flags = " ".join(f"{flag} {value}" for flag, value in results["recipe_flags"].items())
    return "\n".join(
        [
            f"lab01 pretrains for {results['budget_minutes']:g} minutes per run with the "
            f"recipe's flags (`{flags}`) or one set back; each start is fine-tuned on "
            f"{results['labelled']:,} TREC-6 questions at the rate validation chose, "
            f"{results['fine_tune_seeds']} fine-tuning seeds. Validation and test accuracy; "
            "the difference to the baseline is paired by pretraining seed, in test points. "
            "An arm is called better or worse only when its validation difference exceeds "
            "twice the sd of the recipe's own pretraining seeds "
            f"({results['recipe_validation_sd']}); held-out objective scores do not compare "
            "across mask rates.",
            "",
            markdown_table(
                [
                    "arm",
                    "sets back",
                    "steps",
                    "held-out objective",
                    "validation",
                    "test",
                    "Δ test (points)",
                    "verdict (validation)",
                ],
                rows,
            ),
            "",
            f"Random weights fine-tuned the same way (validation / test): {controls}; majority "
            f"class {results['majority_class_acc']:.3f}.{against_control}",
        ]
    )


def _control_verdict(recipe, control, results):
    """Pretraining's gain on validation over the random control, judged as the arms are: beyond
    twice the recipe's pretraining-seed sd, or "no difference"."""
    gain = recipe["validation"] - control["validation"]
    if abs(gain) <= 2 * results["recipe_validation_sd"]:
        return "no difference"
    return "better" if gain > 0 else "worse"


def headline(results):
    verdicts = ", ".join(
        f"{name} {arm['verdict']}" for name, arm in results["arms"].items() if "verdict" in arm
    )
    recipe = results["arms"]["recipe"]
    return (
        f"CPU-hour pretraining recipe, {results['budget_minutes']:g} min per run: recipe "
        f"{recipe['test']:.3f}{_spread(recipe['test_sd'])} on TREC-6 ({results['labelled']} "
        f"labels); each choice set back: {verdicts}"
        + (
            f"; against random weights: {_control_verdict(recipe, results['random_controls']['pre'], results)}"
            if "pre" in results.get("random_controls", {})
            else ""
        )
    )
