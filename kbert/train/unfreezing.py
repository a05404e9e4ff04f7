"""Callbacks that change which layer groups train while `fit` runs.

`GradualUnfreezing` is ULMFiT's schedule (Howard & Ruder 2018, §3.3): at first only the head
trains; every epoch (or every k steps) one more group from the top joins. `ChainThaw` is
DeepMoji's (Felbo et al. 2017, §3.3): the head alone, then each group alone from the bottom
up, then everything together.

Both act on the named groups of `kbert.train.freezing.layer_groups`. Keras traces the set of
trainable weights into the train function, so after each change they rebuild it with
`model.make_train_function(force=True)`. The optimizer must already know every weight it will
later train: compile and start `fit` with those groups unfrozen (the callbacks freeze them at
`on_train_begin`), or use `DiscriminativeOptimizer`, which builds for all groups up front.
With `steps_per_execution > 1` step schedules count executions, not batches.
"""

import keras

from kbert.keras_internals import optimizer_knows
from kbert.train.freezing import HEAD, freeze, group_variables, layer_groups, unfreeze


def _check_every(every):
    if every == "epoch":
        return every
    if isinstance(every, bool) or not isinstance(every, int) or every < 1:
        raise ValueError(f'every must be "epoch" or an int >= 1 (steps); received {every!r}')
    return every


