"""Lab 23: multi-task fine-tuning with related tasks: RTE and MRPC on one encoder.

Reproduces §4.3.B of the NAACL 2019 tutorial "Transfer Learning in NLP" (more signal from
related tasks: fine-tune on several tasks at once; Liu et al. 2019, "MT-DNN"): one pretrained
MiniLM-L6 encoder is shared by two heads, RTE (entailment pairs) and MRPC (paraphrase pairs),
and every step trains on a batch of one task, drawn at random. Lab06 covers a classifier with
an auxiliary LM loss; here both losses are supervised and the tasks are related (both ask how
two sentences relate), the setting in which MT-DNN reports gains on the small task.

Rows, each on the same seeded training subsets, from the same pretrained start, at the same
peak rate with the same schedule recipe (`kbert.train.TrainingSettings`):

- `rte_alone`, `mrpc_alone`: one task, one head (`fine_tune_classifier`);
- `joint_proportional`: both heads, tasks drawn in proportion to their batches (MT-DNN's
  mixing: all tasks' batches shuffled together), every batch of each task once per epoch;
- `joint_temperature`: both heads, task t drawn with probability ∝ n_t^(1/T), T = 2 by default
  (`--temperature`; Raffel et al. 2020's temperature-scaled mixing, T5 §3.5.2), so the small
  task (RTE) is drawn more often than its size alone would give;
- `joint_shuffled_mrpc`, the control: `joint_proportional` with MRPC's training labels shuffled
  (the same pairs and steps, no paraphrase signal left). A joint run gives the shared encoder
  MRPC's updates on top of RTE's; RTE in this row gets the same extra updates without the
  related task's content, so RTE's gain in `joint_proportional` over this row is what the
  related task teaches, not the extra steps (only its RTE scores are reported).

The budget is the same total number of updates: a joint run makes exactly as many steps as the
two single-task runs together (per epoch, RTE's batches plus MRPC's). That is the compute a user
spends either way (one model for two tasks, or two models), and with proportional sampling it is
also, exactly, the number of updates that touch each task in its single-task run (every batch
once per epoch), so `joint_proportional` meets both budgets at once. Temperature sampling keeps
the total and moves updates from MRPC to RTE; the record lists each row's task probabilities
and the updates each task gets per epoch (expected, for temperature sampling: its draws repeat
the smaller task's batches and leave some of the larger task's out).

Every run trains for a fixed number of epochs and is scored once on test (GLUE's dev sets, as in
lab12). Each row has its own peak rate, chosen on validation (`kbert.train.rate_on_validation`):
the first seed trains at each of `--learning-rates`, scored on the held-out 10% of each training
file (lab12's validation split, never trained on) by the accuracy of the tasks the row reports
(their mean for a joint row; RTE alone for the control), and the other seeds train at the rate
chosen; test never chooses. Reported per task: test
accuracy (RTE, MRPC) and F1 of the paraphrase class (MRPC, GLUE's metric), mean ± sd over
`--seeds` seeds, the seed-paired difference of each joint row to the task alone
(`kbert.metrics.seed_comparison`: "no difference" inside the spread), on RTE the claims' two
contrasts paired the same way (with MRPC against the shuffled-MRPC control; temperature against
proportional mixing), and the majority class's
accuracy beside the runs that landed there (`kbert.metrics.majority_class.at_majority`:
few-pair RTE can end predicting one class, Mosbach et al. 2021).

Settings come from the repository's chosen defaults: the rates tried are full fine-tuning's,
chosen on validation for MiniLM-L6 on TREC-6 by `benchmarks/adaptation_grid.py` and read from its
record (`kbert.train.chosen_on_validation.chosen_rates`), a third and three times it (a joint
run, or 500 RTE pairs, need not suit the rate chosen for TREC-6), batches of
16 and MiniLM-L6 read by the pooling it was trained for (`kbert.checkpoints.trained_pooling`:
mean) as lab21. Sizes are cut for a 2-core CPU: a seeded subsample of each training file,
RTE smaller than MRPC (as in the full files) so the two mixings differ.

What MT-DNN leads one to expect: the small task gains from the related one (RTE joint above RTE
alone, and above the shuffled-MRPC control), the large task loses little, and temperature
sampling helps the small task more than proportional sampling. What the record found:
docs/results.md#lab23_related_multitask.

    python labs/lab23_related_multitask.py [--record docs/results/lab23_related_multitask.json]
    python labs/lab23_related_multitask.py --seeds 1 --rte-examples 200 --mrpc-examples 600
"""

