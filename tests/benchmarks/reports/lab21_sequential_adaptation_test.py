from benchmarks.reports import lab21_sequential_adaptation
from kbert.metrics.seed_comparison import paired_difference

STARTS = ("alone", "sequential", "shuffled")


def _study(size, accuracies, landed):
    """One size of a target as the lab records it: each start's row (mean, a planted sd, its
    seed-paired differences, the count of its runs at the majority class) and its runs."""
    rows = {}
    for start in STARTS:
        runs = accuracies[start]
        rows[start] = {
            "mean": sum(runs) / len(runs),
            "sd": 0.01,
            "runs": runs,
            "runs_at_majority": sum(landed[start]),
        }
        if start != "alone":
            rows[start]["vs_alone"] = paired_difference(runs, accuracies["alone"])
    rows["sequential"]["vs_shuffled"] = paired_difference(
        accuracies["sequential"], accuracies["shuffled"]
    )
    runs = [
        {"size": size, "seed": seed, "start": start, "test_accuracy": value, "at_majority": flag}
        for start in STARTS
        for seed, (value, flag) in enumerate(zip(accuracies[start], landed[start], strict=True))
    ]
    return {str(size): rows}, runs


IMDB_SIZES, IMDB_RUNS = _study(
    100,
    {"alone": [0.70, 0.72, 0.71], "sequential": [0.80, 0.81, 0.83], "shuffled": [0.70, 0.70, 0.71]},
    {start: [False] * 3 for start in STARTS},
)
# RTE, majority 0.527: a run at or below 0.537 is at the majority class. Every run alone landed
# there, so the related task's lead over it comes with those counts beside it.
RTE_SIZES, RTE_RUNS = _study(
    1000,
    {"alone": [0.47, 0.53, 0.50], "sequential": [0.60, 0.58, 0.53], "shuffled": [0.55, 0.56, 0.53]},
    {
        "alone": [True, True, True],
        "sequential": [False, False, True],
        "shuffled": [False, False, True],
    },
)

RESULTS = {
    "model": "minilm_l6",
    "settings": {"learning_rate": 0.0003, "seeds": 3},
    "targets": {
        "imdb": {
            "intermediate": "sst2",
            "intermediate_examples": 2000,
            "intermediate_train_accuracy": {"sequential": 0.85, "shuffled": 0.5},
            "test_examples": 500,
            "majority_accuracy": 0.51,
            "sizes": IMDB_SIZES,
            "runs": IMDB_RUNS,
        },
        "rte": {
            "intermediate": "mrpc",
            "intermediate_examples": 1000,
            "intermediate_train_accuracy": {"sequential": 0.7, "shuffled": 0.6},
            "test_examples": 277,
            "majority_accuracy": 0.527,
            "sizes": RTE_SIZES,
            "runs": RTE_RUNS,
        },
    },
}


def test_the_sequential_lab_renders_each_start_with_its_paired_differences():
    page = lab21_sequential_adaptation.render(RESULTS)
    assert "| imdb | 100 | target alone | 0.710 ± 0.010 (n=3) | – | – | 0.510 | 0 of 3 |" in page
    # Per-seed differences against alone 0.10, 0.09, 0.12; against the control 0.10, 0.11, 0.12.
    assert (
        "| imdb | 100 | sst2, then target | 0.813 ± 0.010 (n=3) | +10.33 ± 1.53 (better) | "
        "+11.00 ± 1.00 (better) | 0.510 | 0 of 3 |" in page
    )
    assert "sst2 (2,000 examples, training accuracy after its epoch: sequential 0.850" in page
    assert "runs at the majority class (all one class, or accuracy within a point of it)" in page
    # No IMDb run landed at the majority class: both differences are read, verdicts and all.
    assert (
        "- imdb at 100 labelled, sst2 first (majority class 0.510): against the target alone "
        "+10.33 ± 1.53 (better); against its shuffled control +11.00 ± 1.00 (better)." in page
    )
    headline = lab21_sequential_adaptation.headline(RESULTS)
    assert headline.startswith("IMDB at 100, SST2 first vs alone (points): +10.3 ± 1.5 (better);")


