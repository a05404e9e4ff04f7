"""Each start runs its own choices: `own_choices` labels, and `compare_each_start` runs every
start's rows on it alone, in the order the table prints, then prints and records once."""

import argparse
from types import SimpleNamespace

import pytest

from kbert.train import own_choice_comparison
from kbert.train.chosen_on_validation import Chosen
from kbert.train.own_choice_comparison import (
    compare_each_start,
    each_start,
    own_choices,
    select_each_start,
)

STARTS = [SimpleNamespace(name="lab01", source="a"), SimpleNamespace(name="minilm_l6", source="b")]


def recipe(run, **options):
    return run, options


def choose(name):
    if name == "lab01":
        return Chosen({"bottleneck_dim": 64}, "grid: 'adapters d=64'", True)
    return Chosen({"bottleneck_dim": 32}, "no choice for 'minilm_l6'", False)


def test_own_choices_gives_each_start_its_own_row_and_says_which_is_a_fallback():
    own, sources = own_choices("adapters", recipe, STARTS, choose, {"placement": "pfeiffer"})
    assert own == {
        "lab01": [("adapters", recipe, {"bottleneck_dim": 64, "placement": "pfeiffer"})],
        "minilm_l6": [
            (
                "adapters (fallback: minilm_l6)",
                recipe,
                {"bottleneck_dim": 32, "placement": "pfeiffer"},
            )
        ],
    }
    assert sources == {"lab01": "grid: 'adapters d=64'", "minilm_l6": "no choice for 'minilm_l6'"}
    # The shared rows first, then each start's own in the order given.
    tutorial = {start.name: [("tutorial", recipe, {})] for start in STARTS}
    rows = each_start(STARTS, [("full", recipe, {})], tutorial, own)
    assert [label for label, _, _ in rows["lab01"]] == ["full", "tutorial", "adapters"]
    assert [label for label, _, _ in rows["minilm_l6"]] == [
        "full",
        "tutorial",
        "adapters (fallback: minilm_l6)",
    ]


@pytest.fixture
def harness(monkeypatch):
    """`run_comparison`, `print_comparison` and `record_if_requested` replaced by recorders."""
    calls = {"run": [], "printed": [], "recorded": []}

    def run_comparison(variants, starts, data, args):
        (start,) = starts  # one start per call
        calls["run"].append((start.name, [label for label, _, _ in variants]))
        return [
            {"start": start.name, "label": label, "seed": seed}
            for seed in (1, 0)
            for label, _, _ in variants
        ]

    def print_comparison(rows, data, args, baseline):
        calls["printed"].append(([(r["start"], r["label"], r["seed"]) for r in rows], baseline))
        return ["summary"]

    monkeypatch.setattr(own_choice_comparison, "run_comparison", run_comparison)
    monkeypatch.setattr(own_choice_comparison, "print_comparison", print_comparison)
    monkeypatch.setattr(
        own_choice_comparison,
        "record_if_requested",
        lambda args, results: calls["recorded"].append(results),
    )
    monkeypatch.setattr(
        own_choice_comparison, "comparison_settings", lambda data, args: {"seeds": 2}
    )
    return calls


def _args(**changes):
    return argparse.Namespace(**{"record": None, "methods": "all", **changes})


def test_every_start_runs_the_shared_rows_and_its_own_and_never_another_starts(harness):
    own = {"lab01": [("adapters", recipe, {})], "minilm_l6": [("adapters (x)", recipe, {})]}
    by_start = each_start(STARTS, [("full", recipe, {})], own)
    rows = compare_each_start(by_start, STARTS, {}, _args(record="r.json"), baseline="full")
    assert harness["run"] == [
        ("lab01", ["full", "adapters"]),
        ("minilm_l6", ["full", "adapters (x)"]),
    ]
    assert len(rows) == 8
    # Printed once, sorted by start, then the label's first appearance, then seed.
    ((printed, baseline),) = harness["printed"]
    assert printed[:4] == [
        ("lab01", "full", 0),
        ("lab01", "full", 1),
        ("lab01", "adapters", 0),
        ("lab01", "adapters", 1),
    ]
    assert baseline == "full"
    (record,) = harness["recorded"]
    assert record["starts"] == {"lab01": "a", "minilm_l6": "b"}
    assert record["rows"] == ["summary"] and record["seeds"] == 2


def test_a_child_process_runs_its_seed_and_leaves_printing_and_recording_to_its_parent(harness):
    by_start = each_start(STARTS[:1], [("full", recipe, {})])
    compare_each_start(by_start, STARTS[:1], {}, _args(only_seed=0))
    assert harness["run"] == [("lab01", ["full"])]
    assert harness["printed"] == [] and harness["recorded"] == []


def test_methods_select_a_row_that_only_one_start_has(harness):
    own = {"lab01": [("factor=1 (chosen: lab01)", recipe, {})]}
    by_start = each_start(STARTS, [("full", recipe, {}), ("ewc", recipe, {})], own)
    parser = argparse.ArgumentParser()
    selected = select_each_start(parser, _args(methods="full,factor=1"), by_start)
    compare_each_start(selected, STARTS, {}, _args())
    assert harness["run"] == [
        ("lab01", ["full", "factor=1 (chosen: lab01)"]),
        ("minilm_l6", ["full"]),
    ]
    # A label no start has is refused, naming the labels there are.
    with pytest.raises(SystemExit):
        select_each_start(parser, _args(methods="lora"), by_start)