import argparse
import dataclasses

import kbert.quiet  # noqa: F401  (TensorFlow's start-up lines filtered)

import keras
import numpy as np
import tensorflow as tf

from kbert.checkpoints import load_pretrained, trained_pooling
from kbert.data import CLASSIFICATION_TASKS, load_classification_task, multitask_dataset
from kbert.data.classification_dataset import classification_dataset
from kbert.data.multitask_batches import task_sampling_probabilities
from kbert.data.token_classification_features import IGNORE_INDEX
from kbert.layers import ClassificationHead
from kbert.metrics.classification_metrics import binary_f1
from kbert.metrics.majority_class import at_majority, majority_accuracy
from kbert.metrics.seed_comparison import format_difference, paired_difference, seed_summary
from kbert.models import MultitaskModel, SequenceClassifier
from kbert.tasks import evaluate_classifier
from kbert.text import BertPreprocessor
from kbert.train import TrainingSettings, count_batches, fine_tune_classifier
from kbert.train.fine_tuning import compile_and_fit
from kbert.train.lab_run_arguments import (
    add_lab_run_arguments,
    add_learning_rates_argument,
    finish_lab,
    resolve_learning_rates,
)
from kbert.train.precision import resolve_dtype
from kbert.train.rate_on_validation import rate_then_seeds

TASKS = ("rte", "mrpc")
# Each row: the tasks it trains, and how a joint row draws a task per step.
ROWS = {
    "rte_alone": {"tasks": ("rte",), "sampling": None},
    "mrpc_alone": {"tasks": ("mrpc",), "sampling": None},
    "joint_proportional": {"tasks": TASKS, "sampling": "proportional"},
    "joint_temperature": {"tasks": TASKS, "sampling": "temperature"},
    # The control: MRPC's labels shuffled; trains both tasks, reports RTE only.
    "joint_shuffled_mrpc": {"tasks": ("rte",), "sampling": "proportional", "shuffled": "mrpc"},
}
ALONE = {"rte": "rte_alone", "mrpc": "mrpc_alone"}
# The claims' own comparisons beyond "vs alone", on RTE (the small task) and paired by seed:
# what the related task's content adds at the same updates, and what temperature mixing adds.
CONTRASTS = (
    ("joint_proportional", "joint_shuffled_mrpc"),
    ("joint_temperature", "joint_proportional"),
)


def metrics_of(task):
    """The test metrics reported for `task`: accuracy, and F1 where GLUE reports it (MRPC)."""
    return ("accuracy", "f1") if CLASSIFICATION_TASKS[task].metric == "f1" else ("accuracy",)


def training(args, seed, learning_rate):
    return TrainingSettings(
        epochs=args.epochs,
        batch_size=args.batch_size,
        learning_rate=learning_rate,
        seed=seed,
        verbose=args.verbose,
    )


def task_batches(preprocessor, examples, settings):
    """One task's training batches, exactly as `fine_tune_classifier` makes them, sized."""
    batches = classification_dataset(
        preprocessor,
        examples.texts,
        examples.text_pairs,
        examples.labels,
        settings.batch_size,
        training=True,
        seed=settings.seed,
    )
    # Length-bucketed batches have unknown cardinality: count them (the count does not depend
    # on the order), so proportional sampling can read each task's size.
    return batches.apply(tf.data.experimental.assert_cardinality(count_batches(batches)))


