from benchmarks.reports import lab12_pairs


def test_pairs_flag_a_task_at_the_majority_class():
    pairs = {
        name: {
            "train": 100,
            "test": 50,
            "val_accuracy_per_epoch": [0.5, 0.6],
            "test_accuracy": accuracy,
            "test_f1": f1,
            "majority_accuracy": 0.52,
        }
        for name, accuracy, f1 in (("rte", 0.51, None), ("mrpc", 0.8, 0.85))
    }
    page = lab12_pairs.render(pairs)
    # A record without the count (the oldest): the mean against the majority.
    assert "| rte | 100 | 50 | 0.500 0.600 | 0.510 | - | 0.520 | 1 of 1 (at or below) |" in page
    assert (
        "| mrpc | 100 | 50 | 0.500 0.600 | 0.800 | 0.850 | 0.520 | 0 of 1 (at or below) |" in page
    )
    seeded = {
        "rte": {
            **pairs["rte"],
            "seeds": 2,
            "test_accuracy_sd": 0.02,
            "runs_at_majority": 1,
            "runs": [{"val_accuracy_per_epoch": [0.5]}, {"val_accuracy_per_epoch": [0.6]}],
        }
    }
    page = lab12_pairs.render(seeded)
    assert "| rte | 100 | 50 | 0.500; 0.600 | 0.510 ± 0.020 | - | 0.520 | 1 of 2 |" in page
    # A record of the earlier count (runs at or below the majority) says which it counted.
    older = {"rte": {**seeded["rte"], "runs_at_or_below_majority": 1}}
    del older["rte"]["runs_at_majority"]
    page = lab12_pairs.render(older)
    assert "| 0.520 | 1 of 2 (at or below) |" in page
    assert lab12_pairs.headline(seeded) == (
        "RTE accuracy 0.510 (majority 0.520), 1 of 2 runs at the majority class"
    )
    assert lab12_pairs.headline(older) == "RTE accuracy 0.510 (majority 0.520)"
