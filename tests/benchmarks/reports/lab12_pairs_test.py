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
    # MRPC's F1 beside the F1 of always answering "paraphrase", where the record has it.
    scored = {"mrpc": {**pairs["mrpc"], "majority_f1": 0.81}}
    assert "| 0.850 (always the positive class: 0.810) |" in lab12_pairs.render(scored)


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


def _rte(pooling, accuracies, at_majority=0, **settings):
    """An RTE row as `labs/lab12_pairs.py` writes it, its runs by seed (0, 1, 2...)."""
    runs = [
        {"seed": seed, "val_accuracy_per_epoch": [0.6], "test_accuracy": accuracy}
        for seed, accuracy in enumerate(accuracies)
    ]
    return {
        "rte": {
            "task": "rte",
            "train": 2241,
            "test": 277,
            "seeds": len(runs),
            "runs": runs,
            "val_accuracy_per_epoch": [0.6],
            "test_accuracy": sum(accuracies) / len(accuracies),
            "test_accuracy_sd": 0.03,
            "test_f1": None,
            "majority_accuracy": 0.527,
            "runs_at_majority": at_majority,
            "settings": {"model": "minilm_l6", "pooling": pooling, "dtype": "float32", **settings},
        }
    }


def _write(path, results):
    import json

    record = {"command": "python labs/lab12_pairs.py", "results": results}
    path.write_text(json.dumps(record), encoding="utf-8")


def test_the_section_states_no_cause_for_a_cls_row_near_the_majority():
    # The cause the section once gave (the checkpoint's [CLS] never trained) is measured by no
    # record; a [CLS] row at the majority renders its numbers only.
    page = lab12_pairs.render(_rte("cls", [0.52, 0.53, 0.53], at_majority=3))
    assert "never used" not in page and "sits near" not in page
    assert "| 0.527 | 3 of 3 |" in page


def test_the_cls_run_is_set_beside_the_mean_run_seed_by_seed(tmp_path):
    from benchmarks.reports._families import FAMILIES, for_record

    # The [CLS] record is a lab12 run: its notes come from this module.
    assert for_record(FAMILIES, lab12_pairs.CLS_RECORD) is lab12_pairs
    cls = _rte("cls", [0.52, 0.55, 0.60], at_majority=1)
    # Listed out of seed order: the runs pair by seed, not by position.
    cls["rte"]["runs"].reverse()
    assert lab12_pairs.notes("lab12_pairs", _rte("mean", [0.6] * 3), tmp_path) == []
    (note,) = lab12_pairs.notes(lab12_pairs.CLS_RECORD, cls, tmp_path)
    assert "no lab12_pairs record to compare with yet" in note
    _write(tmp_path / "lab12_pairs.json", _rte("mean", [0.60, 0.58, 0.62]))
    (note,) = lab12_pairs.notes(lab12_pairs.CLS_RECORD, cls, tmp_path)
    # Per seed (points): 52 − 60, 55 − 58, 60 − 62 = −8, −3, −2; mean −4.33, sd 3.21.
    assert "paired by seed (seeds 0, 1, 2), -4.33 ± 3.21 (worse) points" in note
    assert "Runs at the majority class: [CLS] 1 of 3, mean 0 of 3." in note
    assert "differ in" not in note
    # Inside the spread: per seed +2, −3, +2 points (mean 0.33, sd 2.89).
    close = lab12_pairs.pooling_note(
        _rte("cls", [0.62, 0.55, 0.64]), _rte("mean", [0.60, 0.58, 0.62])
    )
    assert "+0.33 ± 2.89 (no difference) points" in close


def test_the_cls_note_names_what_keeps_the_records_apart():
    mean = _rte("mean", [0.60, 0.58, 0.62])
    # The committed default record predates recorded settings (it read [CLS] then).
    older = {"rte": {**mean["rte"]}}
    del older["rte"]["settings"]
    note = lab12_pairs.pooling_note(_rte("cls", [0.5] * 3), older)
    assert note.endswith("not compared, `lab12_pairs` does not record its pooling (expected mean).")
    note = lab12_pairs.pooling_note(_rte("cls", [0.5] * 3), _rte("cls", [0.6] * 3))
    assert "`lab12_pairs` reads cls (expected mean)" in note
    assert "has no RTE row" in lab12_pairs.pooling_note(_rte("cls", [0.5] * 3), {"mrpc": {}})
    unseeded = _rte("mean", [0.6] * 3)
    for run in unseeded["rte"]["runs"]:
        del run["seed"]
    assert "does not record its runs by seed" in lab12_pairs.pooling_note(
        _rte("cls", [0.5] * 3), unseeded
    )
    shifted = _rte("cls", [0.5] * 3)
    for run in shifted["rte"]["runs"]:
        run["seed"] += 10
    assert "share no seed" in lab12_pairs.pooling_note(shifted, mean)
    other = lab12_pairs.pooling_note(_rte("cls", [0.5] * 3, epochs=3), _rte("mean", [0.6] * 3))
    assert "differ" not in other  # a setting only one record holds is not compared
    other = lab12_pairs.pooling_note(
        _rte("cls", [0.5] * 3, dtype="mixed_bfloat16"), _rte("mean", [0.6] * 3)
    )
    assert other.endswith("The two records also differ in dtype (mixed_bfloat16 vs float32).")