# %% The technique: one task per step. Each task's batches carry its own labels and, for every
# other task, a placeholder of IGNORE_INDEX labels that `MultitaskModel` scores as absent (loss
# 0, head untouched), so a step trains the shared encoder and one head. Proportional mixing
# (num_steps=None) spends each batch once per epoch; temperature mixing repeats each task's
# batches and draws by its probability at every step, for as many steps as proportional makes.
def mixed_batches(batches, sampling, temperature, seed):
    """The joint run's batches and what each task gets per epoch.

    Args:
        batches: dict from task name to its sized `tf.data.Dataset` of `(x, labels)`.
        sampling: "proportional" or "temperature".
        temperature: float > 0, T of "temperature" (probability ∝ batches^(1/T)).
        seed: int. Seeds the task draws.

    Returns:
        `(dataset, plan)`: the mixed `(x, {task: labels})` batches, and a dict with `steps`
        per epoch, each task's `probability` and its `updates` per epoch (expected, for
        temperature sampling).
    """
    sizes = {task: int(dataset.cardinality()) for task, dataset in batches.items()}
    steps = sum(sizes.values())  # the single-task runs' steps together: the equal budget
    probabilities = task_sampling_probabilities(batches, sampling, temperature)
    if sampling == "proportional":
        mixed = multitask_dataset(batches, "proportional", seed=seed)
        updates = sizes  # every batch once: each task exactly its single-task run's updates
    else:
        mixed = multitask_dataset(
            batches, sampling, temperature=temperature, num_steps=steps, seed=seed
        )
        updates = {task: round(p * steps, 1) for task, p in probabilities.items()}
    plan = {
        "steps": steps,
        "probability": {task: round(p, 4) for task, p in probabilities.items()},
        "updates": updates,
    }
    return mixed, plan


def show_draws(mixed, count=32):
    """Prints which task each of the first `count` steps of one pass trains (its initial).

    Every pass over the mixture (each epoch of `fit`) draws anew, and a few steps can run
    long on one task by chance: the shares hold over the epoch, not over any few steps.

    Returns:
        list of str, the task of each step: the one whose labels are not all IGNORE_INDEX.
    """
    drawn = []
    for _, y in mixed.take(count):
        present = [task for task, labels in y.items() if np.any(labels.numpy() != IGNORE_INDEX)]
        if len(present) != 1:
            raise ValueError(f"a mixed batch must carry one task's labels; it carries {present}")
        drawn.append(present[0])
    print(f"  first {len(drawn)} steps: {''.join(task[0].upper() for task in drawn)}")
    return drawn


def score(model, preprocessor, test, task):
    """Test accuracy (and MRPC's F1), and whether the run sits at the majority class."""
    positive = CLASSIFICATION_TASKS[task].positive_label
    report = evaluate_classifier(model, preprocessor, test, positive_label=positive)
    scores = {metric: round(float(report[metric]), 4) for metric in metrics_of(task)}
    scores["at_majority"] = at_majority(report["predictions"], test.labels)
    return scores


def start(args, seed):
    keras.backend.clear_session()  # each run builds new models: free the last run's graphs
    # The same start and the same draws for every row of a seed; a joint run builds two heads
    # where a task alone builds one, so its heads' initial weights differ from alone's.
    keras.utils.set_random_seed(seed)
    encoder, tokenizer = load_pretrained(args.model, dtype=args.dtype)
    return encoder, BertPreprocessor(tokenizer, sequence_length=args.sequence_length)


def validation_accuracy(model, preprocessor, validation, tasks):
    """The mean accuracy over `tasks` on their held-out questions (`validation`: task → its
    `Examples`): the score a row's rate is chosen by."""
    accuracies = [
        evaluate_classifier(model(task), preprocessor, validation[task])["accuracy"]
        for task in tasks
    ]
    return round(float(np.mean(accuracies)), 4)


def alone_run(args, task, data, settings):
    """One task alone: a `SequenceClassifier` fine-tuned on its subset, scored on its test
    (and on its validation questions where `data` holds them)."""
    encoder, preprocessor = start(args, settings.seed)
    train = data["train"][task]
    classifier = SequenceClassifier(encoder, len(train.label_names), pooling=args.pooling)
    _, seconds = fine_tune_classifier(classifier, preprocessor, train, settings=settings)
    run = {task: score(classifier, preprocessor, data["test"][task], task)}
    if "validation" in data:
        run["validation_accuracy"] = validation_accuracy(
            lambda _: classifier, preprocessor, data["validation"], [task]
        )
    return run | {"train_s": round(seconds, 1)}


