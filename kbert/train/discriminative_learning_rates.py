"""Discriminative (per-layer-group) learning rates.

Lower layers hold more general features and should move less (Howard & Ruder 2018, §3.2):
ULMFiT divides the rate by 2.6 per group going down; the layer-wise decay of BERT-era fine-tuning
multiplies it by ξ < 1 per layer. `layerwise_learning_rates` computes the rates, and
`DiscriminativeOptimizer` applies them: one inner optimizer per named layer group (see
`kbert.train.freezing.layer_groups`), each variable's gradient routed to its group's.
"""

import keras
import tensorflow as tf

from kbert.keras_internals import schedule_step
from kbert.train.fine_tuning import check_accumulation_steps
from kbert.train.freezing import HEAD, group_variables, layer_groups
from kbert.train.schedules import LearningRateSchedule


def layerwise_learning_rates(group_names, top_learning_rate, factor=2.6, decay=None):
    """Per-group rates falling geometrically from the top group down.

    With L the index of the top group, group l gets `top / factor ** (L - l)` (ULMFiT), or
    `top * decay ** (L - l)` when `decay` is given (layer-wise decay ξ).

    Args:
        group_names: list of str, bottom to top (e.g. `list(layer_groups(model))`).
        top_learning_rate: float > 0. The rate of the last (top) group.
        factor: float > 0, default 2.6. Ratio between a group's rate and the one below it.
        decay: float > 0 or None, default None. If given, overrides `factor` with `1 / decay`.

    Returns:
        dict group name → float learning rate, in `group_names` order.

    Raises:
        ValueError: for an empty or repeated `group_names`, or a rate, factor or decay <= 0.

    Example:
    >>> rates = layerwise_learning_rates(["embeddings", "block_0", "head"], 0.01, factor=2.0)
    >>> [round(rate, 6) for rate in rates.values()]
    [0.0025, 0.005, 0.01]
    """
    names = list(group_names)
    if not names or len(set(names)) != len(names):
        raise ValueError(f"group_names must be distinct names, bottom to top; received {names}")
    if not top_learning_rate > 0:
        raise ValueError(f"top_learning_rate must be > 0; received {top_learning_rate!r}")
    if decay is not None:
        if not decay > 0:
            raise ValueError(f"decay must be > 0; received {decay!r}")
        ratio = 1.0 / decay
    else:
        if not factor > 0:
            raise ValueError(f"factor must be > 0; received {factor!r}")
        ratio = float(factor)
    top = len(names) - 1
    return {name: top_learning_rate / ratio ** (top - index) for index, name in enumerate(names)}


def layerwise_schedules(
    group_names, schedule, peak_learning_rate, factor=2.6, decay=None, **arguments
):
    """One `LearningRateSchedule` per group, its peak scaled as `layerwise_learning_rates`.

    The schedules of `kbert.train.schedules` are linear in their peak, so every step's rate
    keeps the configured ratio between groups (e.g. STLR per group, as ULMFiT trains).

    Args:
        group_names: list of str, bottom to top.
        schedule: str. A `kbert.train.LearningRateSchedule` name, e.g. "slanted_triangular".
        peak_learning_rate: float > 0. The top group's peak.
        factor: float > 0, default 2.6. As `layerwise_learning_rates`.
        decay: float > 0 or None. As `layerwise_learning_rates`.
        **arguments: the schedule's other arguments (`total_steps`, …).

    Returns:
        dict group name → `LearningRateSchedule`.

    Raises:
        ValueError: as `layerwise_learning_rates`, or for a bad schedule.

    Example:
    >>> schedules = layerwise_schedules(["block_0", "head"], "slanted_triangular", 0.01,
    ...                                 factor=2.0, total_steps=100)
    >>> round(float(schedules["block_0"](10)), 6)
    0.005
    """
    peaks = layerwise_learning_rates(group_names, peak_learning_rate, factor=factor, decay=decay)
    return {
        name: LearningRateSchedule(schedule, peak_learning_rate=peak, **arguments)
        for name, peak in peaks.items()
    }


