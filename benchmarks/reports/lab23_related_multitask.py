"""The records of `labs/lab23_related_multitask.py`: their section and README headline."""

from benchmarks.reports._common import markdown_table, paired_by_seed
from kbert.metrics.seed_comparison import format_difference

STEMS = ("lab23_related_multitask",)

# What the lab's source claims: stated under the record's title, above what it found.
CLAIM = "MT-DNN (Liu et al. 2019), the tutorial §4.3.B: the small task gains from training with a related one (RTE with MRPC above RTE alone), the large one loses little, and temperature sampling helps the small task more than proportional sampling"

ROWS = {
    "rte_alone": "RTE alone",
    "mrpc_alone": "MRPC alone",
    "joint_proportional": "RTE + MRPC, proportional mixing",
    "joint_temperature": "RTE + MRPC, temperature mixing",
    "joint_shuffled_mrpc": "RTE + MRPC with shuffled labels (control)",
}


def _rte_by_seed(results, row):
    """`{seed: RTE test accuracy}` of `row`, from the record's runs ({} where it has none)."""
    return {
        run["seed"]: run["rte"]["accuracy"]
        for run in results.get("runs", [])
        if run["row"] == row and "rte" in run
    }


def rte_difference(results, row, baseline):
    """RTE test accuracy of `row` minus `baseline`'s, paired by seed over the seeds both ran
    (seed s of every row trains on the same subsets from the same start); None where either
    row has no runs in the record."""
    return paired_by_seed(_rte_by_seed(results, row), _rte_by_seed(results, baseline))[0]


def control_line(results):
    """RTE with the real MRPC against RTE with MRPC's labels shuffled (the same steps), paired by
    seed from the record's runs: what the related task's content adds beyond extra updates ("" in
    records made before the control row)."""
    difference = rte_difference(results, "joint_proportional", "joint_shuffled_mrpc")
    if difference is None:
        return ""
    return (
        "RTE with MRPC (proportional) against the same run with MRPC's labels shuffled, test "
        f"accuracy paired by seed (points): {format_difference(difference)}: what the related "
        "task's content adds beyond the extra updates it brings."
    )


def temperature_line(results):
    """RTE under temperature mixing against proportional mixing, paired by seed: the claim's
    last part (temperature sampling helps the small task more); "" without both rows' runs."""
    difference = rte_difference(results, "joint_temperature", "joint_proportional")
    if difference is None:
        return ""
    updates = {row: plan["updates"]["rte"] for row, plan in results.get("plans", {}).items()}
    moved = (
        f" ({updates['joint_proportional']} → {updates['joint_temperature']} RTE updates an "
        "epoch of the same total)"
        if {"joint_proportional", "joint_temperature"} <= set(updates)
        else ""
    )
    return (
        f"RTE with MRPC, temperature mixing minus proportional mixing{moved}, test accuracy "
        f"paired by seed (points): {format_difference(difference)}; the claim above expects "
        "it better."
    )


def _score(entry):
    spread = "" if entry["sd"] is None else f" ± {entry['sd']:.3f}"
    return f"{entry['mean']:.3f}{spread} (n={len(entry['runs'])})"


def render(results):
    """Test metrics per row and task, with the seed-paired differences to the task alone."""
    table = []
    choices = results.get("rate_choices")
    for row, label in ROWS.items():
        rate = [f"{choices[row]['chosen']:g}" if row in choices else "–"] if choices else []
        for task, summary in results["rows"].get(row, {}).items():
            for metric, entry in summary.items():
                if metric == "runs_at_majority":
                    continue
                table.append(
                    [
                        row,
                        label,
                        *rate,
                        task,
                        metric,
                        _score(entry),
                        format_difference(entry.get("vs_alone")),
                        f"{summary['runs_at_majority']} of {len(entry['runs'])}",
                    ]
                )
    settings = results.get("settings", {})
    described = ", ".join(f"{key} {value}" for key, value in settings.items())
    tasks = "; ".join(
        f"{task} ({about['train_examples']:,} training pairs, {about['test_examples']:,} test "
        f"pairs, majority class accuracy {about['majority_accuracy']:.3f}"
        + (
            f", F1 of always 'paraphrase' {about['majority_f1']:.3f}"
            if "majority_f1" in about
            else ""
        )
        + ")"
        for task, about in results["tasks"].items()
    )
    plans = "; ".join(
        f"{row}: {plan['steps']:,} steps an epoch, per task {plan['updates']} (probabilities "
        f"{plan['probability']})"
        for row, plan in results.get("plans", {}).items()
    )
    paired_lines = [line for line in (control_line(results), temperature_line(results)) if line]
    return "\n".join(
        [
            f"{results['model']} ({described}). Tasks: {tasks}. Joint runs: {plans}. Test "
            "metrics, mean ± sd over seeds; differences in points to the task alone, paired by "
            "seed ('no difference' when the mean is inside the sd); runs at the majority class "
            "(all one class, or accuracy within a point of it)"
            + (
                "; each row's peak rate chosen on validation at the first seed (the mean "
                "accuracy of the tasks it reports on their held-out questions):"
                if choices
                else ":"
            ),
            "",
            markdown_table(
                ["row", "trains", *(["peak rate"] if choices else []), "task", "metric", "test"]
                + ["vs task alone", "at majority"],
                table,
            ),
        ]
        + [part for line in paired_lines for part in ("", line)]
    )


def _joint_updates(results):
    """The encoder updates an epoch of a joint run beside RTE alone's, for the headline's
    parenthesis, from the proportional plan (its RTE updates are exactly RTE alone's batches);
    "" without it."""
    plan = results.get("plans", {}).get("joint_proportional")
    if not plan:
        return ""
    return (
        f"; a joint run makes {plan['steps']:,} encoder updates an epoch, RTE alone "
        f"{plan['updates']['rte']:,}"
    )


def _rte_controls(results):
    """The headline's RTE comparisons that hold the updates or the mixing fixed, paired by seed
    (those the record's runs support)."""
    parts = []
    for label, row, baseline in (
        (
            "RTE with MRPC vs with MRPC's labels shuffled (the same updates)",
            "joint_proportional",
            "joint_shuffled_mrpc",
        ),
        ("RTE temperature − proportional mixing", "joint_temperature", "joint_proportional"),
    ):
        difference = rte_difference(results, row, baseline)
        if difference is not None:
            parts.append(f"{label}: {format_difference(difference, digits=1)}")
    return parts


def headline(results):
    rows = results["rows"]
    parts = []
    for task, other in (("rte", "mrpc"), ("mrpc", "rte")):
        joint = ", ".join(
            f"{row.split('_')[1]} {format_difference(rows[row][task]['accuracy']['vs_alone'], digits=1)}"
            for row in ("joint_proportional", "joint_temperature")
            if row in rows
        )
        updates = _joint_updates(results) if task == "rte" else ""
        parts.append(
            f"{task.upper()} with {other.upper()} vs alone (accuracy points{updates}): {joint}"
        )
        if task == "rte":
            parts += _rte_controls(results)
    majority = results["tasks"]["rte"]["majority_accuracy"]
    return "; ".join(parts) + f" (RTE majority {majority:.3f})"
