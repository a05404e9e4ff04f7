"""Choosing a method's settings on validation: summaries, the choice, the table (no training)."""

import pytest

from kbert.train import adaptation_recipes as recipes
from kbert.train.adaptation_recipes import (
    adapt_classifier,
    choose_on_validation,
    format_summary_table,
    method_name,
    summarize,
)


def _row(label, method, seed, validation, test):
    return {
        "label": label,
        "method": method,
        "start": "s",
        "seed": seed,
        "learning_rate": 1e-4,
        "trainable_params": 10,
        "trainable_pct": 100.0,
        "accuracy": test,
        "validation_accuracy": validation,
        "train_s": 1.0,
    }


def test_settings_are_chosen_on_validation_never_on_test():
    rows = [
        # "a" is best on test, "b" on validation: "b" must win.
        _row("a", "m", 0, 0.50, 0.90),
        _row("a", "m", 1, 0.60, 0.92),
        _row("b", "m", 0, 0.70, 0.40),
        _row("b", "m", 1, 0.70, 0.44),
        _row("c", "other", 0, 0.10, 0.10),
    ]
    summaries = summarize(rows)
    assert [row["val_mean"] for row in summaries] == pytest.approx([0.55, 0.70, 0.10])
    assert summaries[1]["acc_mean"] == pytest.approx(0.42)
    chosen = choose_on_validation(summaries)
    assert {key: row["label"] for key, row in chosen.items()} == {
        ("s", "m"): "b",
        ("s", "other"): "c",
    }
    # One family for everything: the best validation row overall.
    assert choose_on_validation(summaries, family=lambda row: "all")[("s", "all")]["label"] == "b"
    table = format_summary_table(summaries)
    assert "| validation accuracy (mean) |" in table and "| 70.00 | 42.00 ± 2.83 (n=2)" in table


def test_choosing_without_validation_names_the_row():
    rows = [{**_row("a", "m", 0, 0.5, 0.5), "validation_accuracy": None}]
    with pytest.raises(ValueError, match="row s/a has no validation accuracy"):
        choose_on_validation(summarize(rows))
    # And the table then has no validation column.
    assert "validation" not in format_summary_table(summarize(rows))


def test_every_recipe_is_named_and_documented():
    assert set(recipes.RECIPES) | {"ensemble"} == set(recipes.ADAPTATION_METHODS)
    for name, recipe in recipes.RECIPES.items():
        assert method_name(recipe) == method_name(name) == name
        assert recipe.__doc__ and recipe.__name__ in recipes.__all__, name
    assert method_name(recipes.ensemble_result) == "ensemble"
    with pytest.raises(ValueError, match="or its recipe function"):
        method_name(print)


def test_an_unknown_option_names_the_recipes_options():
    # Checked before anything loads: a typo never trains with the default silently.
    with pytest.raises(
        ValueError,
        match=r"adapters takes the options \['bottleneck_dim', 'placement'\]; "
        r"received unknown option\(s\) \['bottleneck'\]",
    ):
        adapt_classifier(recipes.adapters, start=None, data=None, bottleneck=8)
