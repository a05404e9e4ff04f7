"""The records of `labs/lab23_related_multitask.py`: their section and README headline."""

from benchmarks.reports._common import markdown_table
from kbert.metrics.seed_comparison import format_difference, paired_difference

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


def control_line(results):
    """RTE with the real MRPC against RTE with MRPC's labels shuffled (the same steps), paired by
    seed from the record's runs: what the related task's content adds beyond extra updates ("" in
    records made before the control row)."""
    by_row = {}
    for run in results.get("runs", []):
        if "rte" in run:
            by_row.setdefault(run["row"], {})[run["seed"]] = run["rte"]["accuracy"]
    joint, control = by_row.get("joint_proportional"), by_row.get("joint_shuffled_mrpc")
    if not joint or not control:
        return ""
    seeds = sorted(set(joint) & set(control))
    difference = paired_difference([joint[s] for s in seeds], [control[s] for s in seeds])
    return (
        "RTE with MRPC (proportional) against the same run with MRPC's labels shuffled, test "
        f"accuracy paired by seed (points): {format_difference(difference)}: what the related "
        "task's content adds beyond the extra updates it brings."
    )


def _score(entry):
    spread = "" if entry["sd"] is None else f" ± {entry['sd']:.3f}"
    return f"{entry['mean']:.3f}{spread} (n={len(entry['runs'])})"


def render(results):
    """Test metrics per row and task, with the seed-paired differences to the task alone."""
    table = []
    for row, label in ROWS.items():
        for task, summary in results["rows"].get(row, {}).items():
            for metric, entry in summary.items():
                if metric == "runs_at_majority":
                    continue
                table.append(
                    [
                        row,
                        label,
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
    return "\n".join(
        [
            f"{results['model']} ({described}). Tasks: {tasks}. Joint runs: {plans}. Test "
            "metrics, mean ± sd over seeds; differences in points to the task alone, paired by "
            "seed ('no difference' when the mean is inside the sd); runs at the majority class "
            "(all one class, or accuracy within a point of it):",
            "",
            markdown_table(
                ["row", "trains", "task", "metric", "test", "vs task alone", "at majority"],
                table,
            ),
        ]
        + (["", control_line(results)] if control_line(results) else [])
    )


def headline(results):
    rows = results["rows"]
    parts = []
    for task, other in (("rte", "mrpc"), ("mrpc", "rte")):
        joint = ", ".join(
            f"{row.split('_')[1]} {format_difference(rows[row][task]['accuracy']['vs_alone'], digits=1)}"
            for row in ("joint_proportional", "joint_temperature")
            if row in rows
        )
        parts.append(f"{task.upper()} with {other.upper()} vs alone (accuracy points): {joint}")
    majority = results["tasks"]["rte"]["majority_accuracy"]
    return "; ".join(parts) + f" (RTE majority {majority:.3f})"