def shuffled_labels(examples, seed):
    """`examples` with their labels permuted by `seed`: the same texts and class counts, and
    no relation left between a pair and its label."""
    labels = np.random.default_rng(seed).permutation(examples.labels)
    return dataclasses.replace(examples, labels=labels, source=f"{examples.source} (shuffled)")


def joint_run(args, spec, data, settings, show):
    """Both tasks on one encoder, one task per step; each head scored on its task's test.

    `spec` is the row's (`ROWS`): its `sampling`, and the task whose training labels are
    `shuffled` in the control row. `data` maps "train", "test" (and, where the rate is chosen,
    "validation") to a dict from task name to its `Examples`.
    """
    train, tests, sampling, seed = data["train"], data["test"], spec["sampling"], settings.seed
    if spec.get("shuffled") is not None:
        train = {**train, spec["shuffled"]: shuffled_labels(train[spec["shuffled"]], 2000 + seed)}
    encoder, preprocessor = start(args, seed)
    heads = {
        task: ClassificationHead(len(train[task].label_names), pooling=args.pooling)
        for task in TASKS
    }
    model = MultitaskModel(encoder, heads)
    batches = {task: task_batches(preprocessor, train[task], settings) for task in TASKS}
    mixed, plan = mixed_batches(batches, sampling, args.temperature, seed)
    if show:
        print(
            f"{sampling} mixing: probabilities {plan['probability']}, {plan['steps']} steps "
            f"an epoch, updates per task {plan['updates']}"
        )
        show_draws(mixed)
    # The same optimizer recipe as the single-task runs, over exactly this run's steps; the
    # loss is the model's own (`MultitaskModel.compute_loss`: the drawn task's cross-entropy).
    history, seconds = compile_and_fit(model, settings, mixed, None, plan["steps"], loss=None)
    run = {task: score(model.task_model(task), preprocessor, tests[task], task) for task in TASKS}
    run["train_accuracy"] = {
        task: round(float(history.history[f"{task}_accuracy"][-1]), 4) for task in TASKS
    }
    if "validation" in data:  # the tasks the row reports (RTE alone for the control)
        run["validation_accuracy"] = validation_accuracy(
            model.task_model, preprocessor, data["validation"], spec["tasks"]
        )
    return run | {"plan": plan, "train_s": round(seconds, 1)}


def row_runs(args, row, data_for, seeds, plans):
    """One row at every seed, at its peak rate chosen on validation (`rate_then_seeds`):
    `(runs in seed order, the rate choice)`, printing each run.

    `data_for(seed, choosing)` gives the seed's data ("train", "test", and "validation" when
    `choosing`). A joint row's plan (steps, probabilities, updates) goes into `plans`; its first
    run shows its first steps' tasks.
    """
    spec = ROWS[row]

    def train(rate, seed):
        choosing = seed == seeds[0] and len(args.learning_rates) > 1
        data = data_for(seed, choosing)
        if spec["sampling"] is None:
            (task,) = spec["tasks"]
            run = alone_run(args, task, data, training(args, seed, rate))
        else:
            run = joint_run(args, spec, data, training(args, seed, rate), row not in plans)
            plans[row] = run.pop("plan")
        held = (
            f", validation {run['validation_accuracy']:.4f}" if "validation_accuracy" in run else ""
        )
        print(
            f"seed {seed}, {row}, lr {rate:g}: "
            + "; ".join(
                f"{task} " + ", ".join(f"{m} {run[task][m]:.4f}" for m in metrics_of(task))
                for task in spec["tasks"]
            )
            + f"{held} ({run['train_s']:.0f} s)",
            flush=True,
        )
        return run | {"learning_rate": rate}

    return rate_then_seeds(args.learning_rates, seeds, train, "validation_accuracy", spec["tasks"])


def summarize(results):
    """Per row and task: each metric's mean ± sd over seeds and its paired difference to alone.

    Args:
        results: dict row → task → metric → list of floats over seeds (same seed order), and
            row → task → "at_majority" → list of bool.
    """
    rows = {}
    for row, tasks in results.items():
        rows[row] = {}
        for task, values in tasks.items():
            summary = {}
            for metric in metrics_of(task):
                summary[metric] = seed_summary(values[metric])
                if row != ALONE[task]:
                    summary[metric]["vs_alone"] = paired_difference(
                        values[metric], results[ALONE[task]][task][metric]
                    )
            summary["runs_at_majority"] = int(sum(values["at_majority"]))
            rows[row][task] = summary
    return rows