def _resolve_groups(groups):
    """(ordered dict name → layers, model or None) from a model or a dict of groups."""
    if isinstance(groups, dict):
        if not groups:
            raise ValueError("groups must name at least one layer group; received {}")
        return {name: list(layers) for name, layers in groups.items()}, None
    if isinstance(groups, keras.Model):
        return layer_groups(groups), groups
    raise ValueError(
        "groups must be a kbert Encoder, a task model, or a dict of group name → "
        f"layers; received {type(groups).__name__}"
    )


class DiscriminativeOptimizer(keras.optimizers.Optimizer):
    """Routes each variable's gradient to its layer group's own optimizer and learning rate.

    One inner optimizer per group is made by `base_optimizer_factory(learning_rate)`, so each
    group keeps its own Adam moments and step count (a group unfrozen late starts with a fresh
    bias correction). A group's schedule is called with the step Keras gives this optimizer's
    own schedule (see `gradient_accumulation_steps`), not the inner optimizer's count, so all
    groups stay on one clock and a group unfrozen late takes the rate the others are at. This
    optimizer's own `learning_rate` (the one `keras.callbacks.TensorBoard` logs) is the top
    group's. Every group is built up front, frozen or not, so `GradualUnfreezing` and
    `ChainThaw` can unfreeze them mid-`fit`. Variables in no group (none, for a kbert task
    model) go to the `head` group, or to the top group if there is no `head`; a variable in
    several groups (a shared ALBERT block) goes to the lowest.

    Args:
        groups: an `Encoder`, a task model, or a dict (ordered bottom to top) of group name →
            list of layers.
        base_optimizer_factory: callable taking a learning rate (float or a no-argument
            callable) and returning a fresh `keras.optimizers.Optimizer`, e.g.
            `lambda lr: FusedAdamW(lr, weight_decay=0.01)` (`kbert.train.FusedAdamW`).
        learning_rates: dict group name → float or `LearningRateSchedule`, one per group
            (see `layerwise_learning_rates`, `layerwise_schedules`).
        clipnorm: float or None. Per-variable clipping, before routing.
        global_clipnorm: float or None. Clipping by the norm over all groups, before routing.
        gradient_accumulation_steps: int >= 1, default 1. Average this many batches'
            gradients before each update (clipped, then routed, as one batch would be). As a
            Keras optimizer does, this one calls every group's schedule with the batch count,
            so update k (from 0) of a `LearningRateSchedule(steps_per_update=N)` uses its rate
            at step k, exactly as a plain optimizer with the same schedule and accumulation
            would. A group unfrozen in the middle of a window contributes the batches it saw,
            divided by N.
        name: str, default "discriminative_optimizer".

    Raises:
        ValueError: for unknown or missing group names in `learning_rates`, or a factory that
            does not return an optimizer.

    Example:
    >>> from kbert.models import Encoder, SequenceClassifier
    >>> classifier = SequenceClassifier(Encoder.from_preset("tiny"), num_classes=2)
    >>> rates = layerwise_learning_rates(list(layer_groups(classifier)), 1e-3)
    >>> optimizer = DiscriminativeOptimizer(classifier, keras.optimizers.Adam, rates)
    >>> classifier.compile(optimizer=optimizer, loss=classifier.default_loss())
    """

    def __init__(
        self,
        groups,
        base_optimizer_factory,
        learning_rates,
        clipnorm=None,
        global_clipnorm=None,
        gradient_accumulation_steps=1,
        name="discriminative_optimizer",
        **kwargs,
    ):
        accumulation = check_accumulation_steps(gradient_accumulation_steps)
        group_layers, model = _resolve_groups(groups)
        rates = dict(learning_rates)
        unknown = [key for key in rates if key not in group_layers]
        missing = [key for key in group_layers if key not in rates]
        if unknown or missing:
            raise ValueError(
                f"learning_rates must have one entry per layer group "
                f"{list(group_layers)}; unknown: {unknown}, missing: {missing}"
            )
        for key, rate in rates.items():
            if not isinstance(rate, keras.optimizers.schedules.LearningRateSchedule) and not (
                isinstance(rate, (int, float)) and rate >= 0
            ):
                raise ValueError(
                    f"learning rate of group {key!r} must be a float >= 0 or a "
                    f"LearningRateSchedule; received {rate!r}"
                )
        top = HEAD if HEAD in group_layers else list(group_layers)[-1]
        super().__init__(
            learning_rate=rates[top],
            clipnorm=clipnorm,
            global_clipnorm=global_clipnorm,
            gradient_accumulation_steps=accumulation if accumulation > 1 else None,
            name=name,
            **kwargs,
        )
        self._group_layers = group_layers
        self._model_for_groups = model
        self._top_group = top
        self._rates = rates
        self._inner = {}
        for key, rate in rates.items():
            inner = base_optimizer_factory(self._inner_rate(rate))
            if not isinstance(inner, keras.optimizers.Optimizer):
                raise ValueError(
                    "base_optimizer_factory must return a keras Optimizer; "
                    f"received {type(inner).__name__}"
                )
            self._inner[key] = inner
        self._inner_list = list(self._inner.values())  # tracked for checkpoints

    def _inner_rate(self, rate):
        if isinstance(rate, keras.optimizers.schedules.LearningRateSchedule):
            # The count Keras gives this optimizer's own schedule: batches, not updates, under
            # accumulation (`self.iterations` counts updates, and `steps_per_update` would
            # divide it again). The inner optimizer's own count stops while its group is frozen.
            return lambda: rate(schedule_step(self))
        return rate

    @property
    def group_optimizers(self):
        """dict group name → its inner optimizer."""
        return dict(self._inner)

    def group_of(self, variable):
        """The group name whose optimizer updates `variable` (after `build`)."""
        return self._group_by_key[id(variable)]

    def build(self, variables):
        by_key = {}
        assigned = {key: [] for key in self._group_layers}
        for key, layers in self._group_layers.items():
            for variable in group_variables(layers):
                if id(variable) not in by_key:
                    by_key[id(variable)] = key
                    assigned[key].append(variable)
        extra = list(variables)
        if self._model_for_groups is not None:
            extra += group_variables([self._model_for_groups])
        for variable in extra:
            if id(variable) not in by_key:
                by_key[id(variable)] = self._top_group
                assigned[self._top_group].append(variable)
        for key, inner in self._inner.items():
            if assigned[key] and not inner.built:
                inner.build(assigned[key])
        self._group_by_key = by_key
        super().build([v for key in assigned for v in assigned[key]])

    @property
    def variables(self):
        # Includes the inner optimizers' state, so saving and loading round-trips it.
        result = list(super().variables)
        for inner in self._inner.values():
            result.extend(inner.variables)
        return result

    def apply(self, grads, trainable_variables=None):
        # Embedding lookups give sparse slices with a row per occurrence; summed to a dense
        # gradient first, so each group's Adam sees the batch's gradient as one tensor (as it
        # does after accumulation) rather than repeated rows.
        grads = [None if g is None else tf.convert_to_tensor(g) for g in grads]
        if trainable_variables is None:  # the variables it was built with, as Keras does
            super().apply(grads)
            return
        trainable_variables = list(trainable_variables)
        if not self.built:
            self.build(trainable_variables)
        unknown = [v.path for v in trainable_variables if id(v) not in self._group_by_key]
        if unknown:
            raise ValueError(
                f"variables {unknown} were not known when this optimizer was "
                "built; make a new optimizer for a new set of variables"
            )
        # Keras unscales, accumulates (`gradient_accumulation_steps`) and clips the gradients
        # of all groups together, then calls `_backend_update_step` below once per update.
        super().apply(grads, trainable_variables)

    def _backend_update_step(self, grads, trainable_variables, learning_rate):
        """Hands each group's (unscaled, accumulated, clipped) gradients to its optimizer."""
        routed = {key: ([], []) for key in self._inner}
        for grad, variable in zip(grads, trainable_variables, strict=True):
            group_grads, group_vars = routed[self._group_by_key[id(variable)]]
            group_grads.append(grad)
            group_vars.append(variable)
        for key, (group_grads, group_vars) in routed.items():
            if group_vars:
                self._inner[key].apply(group_grads, group_vars)

    def update_step(self, gradient, variable, learning_rate):
        raise NotImplementedError("DiscriminativeOptimizer updates through its group optimizers")

    def get_config(self):
        raise NotImplementedError(
            "DiscriminativeOptimizer holds layers and a factory and is not serializable; save "
            "the model's weights and build a new optimizer when reloading"
        )