def test_the_runs_at_the_majority_class_are_counted_beside_each_row():
    # The planted record is what the lab writes: each row's count is its runs' `at_majority`.
    for study in RESULTS["targets"].values():
        for size, rows in study["sizes"].items():
            for start, row in rows.items():
                flags = [
                    run["at_majority"]
                    for run in study["runs"]
                    if str(run["size"]) == size and run["start"] == start
                ]
                assert row["runs_at_majority"] == sum(flags) and len(flags) == len(row["runs"])
    page = lab21_sequential_adaptation.render(RESULTS)
    assert "| rte | 1000 | target alone | 0.500 ± 0.010 (n=3) | – | – | 0.527 | 3 of 3 |" in page
    # Per-seed differences against alone 0.13, 0.05, 0.03: "better" by the spread, in the table.
    assert (
        "| rte | 1000 | mrpc, then target | 0.570 ± 0.010 (n=3) | +7.00 ± 5.29 (better) | "
        "+2.33 ± 2.52 (no difference) | 0.527 | 1 of 3 |" in page
    )
    assert "| rte | 1000 | shuffled-label control, then target | 0.547 ± 0.010 (n=3) |" in page
    assert page.split("| rte | 1000 | shuffled-label")[1].split("\n")[0].endswith("| 1 of 3 |")
    # The prose keeps the verdict and says how many runs of each compared row landed at the
    # majority class: a lead over collapsed runs may be the fewer collapses themselves.
    line = page.split("- rte at 1000 labelled")[1].split("\n")[0]
    assert line == (
        ", mrpc first (majority class 0.527): against the target alone +7.00 ± 5.29 (better); "
        "runs at the majority class 1 of 3 after mrpc, 3 of 3 alone; against its shuffled "
        "control +2.33 ± 2.52 (no difference); runs at the majority class 1 of 3 after mrpc, "
        "1 of 3 after the control."
    )
    headline = lab21_sequential_adaptation.headline(RESULTS)
    assert headline.endswith(
        "RTE at 1000, MRPC first vs alone (points): +7.0 ± 5.3 (better); runs at the majority "
        "class 1 of 3 after MRPC, 3 of 3 alone (majority 0.527)"
    )


def test_no_count_is_added_where_no_compared_run_is_at_the_majority():
    rows = {start: dict(row) for start, row in RTE_SIZES["1000"].items()}
    for row in rows.values():
        row["runs_at_majority"] = 0
    reading = lab21_sequential_adaptation.compared(rows, "alone", "mrpc")
    assert reading == "+7.00 ± 5.29 (better)"
    rows["shuffled"]["runs_at_majority"] = 2  # not a row of this comparison
    assert lab21_sequential_adaptation.compared(rows, "alone", "mrpc") == reading
    assert "2 of 3 after the control" in lab21_sequential_adaptation.compared(
        rows, "shuffled", "mrpc"
    )


def test_each_start_s_target_rate_chosen_on_validation_is_a_column_where_recorded():
    imdb = RESULTS["targets"]["imdb"]
    choices = {
        "100": {
            start: {"chosen": rate, "chosen_on": "validation_accuracy", "tried": []}
            for start, rate in zip(STARTS, (1e-4, 3e-4, 9e-4), strict=True)
        }
    }
    targets = {**RESULTS["targets"], "imdb": {**imdb, "rate_choices": choices}}
    page = lab21_sequential_adaptation.render({**RESULTS, "targets": targets})
    assert "| target | labelled | start | peak rate | test accuracy |" in page
    assert "| imdb | 100 | sst2, then target | 0.0003 |" in page
    assert "| rte | 1000 | target alone | – |" in page  # a study recorded without the choice
    assert "peak rate" not in lab21_sequential_adaptation.render(RESULTS)
