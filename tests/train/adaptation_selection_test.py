"""Naming a recipe and checking its options, before anything loads (no training)."""

import pytest

from kbert.train import adaptation_recipes as recipes
from kbert.train.adaptation_recipes import adapt_classifier, method_name
from kbert.train.adaptation_run import ensemble_result


def test_every_recipe_is_named_and_documented():
    assert set(recipes.RECIPES) | {"ensemble"} == set(recipes.ADAPTATION_METHODS)
    for name, recipe in recipes.RECIPES.items():
        assert method_name(recipe) == method_name(name) == name
        assert recipe.__doc__ and recipe.__name__ in recipes.__all__, name
    assert method_name(ensemble_result) == "ensemble"
    with pytest.raises(ValueError, match="or its recipe function"):
        method_name(print)


def test_an_unknown_option_names_the_recipes_options():
    # Checked before anything loads: a typo never trains with the default silently.
    with pytest.raises(
        ValueError,
        match=r"adapters takes the options \['bottleneck_dim', 'placement', 'trainable', "
        r"'rate_multiplier'\]; "
        r"received unknown option\(s\) \['bottleneck'\]",
    ):
        adapt_classifier(recipes.adapters, start=None, data=None, bottleneck=8)
