from benchmarks.reports import lab23_related_multitask
from kbert.metrics.seed_comparison import paired_difference

ALONE = {"rte": [0.55, 0.60, 0.52], "mrpc": [0.80, 0.81, 0.82]}
ALONE_F1 = [0.86, 0.87, 0.88]


def _task(runs, alone=None, at_majority=0):
    entry = {"mean": sum(runs) / len(runs), "sd": 0.01, "runs": runs}
    if alone is not None:
        entry["vs_alone"] = paired_difference(runs, alone)
    return entry, at_majority


def _row(rte=None, mrpc=None, mrpc_f1=None, joint=True):
    row = {}
    if rte is not None:
        entry, majority = _task(rte, ALONE["rte"] if joint else None, at_majority=1)
        row["rte"] = {"accuracy": entry, "runs_at_majority": majority}
    if mrpc is not None:
        accuracy, _ = _task(mrpc, ALONE["mrpc"] if joint else None)
        f1, _ = _task(mrpc_f1, ALONE_F1 if joint else None)
        row["mrpc"] = {"accuracy": accuracy, "f1": f1, "runs_at_majority": 0}
    return row


RESULTS = {
    "model": "minilm_l6",
    "settings": {"learning_rate": 0.0003, "temperature": 2.0, "seeds": 3},
    "tasks": {
        "rte": {"train_examples": 500, "test_examples": 277, "majority_accuracy": 0.527},
        "mrpc": {
            "train_examples": 1500,
            "test_examples": 408,
            "majority_accuracy": 0.684,
            "majority_f1": 0.812,
        },
    },
    "plans": {
        "joint_proportional": {
            "steps": 126,
            "probability": {"rte": 0.254, "mrpc": 0.746},
            "updates": {"rte": 32, "mrpc": 94},
        },
        "joint_temperature": {
            "steps": 126,
            "probability": {"rte": 0.368, "mrpc": 0.632},
            "updates": {"rte": 46.4, "mrpc": 79.6},
        },
    },
    "rows": {
        "rte_alone": _row(rte=ALONE["rte"], joint=False),
        "mrpc_alone": _row(mrpc=ALONE["mrpc"], mrpc_f1=ALONE_F1, joint=False),
        "joint_proportional": _row([0.60, 0.65, 0.60], [0.80, 0.82, 0.81], [0.86, 0.88, 0.87]),
        "joint_temperature": _row([0.56, 0.60, 0.52], [0.78, 0.79, 0.80], [0.85, 0.86, 0.87]),
    },
}

# RTE's test accuracy per row and seed, as the lab's `runs` list holds it (every row of a seed
# trains on the same subsets from the same start). The control trains both tasks; the lab scores
# both heads and reports RTE only.
RTE_RUNS = {
    "rte_alone": ALONE["rte"],
    "joint_proportional": [0.60, 0.65, 0.60],
    "joint_temperature": [0.56, 0.60, 0.52],
    "joint_shuffled_mrpc": [0.55, 0.62, 0.56],
}


def _runs():
    runs = []
    for seed in range(3):
        for row, accuracies in RTE_RUNS.items():
            run = {"row": row, "seed": seed, "rte": {"accuracy": accuracies[seed]}}
            if row != "rte_alone":
                run["mrpc"] = {"accuracy": 0.8, "f1": 0.86, "at_majority": False}
            runs.append(run | {"train_s": 10.0})
        runs.append({"row": "mrpc_alone", "seed": seed, "mrpc": {"accuracy": 0.8}})
    return runs


def _with_control():
    """The record as the lab writes it: the control row's RTE summary, its plan, the runs."""
    rows = {**RESULTS["rows"], "joint_shuffled_mrpc": _row(rte=RTE_RUNS["joint_shuffled_mrpc"])}
    plans = {**RESULTS["plans"], "joint_shuffled_mrpc": RESULTS["plans"]["joint_proportional"]}
    return {**RESULTS, "rows": rows, "plans": plans, "runs": _runs()}


