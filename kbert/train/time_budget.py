"""Training for a CPU budget: how many steps fit in M minutes, timed on this machine.

Comparing pretraining objectives (or model families) fairly means giving each the same compute,
and on a shared CPU the honest unit is wall time. `plan_time_budget` trains a throw-away copy of
the model for a few steps in one `fit`, times the warm steps (the first ones trace the graph),
and returns how many checkpoint intervals of `steps_per_epoch` steps fit in the budget. The plan
is kept in a JSON file, so a killed run that resumes trains to the same end as the run it
continues, and a changed budget is refused instead of silently mixing plans.

Time the probe with nothing else running: a busy machine makes steps look slow and the plan short.
"""

import json
import time
from pathlib import Path

import keras

from kbert.checks import check_int
from kbert.files import atomic_write_text


def plan_time_budget(
    probe_model, dataset, budget_minutes, steps_per_epoch, path=None, probe_steps=15, warmup=3
):
    """Checkpoint intervals of `steps_per_epoch` steps that fit in `budget_minutes`.

    Args:
        probe_model: a compiled Keras model of the same shape and settings as the one to train;
            it is trained for `probe_steps` steps and then not needed.
        dataset: the training `tf.data.Dataset` (repeated, or with at least `probe_steps`
            batches).
        budget_minutes: float > 0.
        steps_per_epoch: int >= 1. Steps per checkpoint interval.
        path: str, Path or None. Where the plan is kept: read when it exists (and must have been
            made for the same budget and interval), written otherwise.
        probe_steps: int, default 15. Steps trained in the probe.
        warmup: int, default 3. Probe steps not timed (graph tracing, caches).

    Returns:
        dict: `budget_minutes`, `seconds_per_step`, `steps_per_epoch`, `epochs` (>= 1) and
        `steps` (= epochs × steps_per_epoch).

    Raises:
        ValueError: bad numbers, or a kept plan made for another budget or interval.
    """
    if not isinstance(budget_minutes, (int, float)) or budget_minutes <= 0:
        raise ValueError(f"budget_minutes must be a number > 0; received {budget_minutes!r}")
    steps_per_epoch = check_int(
        "steps_per_epoch", steps_per_epoch, minimum=1, expected="an integer >= 1"
    )
    if not isinstance(warmup, int) or not isinstance(probe_steps, int) or warmup < 1:
        raise ValueError(f"warmup must be an integer >= 1; received {warmup!r}")
    if probe_steps < warmup + 2:
        raise ValueError(
            f"probe_steps must be at least warmup + 2 = {warmup + 2} (two timed steps); "
            f"received {probe_steps!r}"
        )
    path = None if path is None else Path(path)
    if path is not None and path.exists():
        plan = json.loads(path.read_text())
        if (plan["budget_minutes"], plan["steps_per_epoch"]) != (budget_minutes, steps_per_epoch):
            raise ValueError(
                f"{path} was planned for {plan['budget_minutes']} minutes in intervals of "
                f"{plan['steps_per_epoch']} steps, not {budget_minutes} and {steps_per_epoch}; "
                "use another directory or delete it to start over"
            )
        return plan
    ends = []  # one timestamp per step, in one `fit` (a second `fit` would trace again)
    timer = keras.callbacks.LambdaCallback(
        on_train_batch_end=lambda batch, logs: ends.append(time.perf_counter())
    )
    probe_model.fit(
        dataset, epochs=1, steps_per_epoch=probe_steps, shuffle=False, verbose=0, callbacks=[timer]
    )
    seconds_per_step = (ends[-1] - ends[warmup - 1]) / (len(ends) - warmup)
    epochs = max(1, int(budget_minutes * 60 / (seconds_per_step * steps_per_epoch)))
    plan = {
        "budget_minutes": budget_minutes,
        "seconds_per_step": seconds_per_step,
        "steps_per_epoch": steps_per_epoch,
        "epochs": epochs,
        "steps": epochs * steps_per_epoch,
    }
    if path is not None:
        atomic_write_text(path, json.dumps(plan))
    return plan


__all__ = ["plan_time_budget"]