class _GroupSchedule(keras.callbacks.Callback):
    """Stages of trainable groups, switched at epoch or step boundaries.

    Subclasses define `_stages(groups)`: a list of lists of group names, stage `s` starting at
    epoch `s` (every="epoch") or at step `s * every`.
    """

    def __init__(self, groups, every, epochs, total_steps):
        super().__init__()
        self.groups = None if groups is None else list(groups)
        self.every = _check_every(every)
        self.epochs = epochs
        self.total_steps = total_steps
        self.history = []
        self._stage = -1
        self._step = 0
        if self.groups is not None:
            if not self.groups:
                raise ValueError("groups must name at least one layer group; received []")
            self._check_fits(len(self._stages(self.groups)), epochs, total_steps)

    def _stages(self, groups):
        raise NotImplementedError

    def _default_groups(self, model):
        raise NotImplementedError

    def plan(self, model):
        """The stages this schedule runs on `model`, without changing it.

        Returns:
            list of `(start, groups)`: the epoch (every="epoch") or step at which each stage
            starts, and the layer groups it trains.
        """
        names = self.groups if self.groups is not None else self._default_groups(model)
        return [
            (stage if self.every == "epoch" else stage * self.every, list(trainable))
            for stage, trainable in enumerate(self._stages(names))
        ]

    def required(self, num_stages):
        """Epochs (every="epoch") or steps needed so the last stage trains at least once."""
        if self.every == "epoch":
            return num_stages
        return (num_stages - 1) * self.every + 1

    def _check_fits(self, num_stages, epochs, total_steps):
        needed = self.required(num_stages)
        name = type(self).__name__
        if self.every == "epoch" and epochs is not None and epochs < needed:
            raise ValueError(
                f"{name} with {num_stages} stages needs epochs >= {needed} (one "
                f"per stage); training has epochs={epochs}"
            )
        if self.every != "epoch" and total_steps is not None and total_steps < needed:
            raise ValueError(
                f"{name} with {num_stages} stages every {self.every} steps needs "
                f">= {needed} training steps; training has {total_steps}"
            )

    def on_train_begin(self, logs=None):
        model = self.model
        groups = layer_groups(model)
        names = self.groups if self.groups is not None else self._default_groups(model)
        unknown = [name for name in names if name not in groups]
        if unknown:
            raise ValueError(
                f"unknown layer group(s) {unknown}; expected names among {list(groups)}"
            )
        self._names = names
        self._stage_list = self._stages(names)
        epochs = self.params.get("epochs") if self.params else None
        steps = self.params.get("steps") if self.params else None
        # A tf.data pipeline of unknown length (length-bucketed batches) gives no `steps`: then
        # the `total_steps` the caller declared is the bound to check.
        total = epochs * steps if epochs is not None and steps else self.total_steps
        self._check_fits(
            len(self._stage_list), epochs if epochs is not None else self.epochs, total
        )
        self._check_optimizer(model, groups)
        self._step = 0
        self._stage = -1
        self._enter_stage(0, epoch=0)

    def _check_optimizer(self, model, groups):
        optimizer = model.optimizer
        if optimizer is None:
            return
        if not optimizer.built:
            # Keras builds it at the first step, on the weights trainable then; build it now on
            # every weight a later stage will train.
            variables = list(model.trainable_variables)
            keys = {id(v) for v in variables}
            for name in self._names:
                variables += [v for v in group_variables(groups[name]) if id(v) not in keys]
                keys.update(id(v) for v in variables)
            optimizer.build(variables)
            return
        missing = sorted(
            {
                name
                for name in self._names
                for variable in group_variables(groups[name])
                if not optimizer_knows(optimizer, variable)
            }
        )
        if missing:
            raise ValueError(
                f"the optimizer was built while group(s) {missing} were frozen, "
                "so it cannot train them later; unfreeze them before compile/fit "
                f"({type(self).__name__} freezes them itself at the start)"
            )

    def _enter_stage(self, stage, epoch):
        stage = min(stage, len(self._stage_list) - 1)
        if stage <= self._stage:
            return
        self._stage = stage
        trainable = self._stage_list[stage]
        frozen = [name for name in self._names if name not in trainable]
        if stage > 0 or self._freezes_at_start():
            # Freeze first: with shared (ALBERT) blocks the shared layer must end trainable.
            if frozen:
                freeze(self.model, frozen)
            unfreeze(self.model, trainable)
        self.model.make_train_function(force=True)
        self.history.append(
            {"epoch": epoch, "step": self._step, "stage": stage, "trainable": list(trainable)}
        )

    def _freezes_at_start(self):
        return True

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch
        if self.every == "epoch":
            self._enter_stage(epoch, epoch)

    def on_train_batch_begin(self, batch, logs=None):
        if self.every != "epoch":
            self._enter_stage(self._step // self.every, getattr(self, "_epoch", 0))

    def on_train_batch_end(self, batch, logs=None):
        self._step += 1


class GradualUnfreezing(_GroupSchedule):
    """ULMFiT's gradual unfreezing: the top group first, one more group per epoch or k steps.

    Stage 0 trains `groups[0]` (the head); stage `s` trains `groups[:s + 1]`. Stage `s` starts
    at epoch `s` (every="epoch") or at step `s * every`, and the last stage lasts to the end.
    Groups not listed are left as they are. `history` logs each change as
    `{"epoch", "step", "stage", "trainable"}`.

    Args:
        groups: list of group names, top first, or None (default): all groups of the model,
            top first (`head`, `pooler`, …, `block_0`, `embeddings`).
        every: "epoch" (default) or int >= 1, the steps between two unfreezings.
        start_frozen: bool, default True. Freeze every listed group but the first when training
            starts; with False the current flags stand until the first unfreezing.
        epochs: int or None. Training's epochs, to check the schedule fits now.
        total_steps: int or None. Training's steps, to check a step schedule fits now.

    Raises:
        ValueError: for a bad `every`, an empty `groups`, unknown group names (at
            `on_train_begin`), or a schedule that needs more epochs or steps than training has
            (at construction when `epochs`/`total_steps` and `groups` are given, else at
            `on_train_begin` from `fit`'s epochs and steps).

    Example:
    >>> from kbert.models import Encoder, SequenceClassifier
    >>> classifier = SequenceClassifier(Encoder.from_preset("tiny"), num_classes=2)
    >>> callback = GradualUnfreezing(every="epoch")
    >>> callback.required(len(layer_groups(classifier)))  # epochs for 5 groups
    5
    """

    def __init__(
        self, groups=None, every="epoch", start_frozen=True, epochs=None, total_steps=None
    ):
        self.start_frozen = bool(start_frozen)
        super().__init__(groups, every, epochs, total_steps)

    def _default_groups(self, model):
        return list(reversed(layer_groups(model)))

    def _stages(self, groups):
        return [groups[: stage + 1] for stage in range(len(groups))]

    def _freezes_at_start(self):
        return self.start_frozen


class ChainThaw(_GroupSchedule):
    """DeepMoji's chain-thaw: the head alone, each group alone, then all groups together.

    With groups `[g0, g1, …, gn]` the stages train `[g0]`, `[g1]`, …, `[gn]`, then all of them;
    every group not trained in a stage is frozen. Stage `s` starts at epoch `s`
    (every="epoch") or step `s * every`; the last (all together) lasts to the end.

    Args:
        groups: list of group names in thawing order, or None (default): `head` first (for a
            task model), then the others bottom to top (`embeddings`, `block_0`, …).
        every: "epoch" (default) or int >= 1, the steps each stage lasts.
        epochs: int or None. Training's epochs, to check the schedule fits now.
        total_steps: int or None. Training's steps, to check a step schedule fits now.

    Raises:
        ValueError: as `GradualUnfreezing`.

    Example:
    >>> callback = ChainThaw(["head", "pooler", "block_1"], every=10, total_steps=31)
    >>> callback.required(4)
    31
    """

    def __init__(self, groups=None, every="epoch", epochs=None, total_steps=None):
        super().__init__(groups, every, epochs, total_steps)

    def _default_groups(self, model):
        names = list(layer_groups(model))
        return ([HEAD] if HEAD in names else []) + [name for name in names if name != HEAD]

    def _stages(self, groups):
        return [[name] for name in groups] + [list(groups)]