def contrasts(results):
    """RTE's test accuracy, each of `CONTRASTS`' rows minus its baseline row, paired by seed:
    `{"row − baseline": paired_difference}`."""
    return {
        f"{row} − {baseline}": paired_difference(
            results[row]["rte"]["accuracy"], results[baseline]["rte"]["accuracy"]
        )
        for row, baseline in CONTRASTS
    }


def task_facts(train, tests):
    """Per task: training and test pairs, the majority class's test accuracy (and MRPC's F1
    of always answering "paraphrase", the baseline GLUE's F1 is read against)."""
    tasks = {
        task: {
            "train_examples": len(train[task]),
            "test_examples": len(tests[task]),
            "majority_accuracy": round(majority_accuracy(tests[task].labels), 4),
        }
        for task in TASKS
    }
    positive = CLASSIFICATION_TASKS["mrpc"].label_names.names.index("paraphrase")
    always = np.full(len(tests["mrpc"]), positive)
    tasks["mrpc"]["majority_f1"] = round(binary_f1(tests["mrpc"].labels, always, positive), 4)
    return tasks


def print_table(report, args):
    """The results table: each row's test metrics per task, mean ± sd, paired to alone, and its
    rate chosen on validation; then the claims' RTE contrasts (`contrasts`). `report` holds
    "rows", "tasks", "plans", "rte_contrasts" and "rate_choices"."""
    rows, tasks, plans = report["rows"], report["tasks"], report["plans"]
    paired, choices = report["rte_contrasts"], report["rate_choices"]
    print(
        f"\n{args.model} ({args.pooling} pooling), rates tried {args.learning_rates}, batch "
        f"{args.batch_size}, {args.sequence_length} tokens, {args.epochs} epoch(s), "
        f"temperature {args.temperature}, {args.seeds} seed(s)"
    )
    print(
        "row                 rate     task  metric    test mean ± sd   vs task alone        "
        "at majority"
    )
    for row, row_tasks in rows.items():
        rate = f"{choices[row]['chosen']:g}"
        for task, summary in row_tasks.items():
            for metric in metrics_of(task):
                entry = summary[metric]
                spread = "" if entry["sd"] is None else f" ± {entry['sd']:.4f}"
                print(
                    f"{row:18s}  {rate:7s}  {task:4s}  {metric:8s}  {entry['mean']:.4f}"
                    f"{spread:9s}  "
                    f"{format_difference(entry.get('vs_alone')):19s}  "
                    f"{summary['runs_at_majority']} of {args.seeds}"
                )
    for task, about in tasks.items():
        print(
            f"{task}: majority class accuracy {about['majority_accuracy']:.4f} on "
            f"{about['test_examples']} test pairs; {about['train_examples']} training pairs"
        )
    for row, plan in plans.items():
        print(f"{row}: {plan['steps']} steps an epoch, per task {plan['updates']}")
    for label, difference in paired.items():
        print(f"RTE accuracy, {label} (points, paired by seed): {format_difference(difference)}")