def test_the_multitask_lab_renders_each_row_and_task_with_its_paired_difference():
    page = lab23_related_multitask.render(RESULTS)
    assert "| rte_alone | RTE alone | rte | accuracy | 0.557 ± 0.010 (n=3) | – | 1 of 3 |" in page
    # RTE per-seed differences to alone: 0.05, 0.05, 0.08.
    assert (
        "| joint_proportional | RTE + MRPC, proportional mixing | rte | accuracy | "
        "0.617 ± 0.010 (n=3) | +6.00 ± 1.73 (better) | 1 of 3 |" in page
    )
    # MRPC accuracy −0.02 at every seed: worse, with no spread.
    assert "| mrpc | accuracy | 0.790 ± 0.010 (n=3) | -2.00 ± 0.00 (worse) |" in page
    assert page.count("| joint_temperature |") == 3 and page.count("| f1 |") == 3
    assert "F1 of always 'paraphrase' 0.812" in page
    assert "joint_temperature: 126 steps an epoch, per task {'rte': 46.4" in page
    headline = lab23_related_multitask.headline(RESULTS)
    assert headline.startswith(
        "RTE with MRPC vs alone (accuracy points; a joint run makes 126 encoder updates an "
        "epoch, RTE alone 32): proportional +6.0 ± 1.7"
    )
    assert "temperature +0.3 ± 0.6 (no difference)" in headline
    assert "MRPC with RTE vs alone (accuracy points): proportional" in headline
    assert headline.endswith("(RTE majority 0.527)")
    # No runs in this record: nothing paired beyond the rows' differences to alone.
    assert "shuffled" not in headline and "temperature −" not in headline
    assert "temperature mixing minus" not in page


def test_the_headline_gives_the_shuffled_control_and_temperature_against_proportional():
    headline = lab23_related_multitask.headline(_with_control())
    # Joint minus control per seed: 0.05, 0.03, 0.04.
    assert (
        "; RTE with MRPC vs with MRPC's labels shuffled (the same updates): +4.0 ± 1.0 (better); "
        in headline
    )
    # Temperature minus proportional per seed: -0.04, -0.05, -0.08.
    assert "; RTE temperature − proportional mixing: -5.7 ± 2.1 (worse); MRPC with RTE" in headline
    assert headline.endswith("(RTE majority 0.527)")


def test_the_page_pairs_temperature_with_proportional_mixing_seed_by_seed():
    results = _with_control()
    line = lab23_related_multitask.temperature_line(results)
    assert line == (
        "RTE with MRPC, temperature mixing minus proportional mixing (32 → 46.4 RTE updates an "
        "epoch of the same total), test accuracy paired by seed (points): -5.67 ± 2.08 (worse); "
        "the claim above expects it better."
    )
    page = lab23_related_multitask.render(results)
    assert line in page and lab23_related_multitask.control_line(results) in page
    assert "| joint_shuffled_mrpc | RTE + MRPC with shuffled labels (control) | rte |" in page
    # Temperature runs equal to proportional's at every seed: inside the spread.
    results["runs"] = [
        run | {"rte": {"accuracy": 0.6}} if run["row"].startswith("joint_") else run
        for run in results["runs"]
    ]
    assert "+0.00 ± 0.00 (no difference)" in lab23_related_multitask.temperature_line(results)


def test_the_control_row_reads_rte_with_mrpc_against_mrpc_with_shuffled_labels():
    def run(row, seed, accuracy):
        return {"row": row, "seed": seed, "rte": {"accuracy": accuracy}}

    runs = [{"row": "mrpc_alone", "seed": 0, "mrpc": {"accuracy": 0.8}}]  # no RTE in it
    runs += [run("joint_proportional", s, a) for s, a in enumerate((0.60, 0.62, 0.58))]
    runs += [run("joint_shuffled_mrpc", s, a) for s, a in enumerate((0.55, 0.56, 0.55))]
    results = {**RESULTS, "runs": runs}
    line = lab23_related_multitask.control_line(results)
    assert (
        "MRPC's labels shuffled, test accuracy paired by seed (points): +4.67 ± 1.53 (better)"
        in (line)
    )
    assert line in lab23_related_multitask.render(results)
    assert lab23_related_multitask.control_line(RESULTS) == ""  # a record before the control


def test_each_row_s_rate_chosen_on_validation_is_a_column_where_recorded():
    choices = {
        row: {"chosen": rate, "chosen_on": "validation_accuracy", "tried": []}
        for row, rate in zip(RESULTS["rows"], (1e-4, 3e-4, 9e-4, 3e-4), strict=False)
    }
    page = lab23_related_multitask.render({**RESULTS, "rate_choices": choices})
    assert "| row | trains | peak rate | task | metric | test |" in page
    assert "| rte_alone | RTE alone | 0.0001 | rte | accuracy | 0.557 ± 0.010 (n=3) |" in page
    assert "each row's peak rate chosen on validation at the first seed" in page
