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


def test_the_claim_is_read_as_each_task_s_gap_to_the_majority_against_the_spread():
    def task(accuracy, sd):
        return {"test_accuracy": accuracy, "test_accuracy_sd": sd, "majority_accuracy": 0.5}

    text = lab12_pairs.majority_lines({"rte": task(0.56, 0.05), "mrpc": task(0.8, 0.01)})
    assert "rte +6.00 ± 5.00 points, above the majority class beyond the seeds' spread" in text
    assert "mrpc +30.00 ± 1.00 points, above" in text
    text = lab12_pairs.majority_lines({"rte": task(0.52, 0.05)})
    assert "rte +2.00 ± 5.00 points, not above the majority class beyond the seeds' spread" in text
    one = lab12_pairs.majority_lines({"rte": {**task(0.6, None)}})
    assert "rte +10.00 points, one seed: no spread to read it against" in one


def test_the_cls_note_is_given_only_to_an_rte_row_near_its_majority_class():
    def rte(accuracy):
        return {
            "rte": {
                "train": 100,
                "test": 50,
                "val_accuracy_per_epoch": [0.5],
                "test_accuracy": accuracy,
                "test_f1": None,
                "majority_accuracy": 0.527,
                "settings": {"pooling": "cls"},
            }
        }

    assert "RTE sits near its majority class" in lab12_pairs.render(rte(0.55))
    assert "RTE sits near its majority class" not in lab12_pairs.render(rte(0.70))