def parse_arguments(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="minilm_l6", help="minilm_l6 or a checkpoint directory")
    parser.add_argument(
        "--pooling",
        default="trained",
        help="trained (kbert.checkpoints.trained_pooling), cls, mean",
    )
    parser.add_argument("--rte-examples", type=int, default=500, help="RTE training pairs (0: all)")
    parser.add_argument(
        "--mrpc-examples", type=int, default=1500, help="MRPC training pairs (0: all)"
    )
    parser.add_argument(
        "--eval-examples", type=int, default=0, help="test pairs scored per task (0: all)"
    )
    parser.add_argument("--temperature", type=float, default=2.0, help="T of temperature mixing")
    parser.add_argument("--sequence-length", type=int, default=128, help="tokens per packed pair")
    parser.add_argument("--batch-size", type=int, default=16)
    # Three passes (BERT's fine-tuning epochs; MT-DNN trains its tasks for several): one pass
    # over 500 RTE pairs is 32 updates, where few-pair RTE runs often end at the majority class
    # (Mosbach et al. 2021: too few iterations, not too few pairs).
    parser.add_argument("--epochs", type=int, default=3, help="epochs of every run (fixed)")
    add_lab_run_arguments(
        parser,
        "runs/lab23_related_multitask",
        "multitask",
        seeds_help="runs per row",
        seed_help="the held-out split",
    )
    add_learning_rates_argument(parser, "row")
    args = parser.parse_args(argv)
    for flag in ("seeds", "epochs", "batch_size", "sequence_length"):
        if getattr(args, flag) < 1:
            parser.error(f"--{flag.replace('_', '-')} must be >= 1; received {getattr(args, flag)}")
    for flag in ("rte_examples", "mrpc_examples", "eval_examples", "seed"):
        if getattr(args, flag) < 0:
            parser.error(f"--{flag.replace('_', '-')} must be >= 0; received {getattr(args, flag)}")
    for flag in ("learning_rate", "temperature"):
        if not getattr(args, flag) > 0:
            parser.error(f"--{flag.replace('_', '-')} must be > 0; received {getattr(args, flag)}")
    resolve_learning_rates(parser, args)
    args.dtype = resolve_dtype(args.dtype)  # "auto": what this machine computes fastest
    if args.pooling == "trained":  # how the checkpoint was trained to be read (MiniLM-L6: mean)
        args.pooling = trained_pooling(args.model)
    return args


def main(argv=None):
    args = parse_arguments(argv)

    # %% The data: each task's training file less its held-out 10% (never trained on), a
    # seeded subsample per seed, and its test set (GLUE dev).
    pools = {
        task: load_classification_task(task, "train", data_dir=args.data_dir, seed=args.seed)
        for task in TASKS
    }
    tests = {
        task: load_classification_task(task, "test", data_dir=args.data_dir).sample(
            args.eval_examples, args.seed
        )
        for task in TASKS
    }
    validation = {  # the held-out 10%: where each row's rate is chosen
        task: load_classification_task(
            task, "validation", data_dir=args.data_dir, seed=args.seed
        ).sample(args.eval_examples, args.seed)
        for task in TASKS
    }
    sizes = {"rte": args.rte_examples, "mrpc": args.mrpc_examples}
    seeds = list(range(args.seed, args.seed + args.seeds))
    subsets = {  # one subsample per seed, the same for every row
        seed: {task: pools[task].sample(sizes[task], 1000 + seed) for task in TASKS}
        for seed in seeds
    }

    def data_for(seed, choosing):
        data = {"train": subsets[seed], "test": tests}
        return data | ({"validation": validation} if choosing else {})

    # %% Every row at its rate: each task alone, then both tasks mixed each way, the same
    # subsets at every seed.
    results = {
        row: {task: {m: [] for m in (*metrics_of(task), "at_majority")} for task in spec["tasks"]}
        for row, spec in ROWS.items()
    }
    runs, plans, choices = [], {}, {}
    for row in ROWS:
        kept, choices[row] = row_runs(args, row, data_for, seeds, plans)
        print(f"{row}: peak rate {choices[row]['chosen']:g} chosen on validation", flush=True)
        for seed, run in zip(seeds, kept, strict=True):
            for task in ROWS[row]["tasks"]:
                for key, value in run[task].items():
                    results[row][task][key].append(value)
            runs.append({"row": row, "seed": seed, **run})
    runs.sort(key=lambda run: run["seed"])  # seed-major, rows in order within a seed
    train = subsets[seeds[-1]]

    # %% Results table: test metrics, mean ± sd over seeds; differences in points, seed-paired.
    rows = summarize(results)
    tasks = task_facts(train, tests)
    report = {
        "model": args.model,
        "tasks": tasks,
        "rows": rows,
        "rte_contrasts": contrasts(results),
        "rate_choices": choices,
        "validation_examples": {task: len(examples) for task, examples in validation.items()},
        "plans": plans,
        "runs": runs,
        "settings": {
            key: getattr(args, key)
            for key in (
                "pooling",
                "learning_rates",
                "batch_size",
                "sequence_length",
                "epochs",
                "temperature",
                "seeds",
                "dtype",
            )
        },
    }
    print_table(report, args)
    finish_lab(args, report)
    return report


if __name__ == "__main__":
    main()
